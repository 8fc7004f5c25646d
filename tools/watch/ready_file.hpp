// SPDX-License-Identifier: MIT
// forewarn-watch's --ready-file: a file present while this VM should take traffic (readiness.hpp's
// answer), for health checks that read a file. One thread that sleeps until a change was delivered
// or the answer turns by the clock (an event's NotBefore less --unready-before): nothing at rest.
#pragma once

#include <forewarn/readiness.hpp>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
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
    void start(std::function<forewarn::readiness()> evaluate, std::function<bool()> have_document);
    /// A change was delivered: look again.
    void changed();
    void stop();

private:
    void run();
    void apply(const forewarn::readiness& r);

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
