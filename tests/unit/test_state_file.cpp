// SPDX-License-Identifier: MIT
// state_file.hpp: the poller's state on disk, its format, and the first version's format.
#include <forewarn/state_file.hpp>
#include <forewarn/testing/file_faults.hpp>

#include "catch.hpp"
#include "temp_dir.hpp"

#include <cerrno>
#include <chrono>
#include <filesystem>
#if defined(_WIN32)
#include <forewarn/platform/windows.hpp>
#else
#include <csignal>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#include <fstream>
#include <string>
#include <vector>

namespace test_state_file {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::poller_state;
using forewarn::saved_event;
using forewarn::state_file;

namespace {

poller_state sample() {
    poller_state st;
    st.delivered.origin = forewarn::cloud::azure;
    st.delivered.incarnation = "5";
    forewarn::event e;
    e.id = "A";
    e.type = forewarn::event_type::reboot;
    e.raw_type = "Reboot";
    e.status = forewarn::event_status::scheduled;
    e.raw_status = "Scheduled";
    e.resources = {"vm_0"};
    e.not_before = std::chrono::system_clock::time_point(1700000000s) + 1500ms;
    e.source = forewarn::event_source::user;
    e.raw_source = "User";
    e.duration_in_seconds = -1;
    st.delivered.events.push_back(e);
    saved_event s;
    s.id = "A";
    s.first_seen = std::chrono::system_clock::time_point(1699999000s) + 125ms;
    s.last_seen = std::chrono::system_clock::time_point(1699999990s);
    s.last_seen_service = std::chrono::system_clock::time_point(1699999991s);
    s.seen_started = false;
    s.approved = true;
    s.ready = true;
    s.boot_id = "0e6f2c1a-6a6e-4c4e-9a55-0a1b2c3d4e5f";
    st.events.push_back(s);
    st.coordinator = "{\"lease\":\"7587862231446424834\"}";
    return st;
}

}  // namespace

TEST_CASE("state_file: every field survives the round trip", "[state]") {
    const auto st = sample();
    auto text = state_file::write(st);
    REQUIRE(text);
    CHECK(text->rfind(R"({"format":"forewarn-state/2","cloud":"azure","incarnation":"5","events":[{"id":"A")", 0) == 0);
    auto back = state_file::read(*text);
    REQUIRE(back);
    CHECK(back->delivered == st.delivered);
    REQUIRE(back->events.size() == 1);
    const auto& s = back->events[0];
    CHECK(s.first_seen == st.events[0].first_seen);
    CHECK(s.last_seen == st.events[0].last_seen);
    CHECK(s.last_seen_service == st.events[0].last_seen_service);
    CHECK(s.approved);
    CHECK(s.ready);
    CHECK_FALSE(s.seen_started);
    CHECK(s.boot_id == st.events[0].boot_id);
    CHECK(back->coordinator == st.coordinator);
}

TEST_CASE("state_file: the first version's files are read", "[state]") {
    const std::string v1 =
        R"({"format":"forewarn-state/1","cloud":"azure","incarnation":"5","events":[{"id":"A","type":"reboot",)"
        R"("raw_type":"Reboot","status":"scheduled","raw_status":"Scheduled","resource_type":"VirtualMachine",)"
        R"("resources":["vm_0"],"not_before_ns":1649716018000000000,"description":"d","source":"user",)"
        R"("raw_source":"User","duration_s":-1}],"approved":["A"]})";
    auto st = state_file::read(v1);
    REQUIRE(st);
    REQUIRE(st->delivered.events.size() == 1);
    const auto& e = st->delivered.events[0];
    CHECK(e.not_before == std::chrono::system_clock::time_point(1649716018s));
    CHECK(e.source == forewarn::event_source::user);
    CHECK(e.duration_in_seconds == -1);
    REQUIRE(st->events.size() == 1);
    CHECK(st->events[0].approved);
}

TEST_CASE("state_file: a broken or foreign file is a clear error", "[state]") {
    CHECK(state_file::read("").error().code == forewarn::errc::parse_error);
    CHECK(state_file::read(R"({"format":"forewarn-state/9","events":[]})").error().field == "format");
    CHECK(state_file::read(R"({"format":"forewarn-state/2"})").error().field == "events");
    auto bad = state_file::read(R"({"format":"forewarn-state/2","events":[],"tracked":[{"id":"A","approved":"yes"}]})");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().field == "tracked[0].approved");
}

