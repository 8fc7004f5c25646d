// SPDX-License-Identifier: MIT
// forewarn-watch as the integration tests meet it: the agent started as a child process (this
// build's, or forewarn-watch.exe under Wine when FOREWARN_WATCH_EXE is set) against
// forewarn-emulator, its output captured line by line, and what the emulator saw. Used by
// test_watch.cpp (one agent at a time) and test_fleet_safety.cpp (a fleet of them).
#pragma once

#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/json.hpp>

#include "catch.hpp"
#include "emulator_process.hpp"
#include "temp_dir.hpp"

#include <httplib.h>

#include <fcntl.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(FOREWARN_WATCH_PATH) && defined(FOREWARN_EMULATOR_PATH)

namespace forewarn_test {
namespace agent {

using namespace std::chrono_literals;
using strings = std::vector<std::string>;
using forewarn_test::emulator_process;


/// forewarn-watch.exe when the Windows agent is under test (FOREWARN_WATCH_EXE), else nothing.
inline const char* windows_agent() {
    const char* exe = std::getenv("FOREWARN_WATCH_EXE");
    return exe != nullptr && *exe != '\0' ? exe : nullptr;
}

/// The command that starts the agent under test: this build's, or the Windows one under Wine
/// (FOREWARN_WINE, default /usr/bin/wine).
inline strings agent_command() {
    if (const char* exe = windows_agent()) {
        const char* wine = std::getenv("FOREWARN_WINE");
        return {wine != nullptr && *wine != '\0' ? wine : "/usr/bin/wine", exe};
    }
    return {FOREWARN_WATCH_PATH};
}

/// How long the agent may take to say it is watching: a Wine prefix's first start takes ~20 s.
inline std::chrono::seconds agent_start() { return windows_agent() ? 90s : 10s; }

/// A file's path as the agent names it: under Wine, drive Z: is the Linux root.
inline std::string agent_path(std::string path) {
    if (!windows_agent()) return path;
    for (auto& c : path)
        if (c == '/') c = '\\';
    return "Z:" + path;
}

/// A child process with its stdout and stderr captured line by line; killed (SIGKILL) and reaped
/// at scope exit if still running, so a failing test leaves nothing behind.
class child_process {
public:
    explicit child_process(std::vector<std::string> args) {
        int out[2], err[2];
        if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        // fork and exec rather than posix_spawn: the child asks for SIGKILL when the test program
        // dies (PR_SET_PDEATHSIG, Linux), so a test killed mid-run leaves no agent polling on.
        // Only async-signal-safe calls after fork(); the program's path is checked before.
        const bool runnable = ::access(args[0].c_str(), X_OK) == 0;
        const pid_t parent = ::getpid();
        pid_ = runnable ? ::fork() : -1;
        if (pid_ == 0) {
#ifdef __linux__
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) ::_exit(127);
#endif
            ::dup2(out[1], STDOUT_FILENO);
            ::dup2(err[1], STDERR_FILENO);
            ::execve(args[0].c_str(), argv.data(), environ);
            ::_exit(127);
        }
        (void)parent;
        ::close(out[1]);
        ::close(err[1]);
        if (pid_ < 0) {
            ::close(out[0]);
            ::close(err[0]);
            throw std::runtime_error("cannot start " + args[0]);
        }
        readers_.emplace_back([this, fd = out[0]] { drain(fd, out_); });
        readers_.emplace_back([this, fd = err[0]] { drain(fd, err_); });
        waiter_ = std::thread([this] {
            int status = 0;
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
            std::lock_guard<std::mutex> lock(mutex_);
            status_ = status;
            cv_.notify_all();
        });
    }
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;
    ~child_process() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!status_) ::kill(pid_, SIGKILL);
        }
        waiter_.join();
        for (auto& t : readers_) t.join();
    }

    void signal(int sig) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!status_) ::kill(pid_, sig);
    }

    /// Asks the agent to stop as its platform does: SIGTERM (systemd's stop) on Linux; Ctrl+C on
    /// Windows, which Wine delivers from SIGINT as the console's control event (Wine ends a
    /// process outright on SIGTERM, as Windows has no such signal).
    void stop() { signal(windows_agent() ? SIGINT : SIGTERM); }

    /// The exit code once it exited normally, -1 when killed by a signal; nothing after `timeout`.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(mutex_);
        // Exited, and both pipes drained: what it printed is all there.
        if (!cv_.wait_for(lock, timeout, [&] { return status_.has_value() && eof_ == 2; })) return std::nullopt;
        return WIFEXITED(*status_) ? WEXITSTATUS(*status_) : -1;
    }

    bool wait_for_lines(std::size_t n, std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, timeout, [&] { return out_.size() >= n || (status_ && eof_ == 2); });
    }
    bool wait_for_stderr(const std::string& text, std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, timeout, [&] {
            for (const auto& l : err_)
                if (l.find(text) != std::string::npos) return true;
            return status_.has_value() && eof_ == 2;
        }) && contains(err_, text);
    }
    strings out() {
        std::lock_guard<std::mutex> lock(mutex_);
        return out_;
    }
    std::string err() {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string s;
        for (const auto& l : err_) s += l + "\n";
        return s;
    }

