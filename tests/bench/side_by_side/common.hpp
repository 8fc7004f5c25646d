// SPDX-License-Identifier: MIT
// What the side-by-side programs share: argument parsing and this process's own resource use.
// POSIX only (getrusage, /proc): these are benchmark programs, not library code.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace bench {

/// argv[i] as a positive count, or exit with the usage line.
inline long count_arg(int argc, char** argv, int i, const char* usage) {
    if (i >= argc) {
        std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        std::exit(2);
    }
    char* end = nullptr;
    const long n = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || n < 0) {
        std::fprintf(stderr, "%s: \"%s\" is not a count\nusage: %s %s\n", argv[0], argv[i], argv[0], usage);
        std::exit(2);
    }
    return n;
}

/// A line of /proc/self/status ("VmRSS:  1234 kB") as the number in it, or -1.
inline long proc_status_kb(const char* key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const std::string prefix = std::string(key) + ":";
    while (std::getline(in, line))
        if (line.compare(0, prefix.size(), prefix) == 0) return std::strtol(line.c_str() + prefix.size(), nullptr, 10);
    return -1;
}

/// This process's CPU seconds (user + system, every thread, ended ones included).
inline double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// Seconds on the steady clock since `t0`.
inline double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace bench
