// SPDX-License-Identifier: MIT
#pragma once

// Starts forewarn-emulator as a child process for an end-to-end test and stops it at scope exit
// (RAII: SIGTERM, then SIGKILL if it has not exited within 5 s; never a process left behind).
// POSIX only, like the emulator. The program is found through FOREWARN_EMULATOR_PATH (set on the
// integration target by tests/CMakeLists.txt) unless a path is given.
//
//   forewarn_test::emulator_process emu({"--scenario", path, "--speed", "60"});
//   auto url = emu.base_url();            // "http://127.0.0.1:PORT"
//   emu.wait_for_output("Started", std::chrono::seconds(10));
//
// The child's stdout is drained by a thread into a line buffer (one line per request and per
// state change), so the emulator never blocks on a full pipe; stderr is inherited.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace forewarn_test {

class emulator_process {
public:
    /// Starts `program` (default: FOREWARN_EMULATOR_PATH) with `--listen 127.0.0.1:0` and `args`,
    /// and waits up to `startup` for its "listening on http://127.0.0.1:PORT" line.
    /// Throws std::runtime_error when it cannot start.
    explicit emulator_process(std::vector<std::string> args = {}, std::string program = default_program(),
                              std::chrono::milliseconds startup = std::chrono::seconds(15)) {
        if (program.empty()) throw std::runtime_error("emulator_process: no program (FOREWARN_EMULATOR_PATH is not defined)");
        int fds[2];
        // O_CLOEXEC: a process spawned concurrently by another thread must not inherit the write
        // end, or the reader would never see EOF.
        if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("emulator_process: pipe: ") + std::strerror(errno));

        // --exit-with-parent: should this test process be killed outright, the emulator notices and
        // exits rather than linger.
        std::vector<std::string> argv_s{program, "--listen", "127.0.0.1:0", "--exit-with-parent"};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& a : argv_s) argv.push_back(a.data());
        argv.push_back(nullptr);

        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, fds[0]);
        posix_spawn_file_actions_addclose(&actions, fds[1]);
        const int rc = ::posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(fds[1]);
        if (rc != 0) {
            ::close(fds[0]);
            pid_ = -1;
            throw std::runtime_error("emulator_process: cannot start " + program + ": " + std::strerror(rc));
        }
        fd_ = fds[0];
        reader_ = std::thread([this] { drain(); });

        const std::string prefix = "listening on http://127.0.0.1:";
        std::string first;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait_for(lock, startup, [&] { return !lines_.empty() || eof_; });
            if (!lines_.empty()) first = lines_.front();
        }
        if (first.compare(0, prefix.size(), prefix) == 0) port_ = std::atoi(first.c_str() + prefix.size());
        if (port_ <= 0) {
            const int status = stop();
            throw std::runtime_error("emulator_process: " + program + " did not report its port (first line: \"" + first +
                                     "\"; " + describe(status) + ")");
        }
    }

    emulator_process(const emulator_process&) = delete;
    emulator_process& operator=(const emulator_process&) = delete;
    ~emulator_process() { stop(); }

    /// A wait status as words: "exited with status N", "killed by signal N", or (-1) "did not exit".
    static std::string describe(int status) {
        if (status == -1) return "did not exit: killed";
        if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
        if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
        return "wait status " + std::to_string(status);
    }

    /// The port the emulator really bound.
    int port() const noexcept { return port_; }
    /// "127.0.0.1:PORT" (for GCE_METADATA_HOST and the like).
    std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
    /// "http://127.0.0.1:PORT" (no trailing slash).
    std::string base_url() const { return "http://" + host(); }
    pid_t pid() const noexcept { return pid_; }

    /// Every stdout line so far (the first is the "listening on" line).
    std::vector<std::string> output() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return lines_;
    }

    /// Waits until a stdout line contains `text`; false after `timeout` or when the program ended.
    bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, timeout, [&] {
            for (const auto& l : lines_)
                if (l.find(text) != std::string::npos) return true;
            return eof_;
        }) && contains_locked(text);
    }

    /// True while the child has not exited.
    bool running() {
        if (pid_ <= 0) return false;
        int status = 0;
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            exit_status_ = status;
            pid_ = -1;
            return false;
        }
        return r == 0;
    }

    /// Sends `sig` (default SIGTERM) and waits up to `grace` for the exit; SIGKILL after that.
    /// Returns the wait status (as from waitpid) or -1 when it had to be killed.
    int stop(int sig = SIGTERM, std::chrono::milliseconds grace = std::chrono::seconds(5)) {
        if (pid_ > 0) {
            ::kill(pid_, sig);
            const auto deadline = std::chrono::steady_clock::now() + grace;
            bool exited = false;
            while (std::chrono::steady_clock::now() < deadline) {
                int status = 0;
                const pid_t r = ::waitpid(pid_, &status, WNOHANG);
                if (r == pid_ || (r < 0 && errno == ECHILD)) {
                    exit_status_ = status;
                    exited = true;
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));  // bounded: grace
            }
            if (!exited) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, nullptr, 0);
                exit_status_ = -1;
            }
            pid_ = -1;
        }
        if (reader_.joinable()) reader_.join();  // the pipe closes when the child is gone
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
        return exit_status_;
    }

    static std::string default_program() {
#ifdef FOREWARN_EMULATOR_PATH
        return FOREWARN_EMULATOR_PATH;
#else
        return {};
#endif
    }

private:
    bool contains_locked(const std::string& text) const {
        for (const auto& l : lines_)
            if (l.find(text) != std::string::npos) return true;
        return false;
    }

    void drain() {
        std::string partial;
        char buf[4096];
        for (;;) {
            const ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            std::lock_guard<std::mutex> lock(mutex_);
            for (ssize_t i = 0; i < n; ++i) {
                if (buf[i] == '\n') {
                    if (lines_.size() < max_lines) lines_.push_back(std::move(partial));
                    partial.clear();
                } else {
                    partial += buf[i];
                }
            }
            cv_.notify_all();
        }
        std::lock_guard<std::mutex> lock(mutex_);
        if (!partial.empty() && lines_.size() < max_lines) lines_.push_back(std::move(partial));
        eof_ = true;
        cv_.notify_all();
    }

    static constexpr std::size_t max_lines = 200000;
    pid_t pid_ = -1;
    int fd_ = -1;
    int port_ = 0;
    int exit_status_ = 0;
    std::thread reader_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<std::string> lines_;
    bool eof_ = false;
};

}  // namespace forewarn_test
