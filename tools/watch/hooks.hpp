// SPDX-License-Identifier: MIT
// forewarn-watch's hooks: --on-prepare, --on-started and --on-recover commands, one process per
// change. The change reaches the command only as data: its JSON line on stdin and FOREWARN_*
// environment variables, never spliced into the command line. Each run has its own thread and
// its own process group, so a hung hook holds back neither another event nor the polling, and is
// stopped as a whole (SIGTERM, then SIGKILL) at its deadline.
//
// With a state file, a journal beside it (STATE.hooks) records each run before it starts and
// when it ends: a hook that finished is never run again for the same change (exactly once), and
// one that was running when forewarn-watch died is run again when it starts (at least once
// across a crash).
#pragma once

#include <forewarn/platform/files.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/time.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace watch {

/// How one hook run ended.
struct hook_outcome {
    enum class kind { succeeded, failed, timed_out, not_started } what = kind::not_started;
    int exit_code = -1;  ///< the exit status, or -signal when a signal ended it
    std::chrono::milliseconds took{0};
    std::string detail;  ///< in words, for the log
};

inline std::string_view to_string(hook_outcome::kind k) {
    switch (k) {
    case hook_outcome::kind::succeeded: return "succeeded";
    case hook_outcome::kind::failed: return "failed";
    case hook_outcome::kind::timed_out: return "timed_out";
    case hook_outcome::kind::not_started: return "not_started";
    }
    return "unknown";
}

namespace detail {

struct fd_guard {
    int fd = -1;
    ~fd_guard() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

inline int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

}  // namespace detail

/**
 * Runs `command` with /bin/sh -c in a process group of its own: `input` on its stdin, `env`
 * ("NAME=value") added to forewarn-watch's environment, its stdout and stderr given line by line
 * to `log_line`. Stops the group (SIGTERM, then SIGKILL 2 s later) when `deadline` comes or
 * `stop` is raised. Blocks the calling thread until the process is gone.
 */
inline hook_outcome run_hook(const std::string& command, const std::string& input, const std::vector<std::string>& env,
                             std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stop,
                             const std::function<void(std::string_view)>& log_line) {
    using clock = std::chrono::steady_clock;
    hook_outcome out;
    const auto started = clock::now();

    // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
    std::map<std::string, std::string> vars;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view kv = *e;
        const auto eq = kv.find('=');
        if (eq == std::string_view::npos) continue;
        // The agent's secrets stay the agent's: a hook never inherits the etcd password.
        if (kv.substr(0, eq) == "FOREWARN_ETCD_PASSWORD") continue;
        vars[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    }
    for (const auto& kv : env) {
        const auto eq = kv.find('=');
        if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    std::vector<std::string> env_strings;
    env_strings.reserve(vars.size());
    for (const auto& [k, v] : vars) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string sh = "sh", dash_c = "-c", cmd = command;
    char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
    const long max_fd = ::sysconf(_SC_OPEN_MAX) > 0 ? ::sysconf(_SC_OPEN_MAX) : 1024;

    int in_pipe[2], out_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
        out.detail = std::string("pipe: ") + std::strerror(errno);
        return out;
    }
    detail::fd_guard in_read{in_pipe[0]}, in_write{in_pipe[1]};
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
        out.detail = std::string("pipe: ") + std::strerror(errno);
        return out;
    }
    detail::fd_guard out_read{out_pipe[0]}, out_write{out_pipe[1]};

    const pid_t pid = ::fork();
    if (pid < 0) {
        out.detail = std::string("fork: ") + std::strerror(errno);
        return out;
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);  // forewarn-watch blocks its signals in every thread
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        ::sigaction(SIGPIPE, &dfl, nullptr);
        ::dup2(in_pipe[0], 0);
        ::dup2(out_pipe[1], 1);
        ::dup2(out_pipe[1], 2);
#ifdef SYS_close_range
        if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
#endif
            for (long fd = 3; fd < max_fd; ++fd) ::close(static_cast<int>(fd));
        ::execve("/bin/sh", argv, envp.data());
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also here: whichever runs first
    in_read.reset();
    out_write.reset();
    ::fcntl(in_write.fd, F_SETFL, ::fcntl(in_write.fd, F_GETFL) | O_NONBLOCK);
    detail::fd_guard pidfd{detail::pidfd_open(pid)};

