// SPDX-License-Identifier: MIT
// forewarn-watch's --webhook: one POST per change, the change's JSON line as the body or a
// --webhook-template of one's own (Slack, Teams) with the change's fields in it, escaped as JSON.
// Sent from a thread of its own through a bounded queue, so a slow or hanging server delays no
// hook, approval or poll; retried with a growing pause on a connection error, a timeout, 429 or
// 5xx, a few times; an Authorization header only from FOREWARN_WEBHOOK_AUTHORIZATION.
#pragma once

#include <forewarn/transport/default.hpp>
#include <forewarn/json.hpp>
#include <forewarn/transport.hpp>

#include "json.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace watch {

/// A --webhook-template: JSON text with {{name}} placeholders, each a member of the change's JSON
/// line (change, cloud, id, type, raw_type, status, raw_status, resource_type, resources,
/// not_before, description, source, raw_source, duration_s, reason, evidence, observed_pause_s,
/// observed_pause_seen_by, incarnation) put
/// in as the inside of a JSON string, or {{json}}, the whole line as a JSON value.
class webhook_template {
public:
    /// Parses `text`; the error in words, or empty.
    std::string parse(std::string text) {
        static const char* const known[] = {"json",        "change",      "cloud",      "id",         "type",
                                            "raw_type",    "status",      "raw_status", "resource_type", "resources",
                                            "not_before",  "description", "source",     "raw_source", "duration_s",
                                            "reason",      "evidence",    "observed_pause_s", "observed_pause_seen_by",
                                            "incarnation"};
        parts_.clear();
        std::size_t at = 0;
        while (at < text.size()) {
            const auto open = text.find("{{", at);
            if (open == std::string::npos) break;
            const auto close = text.find("}}", open + 2);
            if (close == std::string::npos) return "--webhook-template: \"{{\" at byte " + std::to_string(open) + " is never closed";
            const std::string name = text.substr(open + 2, close - open - 2);
            bool ok = false;
            for (const char* k : known) ok = ok || name == k;
            if (!ok) return "--webhook-template: unknown placeholder {{" + name + "}}";
            parts_.push_back({text.substr(at, open - at), name});
            at = close + 2;
        }
        parts_.push_back({text.substr(at), {}});
        // What it gives for a change must be JSON, whatever the change holds.
        forewarn::change sample;
        sample.event.id = "quote\" backslash\\ newline\n";
        sample.event.resources = {"vm0", "vm\"1"};
        auto body = render(forewarn::to_json(sample, forewarn::invalid_utf8::replace).value_or("{}"));
        if (std::string why; !parse_json(body, &why)) return "--webhook-template does not give JSON: " + why;
        return {};
    }

    bool empty() const noexcept { return parts_.empty(); }

    /// The body for a change, from its JSON line.
    std::string render(const std::string& line) const {
        auto doc = parse_json(line);
        std::string out;
        for (const auto& p : parts_) {
            out += p.text;
            if (p.name.empty()) continue;
            if (p.name == "json") {
                out += line;
                continue;
            }
            std::string value;
            if (doc && doc->IsObject()) {
                if (const auto* v = json_member(*doc, p.name.c_str())) {
                    if (v->IsString()) value = json_text(*v);
                    else if (v->IsInt64()) value = std::to_string(v->GetInt64());
                    else if (v->IsNumber()) {
                        char num[32];
                        std::snprintf(num, sizeof num, "%.3f", v->GetDouble());
                        value = num;
                    }
                    else if (v->IsBool()) value = v->GetBool() ? "true" : "false";
                    else if (v->IsArray())
                        for (const auto& item : v->GetArray())
                            if (item.IsString()) value += (value.empty() ? "" : ", ") + json_text(item);
                }
            }
            // Valid UTF-8: it came out of a JSON text.
            const std::string quoted = forewarn::json_string(value, forewarn::invalid_utf8::replace).value_or("\"\"");
            out += quoted.size() >= 2 ? quoted.substr(1, quoted.size() - 2) : std::string();
        }
        return out;
    }

private:
    struct part {
        std::string text;  // literal text before the placeholder
        std::string name;  // the placeholder, empty for the tail
    };
    std::vector<part> parts_;
};

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
    static std::string check_url(const std::string& url) {
        if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) return "--webhook needs an http:// or https:// URL";
        forewarn::http_request r;
        r.method = forewarn::http_method::post;
        r.url = url;
        if (auto e = forewarn::check_request(r)) return "--webhook: " + e->describe();
        return {};
    }

    webhook(options o, std::function<void(std::string_view)> log, result_fn on_result)
        : options_(std::move(o)), log_(std::move(log)), on_result_(std::move(on_result)) {
        thread_ = std::thread([this] { run(); });
    }
    webhook(const webhook&) = delete;
    webhook& operator=(const webhook&) = delete;
    ~webhook() { stop(); }

    /// Queues the change's JSON line; returns at once.
    void send(std::string line) {
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

    /// Stops at once, the request in flight cancelled; what is still queued is not sent.
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        transport_.cancel();
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

private:
    void run() {
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

    void deliver(const std::string& line) {
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

    options options_;
    std::function<void(std::string_view)> log_;
    result_fn on_result_;
    forewarn::default_transport transport_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::string> queue_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace watch
