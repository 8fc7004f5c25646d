// SPDX-License-Identifier: MIT
// forewarn-watch's --ready-file: a file present while this VM should take traffic (readiness.hpp's
// answer), for health checks that read a file. One thread that sleeps until a change was delivered
// or the answer turns by the clock (an event's NotBefore less --unready-before): nothing at rest.
#pragma once

#include <forewarn/platform/files.hpp>
#include <forewarn/readiness.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

namespace watch {

class ready_file {
public:
    ready_file(std::string path, std::function<void(std::string_view)> log) : path_(std::move(path)), log_(std::move(log)) {}
    ready_file(const ready_file&) = delete;
    ready_file& operator=(const ready_file&) = delete;
    ~ready_file() { stop(); }

    /// Starts the thread: `evaluate` gives the answer now; `have_document` says whether the poller
    /// has had its first document (until then the file is left as it was).
    void start(std::function<forewarn::readiness()> evaluate, std::function<bool()> have_document) {
        evaluate_ = std::move(evaluate);
        have_document_ = std::move(have_document);
        thread_ = std::thread([this] { run(); });
    }

    /// A change was delivered: look again.
    void changed() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            dirty_ = true;
        }
        cv_.notify_all();
    }

    void stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

private:
    void run() {
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

    void apply(const forewarn::readiness& r) {
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

    std::string path_;
    std::function<void(std::string_view)> log_;
    std::function<forewarn::readiness()> evaluate_;
    std::function<bool()> have_document_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool dirty_ = false, stopping_ = false;
    std::thread thread_;
};

}  // namespace watch