    std::size_t written = 0;
    if (input.empty()) in_write.reset();
    std::string partial;
    std::size_t logged = 0;
    constexpr std::size_t max_logged = 64 * 1024;  // a hook that floods its output is cut short in the log
    auto emit = [&](std::string_view line) {
        if (logged > max_logged) return;
        logged += line.size();
        if (logged > max_logged) {
            log_line("... (more output not logged)");
            return;
        }
        log_line(line.substr(0, 4096));
    };
    auto drain = [&](bool all) {
        std::size_t nl;
        while ((nl = partial.find('\n')) != std::string::npos) {
            emit(std::string_view(partial).substr(0, nl));
            partial.erase(0, nl + 1);
        }
        if (partial.size() > 4096 || (all && !partial.empty())) {
            emit(partial);
            partial.clear();
        }
    };

    bool exited = false, output_done = false, killing = false;
    int status = 0;
    clock::time_point kill_at = deadline;
    bool timed_out = false;
    while (!exited || !output_done) {
        const auto now = clock::now();
        if (!killing && (now >= deadline || stop.load())) {
            timed_out = !stop.load();
            ::kill(-pid, SIGTERM);
            killing = true;
            kill_at = now + std::chrono::seconds(2);
        } else if (killing && now >= kill_at) {
            ::kill(-pid, SIGKILL);
            kill_at = clock::time_point::max();
        }
        pollfd fds[3];
        nfds_t n = 0;
        int out_i = -1, in_i = -1;
        if (!output_done) {
            out_i = static_cast<int>(n);
            fds[n++] = {out_read.fd, POLLIN, 0};
        }
        if (in_write.fd >= 0) {
            in_i = static_cast<int>(n);
            fds[n++] = {in_write.fd, POLLOUT, 0};
        }
        if (!exited && pidfd.fd >= 0) fds[n++] = {pidfd.fd, POLLIN, 0};  // readable once it exits
        const auto until = killing ? kill_at : deadline;
        long long wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
        wait_ms = std::clamp<long long>(wait_ms, 0, 200);  // 200 ms: the stop flag is looked at that often
        if (!exited && pidfd.fd < 0) wait_ms = std::min<long long>(wait_ms, 50);  // no pidfd: waitpid by polling
        const int r = ::poll(fds, n, static_cast<int>(wait_ms));
        if (r < 0 && errno != EINTR) break;
        if (out_i >= 0 && (fds[out_i].revents & (POLLIN | POLLHUP | POLLERR))) {
            char buf[4096];
            const auto got = ::read(out_read.fd, buf, sizeof buf);
            if (got > 0) {
                partial.append(buf, static_cast<std::size_t>(got));
                drain(false);
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                output_done = true;
                drain(true);
            }
        }
        if (in_i >= 0 && (fds[in_i].revents & (POLLOUT | POLLERR | POLLHUP))) {
            const auto put = ::write(in_write.fd, input.data() + written, input.size() - written);
            if (put > 0) written += static_cast<std::size_t>(put);
            if (put < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // it closed its stdin
            if (written >= input.size()) in_write.reset();
        }
        if (!exited) {
            const pid_t w = ::waitpid(pid, &status, WNOHANG);
            if (w == pid) exited = true;
        }
        // A hook that exited but left a background child holding the output pipe: stop waiting
        // for the output once the process itself is gone and its group was told to stop.
        if (exited && !output_done && killing && clock::now() >= kill_at) output_done = true;
        if (exited && !output_done && !killing && clock::now() >= deadline) {
            ::kill(-pid, SIGKILL);
            output_done = true;
        }
    }
    if (!exited) ::waitpid(pid, &status, 0);
    out.took = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started);
    if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) out.exit_code = -WTERMSIG(status);
    if (timed_out) {
        out.what = hook_outcome::kind::timed_out;
        out.detail = "still running at its deadline: stopped";
    } else if (stop.load() && out.exit_code != 0) {
        out.what = hook_outcome::kind::failed;
        out.detail = "stopped: forewarn-watch is stopping";
    } else if (out.exit_code == 0) {
        out.what = hook_outcome::kind::succeeded;
    } else {
        out.what = hook_outcome::kind::failed;
        out.detail = out.exit_code == 127 ? "exit status 127 (command not found?)"
                     : out.exit_code < 0  ? "ended by signal " + std::to_string(-out.exit_code)
                                          : "exit status " + std::to_string(out.exit_code);
    }
    return out;
}