private:
    static bool contains(const strings& lines, const std::string& text) {
        for (const auto& l : lines)
            if (l.find(text) != std::string::npos) return true;
        return false;
    }
    void drain(int fd, strings& lines) {
        std::string partial;
        char buf[4096];
        for (;;) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            partial.append(buf, static_cast<std::size_t>(n));
            std::size_t nl;
            while ((nl = partial.find('\n')) != std::string::npos) {
                std::lock_guard<std::mutex> lock(mutex_);
                lines.push_back(partial.substr(0, nl));
                partial.erase(0, nl + 1);
                cv_.notify_all();
            }
        }
        ::close(fd);
        std::lock_guard<std::mutex> lock(mutex_);
        if (!partial.empty()) lines.push_back(partial);
        ++eof_;
        cv_.notify_all();
    }

    pid_t pid_ = -1;
    std::mutex mutex_;
    std::condition_variable cv_;
    strings out_, err_;
    int eof_ = 0;
    std::optional<int> status_;
    std::vector<std::thread> readers_;
    std::thread waiter_;
};

inline child_process watch(const emulator_process& emu, strings flags) {
    strings args = agent_command();
    args.insert(args.end(), {"--endpoint", emu.base_url()});
    args.insert(args.end(), flags.begin(), flags.end());
    return child_process(args);
}

inline httplib::Client control(const emulator_process& emu) {
    httplib::Client c("127.0.0.1", emu.port());
    c.set_connection_timeout(5, 0);
    c.set_read_timeout(10, 0);
    return c;
}

inline void post(const emulator_process& emu, const std::string& path, const std::string& body) {
    auto c = control(emu);
    auto r = c.Post(("/emulator/v1/" + path).c_str(), body, "application/json");
    REQUIRE(r);
    INFO(path << " -> " << r->status << " " << r->body);
    REQUIRE(r->status == 200);
}

struct logged {
    std::string method, target, body;
    int status = 0;
};

/// GET /emulator/v1/PATH, parsed (state, requests...).
inline rapidjson::Document control_get(const emulator_process& emu, const std::string& path) {
    auto c = control(emu);
    auto r = c.Get(("/emulator/v1/" + path).c_str());
    REQUIRE(r);
    REQUIRE(r->status == 200);
    auto doc = forewarn::detail::parse_json(r->body);
    REQUIRE(doc.has_value());
    return std::move(*doc);
}

inline std::vector<logged> scheduled_events_requests(const emulator_process& emu) {
    const auto doc = control_get(emu, "requests");
    std::vector<logged> out;
    const auto& reqs = doc["requests"];
    for (rapidjson::SizeType i = 0; i < reqs.Size(); ++i) {
        logged l{reqs[i]["method"].GetString(), reqs[i]["target"].GetString(), reqs[i]["body"].GetString(),
                 reqs[i]["status"].GetInt()};
        if (l.target.find("/metadata/scheduledevents") == 0) out.push_back(l);
    }
    return out;
}

/// The bodies of the approvals sent (POSTs), or only of those the service answered with `status`.
inline strings approval_bodies(const emulator_process& emu, int status = 0) {
    strings out;
    for (const auto& r : scheduled_events_requests(emu))
        if (r.method == "POST" && (status == 0 || r.status == status)) out.push_back(r.body);
    return out;
}

