// SPDX-License-Identifier: MIT
#pragma once

// How a poller is doing: poller_health (public, health()'s snapshot) and the part that keeps it
// (detail::health_record).

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// A snapshot of how a poller is doing (health()).
struct poller_health {
    bool running = false;
    std::optional<clock::wall_time_point> last_success;  ///< wall time of the last document had
    std::optional<clock::time_point> last_success_at;    ///< the same on the source's monotonic clock
    std::uint64_t polls = 0;                             ///< documents had
    std::uint64_t failures = 0;                          ///< failed polls
    std::uint32_t consecutive_failures = 0;              ///< failed polls since the last document
    std::optional<error> last_error;                     ///< the last error reported (any kind)
    /// The source's keys that failed in the last document while others answered
    /// (document::key_errors): each error's URL names its key. Empty when every key answered.
    std::vector<error> key_errors;
    std::string self;                                    ///< this VM's name, once known
    std::size_t events = 0;                              ///< events in the last document
    std::vector<std::string> awaiting_approval;          ///< wanted events not approved yet
    std::uint64_t approvals = 0;                         ///< successful approval requests
};

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
