// SPDX-License-Identifier: MIT
// What both halves of platform/process.hpp share: an outcome's name and words, a hook's output
// line by line, and the search of PATH.
#include "process.hpp"

#include <forewarn/platform/files.hpp>

namespace watch {

std::string_view to_string(hook_outcome::kind k) {
    switch (k) {
    case hook_outcome::kind::succeeded: return "succeeded";
    case hook_outcome::kind::failed: return "failed";
    case hook_outcome::kind::timed_out: return "timed_out";
    case hook_outcome::kind::not_started: return "not_started";
    }
    return "unknown";
}

void output_lines::add(const char* data, std::size_t n) {
    partial_.append(data, n);
    drain(false);
}

void output_lines::emit(std::string_view line) {
    if (logged_ > max_logged) return;
    logged_ += line.size();
    if (logged_ > max_logged) {
        log_line_("... (more output not logged)");
        return;
    }
    log_line_(line.substr(0, 4096));
}

void output_lines::drain(bool all) {
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

void describe_end(hook_outcome& out, bool timed_out, bool stopping) {
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

hook_outcome run_hook(const std::string& command, const std::string& input, const std::vector<std::string>& env,
                      std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stop,
                      const std::function<void(std::string_view)>& log_line) {
    const auto started = std::chrono::steady_clock::now();
    hook_outcome out;
    const std::optional<bool> timed_out = detail::run_process(command, input, env, deadline, stop, log_line, out);
    if (!timed_out) return out;  // not started: out.detail says why
    out.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    describe_end(out, *timed_out, stop.load());
    return out;
}

}  // namespace watch

namespace watch::detail {

std::optional<std::filesystem::path> search_path(const std::string& path, char separator, const std::string& name,
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
