// SPDX-License-Identifier: MIT
#pragma once

// The poller's health part (detail::health_record): the counters behind health(), kept as
// poller_health (poller/health.hpp).

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/event.hpp>
#include <forewarn/poller/health.hpp>
#include <forewarn/result.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

namespace detail {

/// The poller's health part: the counters behind health(). Its own mutex, held only to change or
/// copy the record (it never calls out), so any thread may read it while the poller writes.
class health_record {
public:
    /// A document was had at `wall` (`now` on the monotonic clock).
    void polled(const document& d, clock::wall_time_point wall, clock::time_point now) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++h_.polls;
        h_.consecutive_failures = 0;
        h_.last_success = wall;
        h_.last_success_at = now;
        h_.events = d.events.size();
        h_.key_errors = d.key_errors;
    }
    /// A poll failed.
    void failed() {
        std::lock_guard<std::mutex> lock(mutex_);
        ++h_.failures;
        ++h_.consecutive_failures;
    }
    /// Any error reported.
    void noted(const error& e) {
        std::lock_guard<std::mutex> lock(mutex_);
        h_.last_error = e;
    }
    void set_self(std::string name) {
        std::lock_guard<std::mutex> lock(mutex_);
        h_.self = std::move(name);
    }
    std::string self() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return h_.self;
    }
    /// The wanted events not approved yet; `approved`: after a successful approval request.
    void awaiting(std::vector<std::string> ids, bool approved = false) {
        std::lock_guard<std::mutex> lock(mutex_);
        h_.awaiting_approval = std::move(ids);
        if (approved) ++h_.approvals;
    }
    poller_health snapshot(bool running) const {
        std::lock_guard<std::mutex> lock(mutex_);
        poller_health h = h_;
        h.running = running;
        return h;
    }

private:
    mutable std::mutex mutex_;
    poller_health h_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