/// The environment a hook gets for a change: the event's fields as FOREWARN_* variables.
inline std::vector<std::string> hook_environment(std::string_view hook, const forewarn::change& c, std::string_view cloud) {
    const forewarn::event& e = c.event;
    std::string resources;
    for (const auto& r : e.resources) resources += (resources.empty() ? "" : ",") + r;
    std::vector<std::string> env = {
        "FOREWARN_HOOK=" + std::string(hook),
        "FOREWARN_CHANGE=" + std::string(forewarn::to_string(c.kind)),
        "FOREWARN_CLOUD=" + std::string(cloud),
        "FOREWARN_EVENT_ID=" + e.id,
        "FOREWARN_EVENT_TYPE=" + std::string(forewarn::to_string(e.type)),
        "FOREWARN_EVENT_RAW_TYPE=" + e.raw_type,
        "FOREWARN_EVENT_STATUS=" + std::string(forewarn::to_string(e.status)),
        "FOREWARN_NOT_BEFORE=" + (e.not_before ? forewarn::format_iso8601(*e.not_before) : std::string()),
        "FOREWARN_RESOURCES=" + resources,
        "FOREWARN_REASON=" + (c.kind == forewarn::change_kind::recover ? std::string(forewarn::to_string(c.reason)) : std::string()),
    };
    // Bytes an environment cannot hold (NUL) are dropped, never passed on.
    for (auto& s : env) s.erase(std::remove(s.begin(), s.end(), '\0'), s.end());
    return env;
}

/**
 * Which hook runs have happened, kept in a file beside the state file when there is one. A run is
 * "pending" from just before its process starts until it ends, then "done" or "failed". Written
 * durably (write, fsync, rename, fsync of the directory) at each step.
 */
class hook_journal {
public:
    struct entry {
        std::string state;  // pending | done | failed
        std::string hook;   // prepare | started | recover
        std::string input;  // the change's JSON line (what the hook got on stdin)
        std::vector<std::string> env;
    };

    hook_journal() = default;
    explicit hook_journal(std::string path) : path_(std::move(path)) {}

    /// Loads the file; a missing one is empty, an unreadable one is reported and started afresh.
    std::string load() {
        if (path_.empty()) return {};
        auto text = forewarn::platform::read_small_file(forewarn::platform::path_from_utf8(path_));
        if (!text) return text.error().code == forewarn::errc::not_found ? std::string() : text.error().describe();
        auto doc = forewarn::detail::parse_json(*text);
        if (!doc || !doc->IsObject()) return "the hook journal " + path_ + " is not what forewarn-watch writes: started afresh";
        const auto* runs = forewarn::detail::json_member(*doc, "runs");
        if (!runs || !runs->IsObject()) return {};
        for (auto it = runs->MemberBegin(); it != runs->MemberEnd(); ++it) {
            if (!it->value.IsObject()) continue;
            entry e;
            auto str = [&](const char* name) {
                const auto* v = forewarn::detail::json_member(it->value, name);
                return v && v->IsString() ? std::string(forewarn::detail::json_string_view(*v)) : std::string();
            };
            e.state = str("state");
            e.hook = str("hook");
            e.input = str("input");
            if (const auto* env = forewarn::detail::json_member(it->value, "env"); env && env->IsArray())
                for (const auto& v : env->GetArray())
                    if (v.IsString()) e.env.emplace_back(forewarn::detail::json_string_view(v));
            entries_[std::string(forewarn::detail::json_string_view(it->name))] = std::move(e);
            order_.push_back(std::string(forewarn::detail::json_string_view(it->name)));
        }
        return {};
    }

