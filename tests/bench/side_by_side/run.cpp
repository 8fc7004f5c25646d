// SPDX-License-Identifier: MIT
// Runs one command and reports what it cost: CPU seconds (user + sys of the process and every
// descendant it waited for), wall seconds and peak RSS, as one JSON line written to the file
// descriptor given by --report-fd (default 2), so that the command's own stdout passes through.
//
//   forewarn-bench-run [--report-fd N] COMMAND [ARGS...]
//
// Why a program of its own: Linux carries a process's peak RSS across fork and exec, so a command
// forked straight from the Python harness would report at least the harness's own RSS. Forked from
// this small program instead, the figure is the command's own (or this program's ~2 MiB, if larger).

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    int fd = 2;
    int first = 1;
    if (argc > 2 && std::strcmp(argv[1], "--report-fd") == 0) {
        fd = std::atoi(argv[2]);
        first = 3;
    }
    if (first >= argc) {
        std::fprintf(stderr, "usage: %s [--report-fd N] COMMAND [ARGS...]\n", argv[0]);
        return 2;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("fork");
        return 1;
    }
    if (pid == 0) {
        if (fd != 2 && fd != 1) close(fd);
        execvp(argv[first], argv + first);
        std::perror(argv[first]);
        _exit(127);
    }
    int status = 0;
    rusage ru{};
    if (wait4(pid, &status, 0, &ru) < 0) {
        std::perror("wait4");
        return 1;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char line[256];
    const int n = std::snprintf(line, sizeof line, "{\"cpu_s\":%.6f,\"wall_s\":%.6f,\"maxrss_kb\":%ld,\"exit\":%d}\n", cpu,
                                wall, ru.ru_maxrss, code);
    if (n > 0 && write(fd, line, static_cast<std::size_t>(n)) < 0) return 1;
    return code;
}
