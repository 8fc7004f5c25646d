// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/**
 * A transport that answers from a script and records every request, for unit tests of code that
 * uses forewarn's clients. Copies share one script and one log, so a test can keep a copy after
 * handing one to a client.
 *
 * @code
 * forewarn::testing::fake_transport t;
 * t.respond(200, body);  // the service's answer, in the form the client under test reads
 * Client c({}, t);       // a cloud's basic_ client over forewarn::testing::fake_transport
 * auto doc = c.fetch();
 * REQUIRE(t.requests().at(0).headers.size() > 0);
 * @endcode
 */
class fake_transport {
public:
    using handler = std::function<result<http_response>(const http_request&)>;

    fake_transport() : state_(std::make_shared<state>()) {}

    /// Queues an answer for the next request without one.
    fake_transport& respond(int status, std::string body = {}, http_headers headers = {}) {
        http_response r;
        r.status = status;
        r.body = std::move(body);
        r.headers = std::move(headers);
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->script.emplace_back(std::move(r));
        return *this;
    }
    /// Queues a transport failure (timeout, connection reset, ...).
    fake_transport& fail(error e) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->script.emplace_back(std::move(e));
        return *this;
    }
    /// Answers requests with `h` once the script is used up (and instead of the default error).
    fake_transport& otherwise(handler h) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->fallback = std::move(h);
        return *this;
    }

    /// Every request sent so far, oldest first.
    std::vector<http_request> requests() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->log;
    }
    std::size_t request_count() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->log.size();
    }
    /// Scripted answers not consumed yet.
    std::size_t pending() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->script.size();
    }
    /// Forgets the script, the fallback and the log.
    void clear() {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->script.clear();
        state_->log.clear();
        state_->fallback = nullptr;
    }

    result<http_response> send(const http_request& request) {
        handler fallback;
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            state_->log.push_back(request);
            if (state_->cancelled) return error(errc::cancelled, "request cancelled");
            if (!state_->script.empty()) {
                auto next = std::move(state_->script.front());
                state_->script.pop_front();
                if (auto* r = std::get_if<http_response>(&next)) {
                    if (r->body.size() > request.max_body)
                        return error(errc::body_too_large, "response body larger than " + std::to_string(request.max_body) + " bytes");
                    return std::move(*r);
                }
                return std::get<error>(std::move(next));
            }
            fallback = state_->fallback;
        }
        if (fallback) return fallback(request);
        return error(errc::transport, "fake_transport: no scripted answer for " + request.url);
    }
    void cancel() noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->cancelled = true;
    }
    void reset() noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->cancelled = false;
    }
    bool cancelled() const noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->cancelled;
    }

private:
    struct state {
        mutable std::mutex mutex;
        std::deque<std::variant<http_response, error>> script;
        std::vector<http_request> log;
        handler fallback;
        bool cancelled = false;
    };
    std::shared_ptr<state> state_;
};

static_assert(is_transport_v<fake_transport>);

}  // namespace testing
FOREWARN_END_NAMESPACE
