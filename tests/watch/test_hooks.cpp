// SPDX-License-Identifier: MIT
// forewarn-watch's hooks at their own layer (tools/watch/hooks.hpp, platform/process.hpp): one
// process per change with the change as data (stdin, FOREWARN_* variables), its exit code, its
// deadline ending its whole process group, its output logged; the runner's once-per-key rule and
// its journal across a restart. The agent's end-to-end cases (tests/integration/test_watch.cpp)
// drive the same through the program.
#include "hooks.hpp"

#include "catch.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <sys/types.h>

namespace test_hooks {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn_test::temp_dir;
using watch::hook_outcome;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A hook run to its end, its log lines kept.
struct ran {
    hook_outcome outcome;
    std::vector<std::string> log;
};
ran run(const std::string& command, const std::string& input = {}, std::vector<std::string> env = {},
        std::chrono::milliseconds bound = 20s) {
    std::atomic<bool> stop{false};
    ran r;
    r.outcome = watch::run_hook(command, input, env, std::chrono::steady_clock::now() + bound, stop,
                                [&](std::string_view line) { r.log.emplace_back(line); });
    return r;
}

// Whether process `pid` is gone (or a zombie, its exit not yet reaped by init).
bool gone(const std::string& pid) {
    std::ifstream stat("/proc/" + pid + "/stat");
    if (!stat) return true;
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

forewarn::change sample_change() {
    forewarn::change c;
    c.kind = forewarn::change_kind::prepare;
    c.event.id = "EV-1";
    c.event.type = forewarn::event_type::reboot;
    c.event.raw_type = "Reboot";
    c.event.status = forewarn::event_status::scheduled;
    c.event.resources = {"vm0", "vm1"};
    return c;
}

// The outcome a runner's `done` got, waited for with a bound.
struct awaited {
    std::mutex m;
    std::condition_variable cv;
    std::vector<hook_outcome> got;
    watch::hook_runner::done_fn fn() {
        return [this](const hook_outcome& o) {
            std::lock_guard<std::mutex> lock(m);
            got.push_back(o);
            cv.notify_all();
        };
    }
    bool wait_for(std::size_t n, std::chrono::milliseconds bound = 20s) {
        std::unique_lock<std::mutex> lock(m);
        return cv.wait_for(lock, bound, [&] { return got.size() >= n; });
    }
};

}  // namespace

TEST_CASE("a hook's exit code: 0 succeeded, any other failed with its code, a signal as its negative") {
    const auto ok = run("exit 0");
    CHECK(ok.outcome.what == hook_outcome::kind::succeeded);
    CHECK(ok.outcome.exit_code == 0);
    const auto three = run("exit 3");
    CHECK(three.outcome.what == hook_outcome::kind::failed);
    CHECK(three.outcome.exit_code == 3);
    const auto killed = run("kill -TERM $$");
    CHECK(killed.outcome.what == hook_outcome::kind::failed);
    CHECK(killed.outcome.exit_code == -SIGTERM);
    const auto missing = run("/nonexistent/forewarn-hook");
    CHECK(missing.outcome.what == hook_outcome::kind::failed);
    CHECK(missing.outcome.exit_code == 127);  // the shell's "not found"
}

TEST_CASE("a hook gets the change as data only: its JSON line on stdin, the event's fields in FOREWARN_ variables") {
    temp_dir dir("hooks-data");
    const std::string out = dir.file("seen");
    // A change whose fields a shell would run if they were spliced into the command line.
    forewarn::change c = sample_change();
    c.event.id = "$(touch " + dir.file("spliced") + ")";
    const auto env = watch::hook_environment("prepare", c, "azure");
    const auto r = run("cat > '" + out + "'; printf '%s|%s|%s|%s' \"$FOREWARN_HOOK\" \"$FOREWARN_EVENT_ID\" \"$FOREWARN_EVENT_TYPE\" "
                       "\"$FOREWARN_RESOURCES\" >> '" + out + "'",
                       "{\"line\":1}\n", env);
    REQUIRE(r.outcome.what == hook_outcome::kind::succeeded);
    CHECK(slurp(out) == "{\"line\":1}\nprepare|" + c.event.id + "|reboot|vm0,vm1");
    CHECK_FALSE(std::ifstream(dir.file("spliced")).good());  // never run
}

TEST_CASE("hook_environment: every FOREWARN_ variable, a recover's reason, and no NUL byte passed on") {
    forewarn::change c = sample_change();
    c.event.raw_type = std::string("Re\0boot", 7);
    auto env = watch::hook_environment("prepare", c, "gce");
    CHECK(std::find(env.begin(), env.end(), "FOREWARN_EVENT_RAW_TYPE=Reboot") != env.end());
    CHECK(std::find(env.begin(), env.end(), "FOREWARN_CLOUD=gce") != env.end());
    CHECK(std::find(env.begin(), env.end(), "FOREWARN_CHANGE=prepare") != env.end());
    CHECK(std::find(env.begin(), env.end(), "FOREWARN_REASON=") != env.end());  // only a recover has one
    for (const auto& v : env) CHECK(v.find('\0') == std::string::npos);
    c.kind = forewarn::change_kind::recover;
    c.reason = forewarn::recover_reason::completed;
    env = watch::hook_environment("recover", c, "gce");
    CHECK(std::find(env.begin(), env.end(), "FOREWARN_REASON=completed") != env.end());
}

TEST_CASE("a hook past its deadline is timed out, and its whole process group with it, a child in the background too") {
    temp_dir dir("hooks-deadline");
    const std::string pid_file = dir.file("child.pid");
    const auto r = run("sleep 60 & echo $! > '" + pid_file + "'; wait", {}, {}, 500ms);
    CHECK(r.outcome.what == hook_outcome::kind::timed_out);
    CHECK(r.outcome.took < 20s);
    std::string pid = slurp(pid_file);
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    REQUIRE_FALSE(pid.empty());
    bool child_gone = false;
    for (int i = 0; i < 100 && !child_gone; ++i) {  // SIGTERM, then SIGKILL: at most a few seconds
        child_gone = gone(pid);
        if (!child_gone) std::this_thread::sleep_for(50ms);
    }
    CHECK(child_gone);
}

TEST_CASE("a hook's output reaches the log line by line, the last line without its newline too") {
    const auto r = run("echo one; echo two; printf three");
    REQUIRE(r.outcome.what == hook_outcome::kind::succeeded);
    CHECK(r.log == std::vector<std::string>{"one", "two", "three"});
}

TEST_CASE("hook_runner: a key runs once - a second request waits for the run in progress, a later one gets its outcome",
          "[threads]") {
    temp_dir dir("hooks-once");
    const std::string count = dir.file("count");
    const std::string command = "echo x >> '" + count + "'; sleep 0.3";
    std::vector<std::string> log;
    std::mutex log_m;
    watch::hook_runner runner(watch::hook_journal(), [&](std::string_view l) {
        std::lock_guard<std::mutex> lock(log_m);
        log.emplace_back(l);
    }, nullptr);
    awaited first, second, later;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    runner.run("prepare:A", "prepare", command, "{}\n", {}, deadline, first.fn());
    runner.run("prepare:A", "prepare", command, "{}\n", {}, deadline, second.fn());  // while the first runs
    REQUIRE(first.wait_for(1));
    REQUIRE(second.wait_for(1));
    runner.run("prepare:A", "prepare", command, "{}\n", {}, deadline, later.fn());
    REQUIRE(later.wait_for(1));
    CHECK(later.got[0].what == hook_outcome::kind::succeeded);
    CHECK(slurp(count) == "x\n");  // one process in all
    runner.forget({"prepare:A"});  // a new occurrence of the id: it runs again
    awaited again;
    runner.run("prepare:A", "prepare", command, "{}\n", {}, deadline, again.fn());
    REQUIRE(again.wait_for(1));
    runner.stop();
    CHECK(slurp(count) == "x\nx\n");
}

TEST_CASE("hook_runner's journal: a run that ended is not run again after a restart, one that was running is",
          "[threads]") {
    temp_dir dir("hooks-journal");
    const std::string journal = dir.file("state.json.hooks");
    const std::string count = dir.file("count");
    const std::string command = "echo x >> '" + count + "'";
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    {
        watch::hook_journal j(journal);
        REQUIRE(j.load().empty());
        watch::hook_runner runner(std::move(j), [](std::string_view) {}, nullptr);
        awaited done;
        runner.run("prepare:A", "prepare", command, "{\"a\":1}\n", {}, deadline, done.fn());
        REQUIRE(done.wait_for(1));
        runner.stop();
    }
    {
        // An agent killed while B's hook ran left it pending.
        watch::hook_journal j(journal);
        REQUIRE(j.load().empty());
        REQUIRE(j.find("prepare:A"));
        CHECK(j.find("prepare:A")->state == "done");
        REQUIRE(j.set("prepare:B", {"pending", "prepare", "{\"b\":1}\n", {}}).empty());
    }
    watch::hook_journal j(journal);
    REQUIRE(j.load().empty());
    watch::hook_runner runner(std::move(j), [](std::string_view) {}, nullptr);
    awaited a, b;
    runner.run("prepare:A", "prepare", command, "{\"a\":1}\n", {}, deadline, a.fn());  // exactly once
    REQUIRE(a.wait_for(1));
    CHECK(a.got[0].what == hook_outcome::kind::succeeded);
    runner.resume({"prepare"}, [&](const std::string& key, const watch::hook_journal::entry& e) {
        watch::hook_runner::resumed r;
        if (key == "prepare:B") {
            CHECK(e.input == "{\"b\":1}\n");  // the change it had, again
            r.command = command;
            r.deadline = deadline;
            r.done = b.fn();
        }
        return r;
    });
    REQUIRE(b.wait_for(1));
    runner.stop();
    CHECK(slurp(count) == "x\nx\n");  // A once before the restart, B again after it
}

}  // namespace test_hooks