TEST_CASE("state_file: save and load through a file - no file is not_found", "[state]") {
    forewarn_test::temp_dir dir("state_file");
    const auto path = dir.path / "state.json";
    state_file f(path.string());
    auto none = f.load();
    REQUIRE_FALSE(none);
    CHECK(none.error().code == forewarn::errc::not_found);
    REQUIRE(f.save(sample()));
    auto st = f.load();
    REQUIRE(st);
    CHECK(st->delivered == sample().delivered);
}

TEST_CASE("state_file: a write replaces the whole file or nothing - no temporary file is left", "[state][file_io]") {
    forewarn_test::temp_dir scratch("file_io");
    const auto& dir = scratch.path;
    const auto path = dir / "state.json";
    REQUIRE(forewarn::platform::write_file_atomically(path, "first"));
    REQUIRE(forewarn::platform::write_file_atomically(path, "second, longer"));
    CHECK(forewarn::platform::read_small_file(path).value() == "second, longer");
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        INFO(entry.path().string());
        CHECK(entry.path() == path);
        ++files;
    }
    CHECK(files == 1);

    // A directory that cannot be written (a missing one here): a clear error, the old file intact.
    auto failed = forewarn::platform::write_file_atomically(dir / "missing" / "state.json", "lost");
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == forewarn::errc::io_error);
    CHECK(failed.error().message.find("cannot create") != std::string::npos);
    CHECK(forewarn::platform::read_small_file(path).value() == "second, longer");
}

TEST_CASE("state_file: a save writes a temporary file, flushes it, renames it over, then flushes the directory",
          "[state][file_io]") {
    forewarn_test::temp_dir scratch("steps");
    const auto& dir = scratch.path;
    const auto path = dir / "state.json";
    using step = forewarn::platform::file_step;
    forewarn::testing::file_faults seam;
    REQUIRE(state_file(path.string()).save(sample()));
    const auto calls = seam.calls();
#if defined(_WIN32)
    // MoveFileExW's write-through makes the rename durable: no directory to flush.
    const std::vector<step> expected{step::create, step::write, step::flush_file, step::close, step::rename};
#else
    const std::vector<step> expected{step::create,     step::write,  step::flush_file,
                                     step::close,      step::rename, step::flush_directory};
#endif
    REQUIRE(seam.steps() == expected);
    const auto tmp = calls.front().path;
    CHECK(tmp.parent_path() == dir);  // beside the file: the rename never crosses file systems
    CHECK(tmp.filename().string().rfind("state.json.tmp-", 0) == 0);
    CHECK(calls[1].path == tmp);
    CHECK(calls[1].bytes == forewarn::platform::read_small_file(path).value().size());
    CHECK(calls[2].path == tmp);
    CHECK(calls[4].path == path);
#if !defined(_WIN32)
    CHECK(calls[5].path == dir);  // the directory holding the new name, after the rename
#endif
}

TEST_CASE("state_file: a save failing at any step leaves the previous file whole, readable, and nothing beside it",
          "[state][file_io]") {
    using step = forewarn::platform::file_step;
    struct variant {
        step at;
        int error_number;
        std::size_t after_bytes;
    };
    const variant variants[] = {
        {step::create, EACCES, 0}, {step::write, ENOSPC, 0},     {step::write, ENOSPC, 10},
        {step::flush_file, EIO, 0}, {step::close, EIO, 0}, {step::rename, EXDEV, 0},
    };
    for (const auto& v : variants) {
        const std::string name(forewarn::platform::to_string(v.at));
        DYNAMIC_SECTION(name << " fails with errno " << v.error_number << " after " << v.after_bytes << " bytes") {
            forewarn_test::temp_dir scratch("fail-" + name);
            const auto& dir = scratch.path;
            const auto path = dir / "state.json";
            state_file f(path.string());
            REQUIRE(f.save(sample()));
            const std::string before = forewarn::platform::read_small_file(path).value();
            poller_state next = sample();
            next.delivered.incarnation = "99";
            forewarn::testing::file_faults seam;
            seam.fail(v.at, v.error_number, v.after_bytes);
            auto r = f.save(next);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == forewarn::errc::io_error);
            INFO(r.error().message);
            CHECK(r.error().message.find(std::generic_category().message(v.error_number)) != std::string::npos);
            CHECK(forewarn::platform::read_small_file(path).value() == before);
            auto loaded = f.load();
            REQUIRE(loaded);
            CHECK(loaded->delivered == sample().delivered);
            std::size_t files = 0;
            for (const auto& entry : std::filesystem::directory_iterator(dir)) {
                INFO(entry.path().string());
                CHECK(entry.path() == path);  // the temporary file is gone
                ++files;
            }
            CHECK(files == 1);
            // The next save, with nothing failing, goes through.
            REQUIRE(f.save(next));
            CHECK(f.load().value().delivered.incarnation == "99");
        }
    }
}