    std::optional<entry> find(const std::string& key) const {
        auto it = entries_.find(key);
        if (it == entries_.end()) return std::nullopt;
        return it->second;
    }

    std::vector<std::pair<std::string, entry>> pending() const {
        std::vector<std::pair<std::string, entry>> out;
        for (const auto& k : order_) {
            auto it = entries_.find(k);
            if (it != entries_.end() && it->second.state == "pending") out.emplace_back(k, it->second);
        }
        return out;
    }

    /// Records `key` in `state`, durably; the error in words, or empty.
    std::string set(const std::string& key, entry e) {
        if (!entries_.count(key)) order_.push_back(key);
        entries_[key] = std::move(e);
        // The oldest finished runs go first once there are many: their events are long over.
        while (order_.size() > max_entries) {
            auto victim = std::find_if(order_.begin(), order_.end(),
                                       [&](const std::string& k) { return entries_[k].state != "pending"; });
            if (victim == order_.end()) break;
            entries_.erase(*victim);
            order_.erase(victim);
        }
        return save();
    }

    /// Forgets `key` (durably when it was there); the error in words, or empty.
    std::string erase(const std::string& key) {
        if (!entries_.erase(key)) return {};
        order_.erase(std::remove(order_.begin(), order_.end(), key), order_.end());
        return save();
    }

private:
    static constexpr std::size_t max_entries = 512;

    std::string save() const {
        if (path_.empty()) return {};
        forewarn::detail::json_writer w(true);
        w.begin_object();
        w.key("version");
        w.int64(1);
        w.key("runs");
        w.begin_object();
        for (const auto& k : order_) {
            const auto& e = entries_.at(k);
            w.key(k);
            w.begin_object();
            w.key("state");
            w.string(e.state);
            w.key("hook");
            w.string(e.hook);
            w.key("input");
            w.string(e.input);
            w.key("env");
            w.begin_array();
            for (const auto& v : e.env) w.string(v);
            w.end_array();
            w.end_object();
        }
        w.end_object();
        w.end_object();
        auto r = forewarn::platform::write_file_atomically(forewarn::platform::path_from_utf8(path_), w.str());
        return r ? std::string() : r.error().describe();
    }

    std::string path_;
    std::map<std::string, entry> entries_;
    std::vector<std::string> order_;
};

/**
 * Runs hooks, each on a thread of its own, and remembers them in the journal. A key names one
 * change ("prepare:EVENT-ID"): a key that ran to the end is not run again; a second request for a
 * key that is running waits for that run instead of starting another.
 */
class hook_runner {
public:
    using done_fn = std::function<void(const hook_outcome&)>;
    struct report {
        std::string key, hook;
        hook_outcome outcome;
    };

    hook_runner(hook_journal journal, std::function<void(std::string_view)> log,
                std::function<void(const report&)> on_finished)
        : journal_(std::move(journal)), log_(std::move(log)), on_finished_(std::move(on_finished)) {}

    hook_runner(const hook_runner&) = delete;
    hook_runner& operator=(const hook_runner&) = delete;
    ~hook_runner() { stop(); }

    hook_journal& journal() { return journal_; }

