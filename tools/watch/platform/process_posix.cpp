// SPDX-License-Identifier: MIT
// The POSIX half of platform/process.hpp: fork, a keeper leading the process group, /bin/sh -c,
// pidfd.
#include "process.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace watch {

namespace detail {

struct fd_guard {
    int fd = -1;
    ~fd_guard() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/// Asks the kernel for `sig` when the parent (the thread that forked) is gone: Linux's
/// PR_SET_PDEATHSIG; elsewhere nothing.
void die_with_parent(int sig) {
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, static_cast<unsigned long>(sig));
#else
    (void)sig;
#endif
}

}  // namespace detail

// run_process: /bin/sh -c in a process group of its own (process.hpp says what it promises).
std::optional<bool> detail::run_process(const std::string& command, const std::string& input, const std::vector<std::string>& env,
                                        std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stop,
                                        const std::function<void(std::string_view)>& log_line, hook_outcome& out) {
    using clock = std::chrono::steady_clock;

    // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
    std::map<std::string, std::string> vars;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view kv = *e;
        const auto eq = kv.find('=');
        if (eq == std::string_view::npos) continue;
        // The agent's secrets stay the agent's: a hook never inherits the etcd password.
        if (kv.substr(0, eq) == "FOREWARN_ETCD_PASSWORD" || kv.substr(0, eq) == "FOREWARN_WEBHOOK_AUTHORIZATION") continue;
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
        return std::nullopt;
    }
    detail::fd_guard in_read{in_pipe[0]}, in_write{in_pipe[1]};
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
        out.detail = std::string("pipe: ") + std::strerror(errno);
        return std::nullopt;
    }
    detail::fd_guard out_read{out_pipe[0]}, out_write{out_pipe[1]};

    const pid_t agent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        out.detail = std::string("fork: ") + std::strerror(errno);
        return std::nullopt;
    }
    if (pid == 0) {
        // The keeper: the leader of the hook's process group, between forewarn-watch and the
        // shell. It ends the whole group should forewarn-watch die (the kernel tells it with
        // SIGHUP), so a hook's processes never outlive the agent that ran them and a restarted
        // agent's rerun never overlaps them; else it ends as the shell ends, with its status.
        ::setpgid(0, 0);
        ::dup2(in_pipe[0], 0);
        ::dup2(out_pipe[1], 1);
        ::dup2(out_pipe[1], 2);
#ifdef SYS_close_range
        if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
#endif
            for (long fd = 3; fd < max_fd; ++fd) ::close(static_cast<int>(fd));
        sigset_t waited;
        sigemptyset(&waited);
        for (int sig : {SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGQUIT}) sigaddset(&waited, sig);
        ::sigprocmask(SIG_BLOCK, &waited, nullptr);
        detail::die_with_parent(SIGHUP);
        if (::getppid() != agent) ::_exit(125);  // forewarn-watch died before this line: run nothing
        const pid_t shell = ::fork();
        if (shell == 0) {
            sigset_t none;
            sigemptyset(&none);
            ::sigprocmask(SIG_SETMASK, &none, nullptr);  // forewarn-watch blocks its signals in every thread
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            ::sigaction(SIGPIPE, &dfl, nullptr);  // what forewarn-watch ignores, a hook gets back
            ::sigaction(SIGXFSZ, &dfl, nullptr);
            ::execve("/bin/sh", argv, envp.data());
            ::_exit(127);
        }
        for (int fd = 0; fd <= 2; ++fd) ::close(fd);  // the pipes are the shell's alone
        if (shell < 0) ::_exit(127);
        for (;;) {
            siginfo_t info;
            const int sig = ::sigwaitinfo(&waited, &info);
            if (sig == SIGHUP && ::getppid() != agent) ::kill(0, SIGKILL);  // forewarn-watch is gone: the group ends
            if (sig != SIGCHLD) continue;  // SIGTERM and the like reach the shell itself, as the group's member
            int status = 0;
            if (::waitpid(shell, &status, WNOHANG) != shell) continue;
            if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
            // Ended by a signal: end by the same one, so forewarn-watch sees what the shell saw.
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            const int by = WTERMSIG(status);
            ::sigaction(by, &dfl, nullptr);
            sigset_t only;
            sigemptyset(&only);
            sigaddset(&only, by);
            ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
            ::kill(::getpid(), by);
            ::_exit(128 + by);
        }
    }
    ::setpgid(pid, pid);  // also here: whichever runs first
    in_read.reset();
    out_write.reset();
    ::fcntl(in_write.fd, F_SETFL, ::fcntl(in_write.fd, F_GETFL) | O_NONBLOCK);
    detail::fd_guard pidfd{detail::pidfd_open(pid)};

    std::size_t written = 0;
    if (input.empty()) in_write.reset();
    output_lines lines(log_line);

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
                lines.add(buf, static_cast<std::size_t>(got));
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                output_done = true;
                lines.finish();
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
    if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) out.exit_code = -WTERMSIG(status);
    return timed_out;
}

unsigned long long process_id() { return static_cast<unsigned long long>(::getpid()); }

bool runnable(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::filesystem::path> find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    return detail::search_path(path ? path : "", ':', name, {""});
}

}  // namespace watch
