// SPDX-License-Identifier: MIT
// forewarn-watch's --webhook sender (webhook.hpp): its queue, its thread, its retries.
#include "webhook.hpp"

#include <forewarn/transport.hpp>
#include <forewarn/transport/default.hpp>

#include <string>
#include <utility>

namespace watch {

any_transport webhook::default_transport() { return any_transport::of(forewarn::default_transport()); }

std::string webhook::check_url(const std::string& url) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) return "--webhook needs an http:// or https:// URL";
    forewarn::http_request r;
    r.method = forewarn::http_method::post;
    r.url = url;
    if (auto e = forewarn::check_request(r)) return "--webhook: " + e->describe();
    return {};
}

webhook::webhook(options o, std::function<void(std::string_view)> log, result_fn on_result, any_transport transport)
    : options_(std::move(o)), log_(std::move(log)), on_result_(std::move(on_result)), transport_(std::move(transport)) {
    thread_ = std::thread([this] { run(); });
}

webhook::~webhook() { stop(); }

void webhook::send(std::string line) {
    bool dropped = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) return;
        if (queue_.size() >= options_.queue_limit) {
            queue_.pop_front();
            dropped = true;
        }
        queue_.push_back(std::move(line));
    }
    cv_.notify_all();
    if (dropped) {
        log_("webhook: more than " + std::to_string(options_.queue_limit) + " changes waiting: the oldest dropped");
        if (on_result_) on_result_("dropped", 0);
    }
}

void webhook::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    transport_.cancel();
    sleep_.interrupt();  // a pause before a retry ends at once
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void webhook::run() {
    for (;;) {
        std::string line;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (stopping_) return;
            line = std::move(queue_.front());
            queue_.pop_front();
        }
        deliver(line);
    }
}

void webhook::deliver(const std::string& line) {
    forewarn::http_request r;
    r.method = forewarn::http_method::post;
    r.url = options_.url;
    r.body = options_.body.empty() ? line : options_.body.render(line);
    r.headers.push_back({"Content-Type", "application/json"});
    if (!options_.authorization.empty()) r.headers.push_back({"Authorization", options_.authorization});
    r.timeout = options_.timeout;
    r.max_body = 64 * 1024;  // the answer is not read beyond this
    // 429, 5xx, a failed connection and a timeout tried again, up to the attempts, the pause doubled
    // each time (sender_retries).
    const forewarn::retry_policy policy = sender_retries(options_.attempts, options_.first_pause, std::chrono::hours(24));
    int tries = 0;
    std::string problem;
    auto attempt = [&]() -> forewarn::result<void> {
        ++tries;
        auto answer = transport_.send(r);
        if (!answer) {
            problem = answer.error().describe();
        } else if (answer->status >= 200 && answer->status < 300) {
            return {};
        } else {
            problem = "HTTP " + std::to_string(answer->status);
            answer = forewarn::error(forewarn::errc::http_status, problem, answer->status);
        }
        if (answer.error().code != forewarn::errc::cancelled && tries < policy.options().max_attempts &&
            forewarn::is_retryable(answer.error(), policy.rules()))
            log_("webhook: " + problem + ", again in " + std::to_string(policy.backoff(tries).count()) + " ms");
        return std::move(answer).error();
    };
    const auto sent = policy.run(attempt, sleep_);
    if (sent) {
        if (on_result_) on_result_("ok", tries - 1);
        return;
    }
    if (sent.error().code == forewarn::errc::cancelled) return;  // stopping
    const bool again = forewarn::is_retryable(sent.error(), policy.rules());
    log_("webhook: " + problem + (again ? ", given up after " + std::to_string(tries) + " attempts" : ", not retried"));
    if (on_result_) on_result_("failed", tries - 1);
}

}  // namespace watch