    /**
     * Runs `command` for `key` unless it ran before: `done` is called with the outcome of this run,
     * of the run in progress, or at once with the recorded one.
     */
    void run(const std::string& key, const std::string& hook, const std::string& command, const std::string& input,
             std::vector<std::string> env, std::chrono::steady_clock::time_point deadline, done_fn done) {
        std::unique_lock<std::mutex> lock(mutex_);
        reap_locked();
        if (auto it = finished_.find(key); it != finished_.end()) {
            const hook_outcome o = it->second;
            lock.unlock();
            if (done) done(o);
            return;
        }
        if (auto it = running_.find(key); it != running_.end()) {
            if (done) it->second.push_back(std::move(done));
            return;
        }
        if (auto recorded = journal_.find(key); recorded && recorded->state != "pending") {
            hook_outcome o;
            o.what = recorded->state == "done" ? hook_outcome::kind::succeeded : hook_outcome::kind::failed;
            o.exit_code = recorded->state == "done" ? 0 : -1;
            o.detail = "ran before this restart (" + recorded->state + ")";
            finished_[key] = o;
            lock.unlock();
            if (done) done(o);
            return;
        }
        if (stopping_) return;
        running_[key].push_back(std::move(done));
        if (auto e = journal_.set(key, {"pending", hook, input, env}); !e.empty()) log_("hook journal: " + e);
        threads_.emplace_back();
        auto& slot = threads_.back();
        slot.thread = std::thread([this, key, hook, command, input, env = std::move(env), deadline, &slot] {
            const std::string prefix = "hook " + hook + " " + key.substr(key.find(':') + 1) + ": ";
            auto o = run_hook(command, input, env, deadline, stop_flag_,
                              [&](std::string_view line) { log_(prefix + std::string(line)); });
            std::vector<done_fn> waiters;
            {
                std::lock_guard<std::mutex> l(mutex_);
                // A hook cut short because forewarn-watch is stopping stays pending: it runs again
                // after the restart.
                if (!(stop_flag_.load() && o.what != hook_outcome::kind::succeeded)) {
                    if (auto e = journal_.set(key, {o.what == hook_outcome::kind::succeeded ? "done" : "failed", hook, input, env});
                        !e.empty())
                        log_("hook journal: " + e);
                    finished_[key] = o;
                }
                waiters = std::move(running_[key]);
                running_.erase(key);
            }
            if (on_finished_) on_finished_({key, hook, o});
            for (auto& w : waiters)
                if (w) w(o);
            std::lock_guard<std::mutex> l(mutex_);
            slot.done = true;  // last: reap_locked() may join it from now on
        });
    }

    /// Forgets finished runs of `keys` (a new occurrence of an event id runs its hooks again).
    void forget(const std::vector<std::string>& keys) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& k : keys) {
            finished_.erase(k);
            if (auto e = journal_.erase(k); !e.empty()) log_("hook journal: " + e);
        }
    }

    /// Runs again what the journal says was running when forewarn-watch last stopped.
    void resume_pending(const std::function<std::string(const std::string& hook)>& command_of,
                        std::chrono::steady_clock::time_point deadline) {
        for (auto& [key, e] : journal_.pending()) {
            const std::string cmd = command_of(e.hook);
            if (cmd.empty()) continue;
            log_("hook " + e.hook + " " + key.substr(key.find(':') + 1) +
                 ": was running when forewarn-watch stopped: run again");
            run(key, e.hook, cmd, e.input, e.env, deadline, nullptr);
        }
    }

    /// Stops every running hook (its process group) and waits for their threads.
    void stop() {
        std::list<slot_t> threads;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
            stop_flag_ = true;
            threads.swap(threads_);
        }
        for (auto& t : threads)
            if (t.thread.joinable()) t.thread.join();
    }

    /// Hooks running now.
    std::size_t running() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return running_.size();
    }

private:
    struct slot_t {
        std::thread thread;
        bool done = false;
    };

    void reap_locked() {
        for (auto it = threads_.begin(); it != threads_.end();) {
            if (it->done && it->thread.joinable()) {
                it->thread.join();  // it has finished its work: at most the last few instructions
                it = threads_.erase(it);
            } else {
                ++it;
            }
        }
    }

    hook_journal journal_;
    std::function<void(std::string_view)> log_;
    std::function<void(const report&)> on_finished_;
    mutable std::mutex mutex_;
    std::map<std::string, std::vector<done_fn>> running_;
    std::map<std::string, hook_outcome> finished_;
    std::list<slot_t> threads_;
    std::atomic<bool> stop_flag_{false};
    bool stopping_ = false;
};

}  // namespace watch
