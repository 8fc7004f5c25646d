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
    auto pause = options_.first_pause;
    for (int attempt = 1;; ++attempt) {
        auto answer = transport_.send(r);
        std::string problem;
        bool again = false;
        if (answer) {
            if (answer->status >= 200 && answer->status < 300) {
                if (on_result_) on_result_("ok", attempt - 1);
                return;
            }
            problem = "HTTP " + std::to_string(answer->status);
            again = answer->status == 429 || answer->status >= 500;
        } else {
            if (answer.error().code == forewarn::errc::cancelled) return;  // stopping
            problem = answer.error().describe();
            again = answer.error().code != forewarn::errc::body_too_large && answer.error().code != forewarn::errc::invalid_argument;
        }
        if (!again || attempt >= options_.attempts) {
            log_("webhook: " + problem + (again ? ", given up after " + std::to_string(attempt) + " attempts" : ", not retried"));
            if (on_result_) on_result_("failed", attempt - 1);
            return;
        }
        log_("webhook: " + problem + ", again in " + std::to_string(pause.count()) + " ms");
        std::unique_lock<std::mutex> lock(mutex_);
        if (cv_.wait_for(lock, pause, [this] { return stopping_; })) return;
        pause *= 2;
    }
}

}  // namespace watch