/// Waits until the watcher has made `n` more Scheduled Events GETs (bounded, a safety net).
inline void wait_for_polls(const emulator_process& emu, std::size_t n) {
    auto count = [&] {
        std::size_t k = 0;
        for (const auto& r : scheduled_events_requests(emu)) k += r.method == "GET";
        return k;
    };
    const auto target = count() + n;
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (count() < target && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(50ms);
    REQUIRE(count() >= target);
}

/// One --json line (json.hpp's form of a change), checked for the documented members and nothing else.
struct json_change {
    std::string change, cloud, id, type, raw_type, status, raw_status, description, incarnation;
    std::optional<std::string> not_before, source, reason;
    std::optional<long long> duration_s;
    std::optional<double> observed_pause_s;          // recover only, when this agent watched it Started
    std::optional<std::string> observed_pause_seen_by;
    strings resources;
};

inline json_change parse_line(const std::string& line) {
    INFO(line);
    auto doc = forewarn::detail::parse_json(line);
    REQUIRE(doc.has_value());
    REQUIRE(doc->IsObject());
    std::set<std::string> keys;
    const rapidjson::Value& root = *doc;  // const iterators: C++20 finds != ambiguous on mutable ones
    for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) keys.insert(it->name.GetString());
    std::set<std::string> expected{"change", "cloud",       "id",         "type",        "raw_type",
                                   "status", "raw_status",  "resource_type", "resources", "not_before",
                                   "description", "source", "duration_s", "incarnation"};
    if (!(*doc)["source"].IsNull()) expected.insert("raw_source");
    if (keys.count("reason")) {
        expected.insert("reason");
        expected.insert("evidence");
        expected.insert("observed_pause_s");
        expected.insert("observed_pause_seen_by");
    }
    CHECK(keys == expected);
    REQUIRE(forewarn::change_from_json(line));  // the library reads back what the program writes
    auto str = [&](const char* k) { return std::string((*doc)[k].GetString()); };
    auto opt = [&](const char* k) -> std::optional<std::string> {
        if ((*doc)[k].IsNull()) return std::nullopt;
        return std::string((*doc)[k].GetString());
    };
    json_change c;
    c.change = str("change");
    c.cloud = str("cloud");
    c.id = str("id");
    c.type = str("type");
    c.raw_type = str("raw_type");
    c.status = str("status");
    c.raw_status = str("raw_status");
    c.description = str("description");
    c.incarnation = str("incarnation");
    c.not_before = opt("not_before");
    c.source = opt("source");
    if (keys.count("reason")) {
        c.reason = str("reason");
        const auto& pause = (*doc)["observed_pause_s"];
        CHECK(pause.IsNull() == (*doc)["observed_pause_seen_by"].IsNull());
        if (!pause.IsNull()) {
            REQUIRE(pause.IsNumber());
            c.observed_pause_s = pause.GetDouble();
            c.observed_pause_seen_by = str("observed_pause_seen_by");
        }
    }
    if (!(*doc)["duration_s"].IsNull()) c.duration_s = (*doc)["duration_s"].GetInt64();
    for (const auto& r : (*doc)["resources"].GetArray()) c.resources.emplace_back(r.GetString());
    CHECK((c.change == "recover") == c.reason.has_value());
    return c;
}



/// A fresh directory for one test's files, removed at scope exit.
using forewarn_test::temp_dir;  // temp_dir.hpp

/// A file's text, its line ends as "\n" (a hook under cmd.exe writes "\r\n").
inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::string text(std::istreambuf_iterator<char>(in), (std::istreambuf_iterator<char>()));
    text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
    return text;
}

/// A file's lines, each without trailing blanks (cmd.exe's `echo X >> F` writes "X \r\n").
inline strings lines_of(const std::string& path) {
    strings lines;
    std::istringstream in(read_text(path));
    for (std::string line; std::getline(in, line);) lines.push_back(line.substr(0, line.find_last_not_of(' ') + 1));
    return lines;
}

/// A hook command in the agent's shell: `sh` for /bin/sh (Linux), `cmd` for cmd.exe (Windows).
inline std::string hook_for(const std::string& sh, const std::string& cmd) { return windows_agent() ? cmd : sh; }

/// A file's path quoted for the agent's shell.
inline std::string quoted(const std::string& path) { return windows_agent() ? '"' + agent_path(path) + '"' : "'" + path + "'"; }

/// Whether a process named `name` (its /proc comm; Wine sets it to the Windows program's) with
/// `text` in its command line runs on this machine.
inline bool process_running(const std::string& name, const std::string& text) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        if (entry.path().filename().string().find_first_not_of("0123456789") != std::string::npos) continue;
        std::string comm = read_text((entry.path() / "comm").string());
        if (!comm.empty() && comm.back() == '\n') comm.pop_back();
        if (comm != name) continue;
        std::string cmdline = read_text((entry.path() / "cmdline").string());
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (cmdline.find(text) != std::string::npos) return true;
    }
    return false;
}

/// Whether process `pid` is alive: neither gone nor a zombie waiting for its reaper.
inline bool alive(int pid) {
    const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

inline std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

/// Waits (bounded, a safety net) until `ready()` holds.
template <class F>
inline bool eventually(F ready, std::chrono::seconds limit = 20s) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (!ready()) {
        if (std::chrono::steady_clock::now() >= give_up) return false;
        std::this_thread::sleep_for(50ms);
    }
    return true;
}


}  // namespace agent
}  // namespace forewarn_test

#endif  // FOREWARN_WATCH_PATH && FOREWARN_EMULATOR_PATH
