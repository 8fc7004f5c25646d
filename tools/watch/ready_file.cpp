// SPDX-License-Identifier: MIT
// forewarn-watch's --ready-file (ready_file.hpp): its thread, and the file written or removed.
#include "ready_file.hpp"

#include <forewarn/platform/files.hpp>

#include <filesystem>
#include <optional>
#include <system_error>

namespace watch {

void ready_file::start(std::function<forewarn::readiness()> evaluate, std::function<bool()> have_document) {
    evaluate_ = std::move(evaluate);
    have_document_ = std::move(have_document);
    thread_ = std::thread([this] { run(); });
}

void ready_file::changed() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        dirty_ = true;
    }
    cv_.notify_all();
}

void ready_file::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void ready_file::run() {
    bool known = false;
    std::optional<bool> written;
    for (;;) {
        std::optional<std::chrono::system_clock::time_point> until;
        if (!known) known = have_document_();
        if (known) {
            const auto r = evaluate_();
            if (!written || *written != r.ready) {
                apply(r);
                written = r.ready;
            }
            until = r.changes_at;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        if (!dirty_ && !stopping_) {
            if (!known) cv_.wait_for(lock, std::chrono::milliseconds(100));  // the first poll only
            else if (until) cv_.wait_until(lock, *until + std::chrono::milliseconds(1));
            else cv_.wait(lock, [this] { return dirty_ || stopping_; });
        }
        if (stopping_) return;
        dirty_ = false;
    }
}

void ready_file::apply(const forewarn::readiness& r) {
    const auto path = forewarn::platform::path_from_utf8(path_);
    if (r.ready) {
        auto w = forewarn::platform::write_file_atomically(path, "ready\n");
        if (!w) return log_("--ready-file: " + w.error().describe());
        log_("ready file " + path_ + " written: " + r.why);
    } else {
        std::error_code ec;
        std::filesystem::remove(path, ec);
        if (ec) return log_("--ready-file: cannot remove " + path_ + ": " + ec.message());
        log_("ready file " + path_ + " removed: " + r.why);
    }
}

}  // namespace watch
