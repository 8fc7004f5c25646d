// SPDX-License-Identifier: MIT
// One hook process: `command` run by the platform's shell (POSIX /bin/sh -c, Windows cmd.exe /c)
// with `input` on its stdin, `env` ("NAME=value") added to forewarn-watch's environment (never its
// FOREWARN_ETCD_PASSWORD or FOREWARN_WEBHOOK_AUTHORIZATION), its output given line by line to `log_line`, stopped as a whole (its
// process group, or its job object) when `deadline` comes or `stop` is raised. Blocks the calling
// thread until the process is gone. The platform's half: process_posix.hpp, process_windows.hpp.
#pragma once

#include <forewarn/platform/files.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// This process's id (a file name of its own: `forewarn-watch check`'s probe).
inline unsigned long long process_id();

/// Whether `path` is a file this user may run (on Windows: a file).
inline bool runnable(const std::filesystem::path& path);

/// Where `name` is found on PATH, with the platform's program suffixes (Windows: .exe, .cmd,
/// .bat, .com); nothing when it is not there.
inline std::optional<std::filesystem::path> find_on_path(const std::string& name);

inline hook_outcome run_hook(const std::string& command, const std::string& input, const std::vector<std::string>& env,
                      std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stop,
                      const std::function<void(std::string_view)>& log_line);

/// A hook's output, line by line, at most 64 KiB of it logged (lines cut at 4 KiB).
class output_lines {
public:
    explicit output_lines(const std::function<void(std::string_view)>& log_line) : log_line_(log_line) {}
    void add(const char* data, std::size_t n) {
        partial_.append(data, n);
        drain(false);
    }
    void finish() { drain(true); }

private:
    void emit(std::string_view line) {
        if (logged_ > max_logged) return;
        logged_ += line.size();
        if (logged_ > max_logged) {
            log_line_("... (more output not logged)");
            return;
        }
        log_line_(line.substr(0, 4096));
    }
    void drain(bool all) {
        std::size_t nl;
        while ((nl = partial_.find('\n')) != std::string::npos) {
            std::string_view line(partial_.data(), nl);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // cmd.exe's CRLF
            emit(line);
            partial_.erase(0, nl + 1);
        }
        if (partial_.size() > 4096 || (all && !partial_.empty())) {
            emit(partial_);
            partial_.clear();
        }
    }
    static constexpr std::size_t max_logged = 64 * 1024;  // a hook that floods its output is cut short
    const std::function<void(std::string_view)>& log_line_;
    std::string partial_;
    std::size_t logged_ = 0;
};

/// How a run ended, in words, from its exit code (and whether it was stopped).
inline void describe_end(hook_outcome& out, bool timed_out, bool stopping) {
    if (timed_out) {
        out.what = hook_outcome::kind::timed_out;
        out.detail = "still running at its deadline: stopped";
    } else if (stopping && out.exit_code != 0) {
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
}

}  // namespace watch

namespace watch::detail {
/// `name` on each folder of `path` (split at `separator`), with each of `suffixes`.
inline std::optional<std::filesystem::path> search_path(const std::string& path, char separator, const std::string& name,
                                                        std::initializer_list<const char*> suffixes) {
    for (std::size_t at = 0; at <= path.size();) {
        const auto end = path.find(separator, at);
        const std::string dir = path.substr(at, end == std::string::npos ? std::string::npos : end - at);
        for (const char* suffix : suffixes) {
            const auto candidate = forewarn::platform::path_from_utf8(dir) / (name + suffix);
            if (!dir.empty() && runnable(candidate)) return candidate;
        }
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return std::nullopt;
}
}  // namespace watch::detail

#if defined(_WIN32)
#include "process_windows.hpp"
#else
#include "process_posix.hpp"
#endif
