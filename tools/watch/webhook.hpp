// SPDX-License-Identifier: MIT
// forewarn-watch's --webhook: one POST per change, the change's JSON line as the body or a
// --webhook-template of one's own (Slack, Teams) with the change's fields in it, escaped as JSON.
// Sent from a thread of its own through a bounded queue, so a slow or hanging server delays no
// hook, approval or poll; retried with a growing pause on a connection error, a timeout, 429 or
// 5xx, a few times, by the library's retry_policy; an Authorization header only from FOREWARN_WEBHOOK_AUTHORIZATION. The sender
// is webhook.cpp; the template, webhook_template.hpp.
#pragma once

#include "any_transport.hpp"
#include "webhook_template.hpp"

#include <forewarn/clock.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace watch {

class webhook {
public:
    struct options {
        std::string url;
        webhook_template body;        // empty: the JSON line
        std::string authorization;    // the Authorization header's value, from the environment only
        std::chrono::milliseconds timeout{std::chrono::seconds(10)};
        int attempts = 5;             // 1 + 4 retries
        std::chrono::milliseconds first_pause{std::chrono::seconds(1)};  // doubled after each retry
        std::size_t queue_limit = 1000;  // more waiting changes: the oldest is dropped
    };
    /// "ok", "failed" (given up or refused) or "dropped" (the queue was full), and the retries.
    using result_fn = std::function<void(std::string_view result, int retries)>;

    /// The URL's problem in words, or empty: http:// or https://, nothing a request cannot carry.
    static std::string check_url(const std::string& url);

    /// Over `transport` (the agent's: forewarn's default transport, default_transport(); a test's:
    /// a fake_transport). Starts its thread.
    webhook(options o, std::function<void(std::string_view)> log, result_fn on_result, any_transport transport = default_transport());
    webhook(const webhook&) = delete;
    webhook& operator=(const webhook&) = delete;
    ~webhook();

    /// Queues the change's JSON line; returns at once.
    void send(std::string line);
    /// Stops at once, the request in flight cancelled; what is still queued is not sent.
    void stop();
    /// forewarn's default transport (WinHTTP on Windows, libcurl elsewhere), as the agent sends.
    static any_transport default_transport();

private:
    void run();
    void deliver(const std::string& line);

    options options_;
    std::function<void(std::string_view)> log_;
    result_fn on_result_;
    any_transport transport_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::string> queue_;
    bool stopping_ = false;
    forewarn::interruptible_sleep sleep_;  // the pauses between tries, ended by stop()
    std::thread thread_;
};

}  // namespace watch