#if !defined(_WIN32)
TEST_CASE("state_file: a failed flush of the directory after the rename is reported - the new file is in place",
          "[state][file_io]") {
    forewarn_test::temp_dir scratch("dirsync");
    const auto& dir = scratch.path;
    const auto path = dir / "state.json";
    state_file f(path.string());
    REQUIRE(f.save(sample()));
    poller_state next = sample();
    next.delivered.incarnation = "99";
    forewarn::testing::file_faults seam;
    seam.fail(forewarn::platform::file_step::flush_directory, EIO);
    auto r = f.save(next);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == forewarn::errc::io_error);
    CHECK(r.error().message.find("cannot flush") != std::string::npos);
    // The rename happened: the file is whole and new (only a power cut now could bring the old
    // one back); the poller, told of the error, saves again at its next change.
    CHECK(f.load().value().delivered.incarnation == "99");
}

TEST_CASE("state_file: a write cut off partway (the file-size limit) leaves the previous file whole and readable",
          "[state][file_io]") {
    forewarn_test::temp_dir scratch("fsize");
    const auto& dir = scratch.path;
    const auto path = dir / "state.json";
    REQUIRE(state_file(path.string()).save(sample()));
    const std::string before = forewarn::platform::read_small_file(path).value();
    // In a child: a file-size limit far below the new text, SIGXFSZ ignored (as forewarn-watch
    // does), so the write stops partway with EFBIG.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        auto r = forewarn::platform::write_file_atomically(path, std::string(256 * 1024, 'x'));
        ::_exit(r ? 0 : r.error().code == forewarn::errc::io_error ? 42 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 42);  // a clear io_error, not a death by SIGXFSZ
    CHECK(forewarn::platform::read_small_file(path).value() == before);
    CHECK(state_file(path.string()).load());
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        INFO(entry.path().string());
        CHECK(entry.path() == path);  // the partial temporary file was removed
        ++files;
    }
    CHECK(files == 1);
}
#endif

TEST_CASE("state_file: loading removes the temporary files of writes a crash cut short, not a running process's",
          "[state][file_io]") {
    forewarn_test::temp_dir scratch("stale");
    const auto& dir = scratch.path;
    const auto path = dir / "state.json";
    REQUIRE(state_file(path.string()).save(sample()));
#if defined(_WIN32)
    const unsigned long long self = ::GetCurrentProcessId();
    const unsigned long long dead = 4294967292ULL;  // a process id no process has
#else
    const unsigned long long self = static_cast<unsigned long long>(::getpid());
    const pid_t child = ::fork();  // a process that ran and is gone: its id is free
    REQUIRE(child >= 0);
    if (child == 0) ::_exit(0);
    REQUIRE(::waitpid(child, nullptr, 0) == child);
    const auto dead = static_cast<unsigned long long>(child);
#endif
    const auto stale = dir / ("state.json.tmp-" + std::to_string(dead) + "-3");
    const auto live = dir / ("state.json.tmp-" + std::to_string(self) + "-9");
    const auto others = {dir / "state.json.tmp-x-1", dir / ("other.json.tmp-" + std::to_string(dead) + "-1")};
    for (const auto& p : {stale, live}) std::ofstream(p) << "half";
    for (const auto& p : others) std::ofstream(p) << "not ours";
    REQUIRE(state_file(path.string()).load());
    CHECK_FALSE(std::filesystem::exists(stale));
    CHECK(std::filesystem::exists(live));  // a write in progress in a running process
    for (const auto& p : others) CHECK(std::filesystem::exists(p));
}

TEST_CASE("state_file: a path with non-ASCII characters is the file of that name", "[state][file_io]") {
    forewarn_test::temp_dir scratch("utf8");
    const auto& dir = scratch.path;
    const std::string name = forewarn::platform::utf8_name(dir) + "/\xc3\xa9tat-Z\xc3\xbcrich-\xe6\x9d\xb1\xe4\xba\xac.json";
    state_file f(name);
    REQUIRE(f.save(sample()));
    // The file is there under its real (Unicode) name, not a code page's reading of the bytes.
    const auto expected = forewarn::platform::path_from_utf8(name);
    CHECK(std::filesystem::exists(expected));
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        CHECK(entry.path().filename() == expected.filename());
        ++files;
    }
    CHECK(files == 1);
    auto st = f.load();
    REQUIRE(st);
    CHECK(st->delivered == sample().delivered);
}

}  // namespace test_state_file
