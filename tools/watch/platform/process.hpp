// SPDX-License-Identifier: MIT
// One hook process: `command` run by the platform's shell (POSIX /bin/sh -c, Windows cmd.exe /c)
// with `input` on its stdin, `env` ("NAME=value") added to forewarn-watch's environment (never its
// FOREWARN_ETCD_PASSWORD or FOREWARN_WEBHOOK_AUTHORIZATION), its output given line by line to
// `log_line`, stopped as a whole (its process group, or its job object) when `deadline` comes or
// `stop` is raised. Blocks the calling thread until the process is gone. The platform's half:
// process_posix.cpp, process_windows.cpp; what both share, process.cpp.
#pragma once

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

std::string_view to_string(hook_outcome::kind k);

/// This process's id (a file name of its own: `forewarn-watch check`'s probe).
unsigned long long process_id();

/// Whether `path` is a file this user may run (on Windows: a file).
bool runnable(const std::filesystem::path& path);

/// Where `name` is found on PATH, with the platform's program suffixes (Windows: .exe, .cmd,
/// .bat, .com); nothing when it is not there.
std::optional<std::filesystem::path> find_on_path(const std::string& name);

/// One hook process (the file's comment), timed, its end in words (process.cpp, over the
/// platform's run_process). POSIX: /bin/sh -c in a process group of its own, stopped with SIGTERM,
/// then SIGKILL 2 s later; Windows: cmd.exe /c in a job object, ended with it.
hook_outcome run_hook(const std::string& command, const std::string& input, const std::vector<std::string>& env,
                      std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stop,
                      const std::function<void(std::string_view)>& log_line);

/// A hook's output, line by line, at most 64 KiB of it logged (lines cut at 4 KiB).
class output_lines {
public:
    explicit output_lines(const std::function<void(std::string_view)>& log_line) : log_line_(log_line) {}
    void add(const char* data, std::size_t n);
    void finish() { drain(true); }

private:
    void emit(std::string_view line);
    void drain(bool all);
    static constexpr std::size_t max_logged = 64 * 1024;  // a hook that floods its output is cut short
    const std::function<void(std::string_view)>& log_line_;
    std::string partial_;
    std::size_t logged_ = 0;
};

/// How a run ended, in words, from its exit code (and whether it was stopped).
void describe_end(hook_outcome& out, bool timed_out, bool stopping);

}  // namespace watch

namespace watch::detail {
/// The platform's half of run_hook (process_posix.cpp, process_windows.cpp): runs the process to
/// its end, its exit code in `out`; whether the deadline (or `stop`) ended it, or nothing when it
/// could not start (`out.detail` says why).
std::optional<bool> run_process(const std::string& command, const std::string& input, const std::vector<std::string>& env,
                                std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stop,
                                const std::function<void(std::string_view)>& log_line, hook_outcome& out);
/// `name` on each folder of `path` (split at `separator`), with each of `suffixes`.
std::optional<std::filesystem::path> search_path(const std::string& path, char separator, const std::string& name,
                                                 std::initializer_list<const char*> suffixes);
}  // namespace watch::detail

