// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/poller/notice_source.hpp>
#include <forewarn/result.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/// Options of fake_source. Plain struct.
struct fake_source_options {
    cloud origin = cloud::azure;     ///< stamped on every document
    bool can_approve = true;         ///< false: like Alibaba or Tencent (or AWS without a lifecycle hook)
    std::string self_name = "vm_0";  ///< identity().name
    std::chrono::milliseconds interval{1000};  ///< the cadence (or, hanging, the longest wait)
    bool hanging = false;            ///< next() waits for set() (GCE-like) instead of polling
    forewarn::clock clock;           ///< give it a testing::manual_clock in tests
    forewarn::logger log;
};

/**
 * A notice source whose documents a test sets by hand: for unit tests of code built on the
 * poller (handlers, approvals, state) without any wire format. Copies share one fake service, so
 * a test keeps a copy after handing one to a poller (and cancel() on one cancels both);
 * as_vm() gives another VM on the same service. Thread-safe.
 *
 * Cadence: `interval` after the last answer, like a polling client; or, with `hanging`, next()
 * waits until set() changes the document (or `interval` passes), like GCE's hanging GETs. Every
 * wait is on `clock`: give it a testing::manual_clock and nothing sleeps.
 *
 * @code
 * forewarn::testing::manual_clock clock;
 * forewarn::testing::fake_source::options o;
 * o.clock = clock;
 * forewarn::testing::fake_source src(o);
 * forewarn::poller<forewarn::testing::fake_source> p(src, handlers);
 * p.start();
 * src.set(doc_with_one_reboot);               // seen at the next poll
 * clock.advance_and_wait(std::chrono::seconds(1));
 * REQUIRE(src.approvals().size() == 1);
 * @endcode
 */
class fake_source {
public:
    using options = fake_source_options;

    /// The service's side, shared by copies.
    struct identity_type {
        std::string name;
    };

    explicit fake_source(fake_source_options o = {}) : o_(std::move(o)), s_(std::make_shared<shared>()) {}

    /// Another VM on the same fake service (its own name and cursor): several pollers, one service.
    fake_source as_vm(std::string name) const {
        fake_source other(*this);
        other.o_.self_name = std::move(name);
        other.c_ = std::make_shared<vm_state>();
        other.asked_ = false;
        other.version_seen_ = 0;
        return other;
    }

    // --- the fake service -------------------------------------------------------------------

    /// What next() returns from now on (its origin set to the source's); wakes a hanging next().
    void set(document d) {
        d.origin = o_.origin;
        {
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            s_->current = std::move(d);
            ++s_->version;
        }
        s_->signal->notify_all();
    }
    /// The document the fake service holds now.
    document current() const {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        return s_->current;
    }
    /// The next next() (after its wait) fails with `e` instead of answering; queued in order.
    void fail_next(error e) {
        {
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            s_->next_failures.push_back(std::move(e));
        }
        s_->signal->notify_all();
    }
    /// The next approve() fails with `e`; queued in order.
    void fail_approve(error e) {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        s_->approve_failures.push_back(std::move(e));
    }
    /// identity() fails with `e` until cleared (nullopt).
    void fail_identity(std::optional<error> e) {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        s_->identity_failure = std::move(e);
    }
    /// Each successful approve() call's ids, in order.
    std::vector<std::vector<std::string>> approvals() const {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        return s_->approvals;
    }
    /// Each abandon() call's ids (events whose approval a handle declined), in order.
    std::vector<std::vector<std::string>> abandoned() const {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        return s_->abandoned;
    }
    /// Which VM made each successful approve() call (as_vm's name), in order.
    std::vector<std::string> approved_by() const {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        return s_->approved_by;
    }
    /// How many times next() answered (document or error) and identity() was asked.
    std::size_t answers() const {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        return s_->answers;
    }
    std::size_t identity_calls() const {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        return s_->identity_calls;
    }

    // --- the notice source ------------------------------------------------------------------

    result<document> next(clock::time_point not_after = (clock::time_point::max)()) {
        std::unique_lock<std::mutex> lock(s_->signal->mutex);
        if (c_->cancelled) return error(errc::cancelled, "cancelled");
        if (asked_) {
            const auto due = clock::saturating_add(last_answer_, o_.interval);
            const auto until = (std::min)(due, not_after);
            const auto seen = version_seen_;
            o_.clock.wait_until(s_->signal, lock, until, [&] {
                return c_->cancelled || c_->woken || !s_->next_failures.empty() ||
                       (o_.hanging && s_->version != seen);
            });
            c_->woken = false;
            if (c_->cancelled) return error(errc::cancelled, "cancelled");
        }
        asked_ = true;
        last_answer_ = o_.clock.now();
        ++s_->answers;
        if (!s_->next_failures.empty()) {
            error e = std::move(s_->next_failures.front());
            s_->next_failures.pop_front();
            return e;
        }
        version_seen_ = s_->version;
        document d = s_->current;
        d.origin = o_.origin;
        return d;
    }
    void wake() noexcept {
        {
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            c_->woken = true;
        }
        s_->signal->notify_all();
    }
    bool can_approve() const noexcept { return o_.can_approve; }
    /// Notes the events the poller lets go of (approval_handle::decline).
    void abandon(const std::vector<std::string>& ids) {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        s_->abandoned.push_back(ids);
    }
    result<void> approve(const std::vector<std::string>& ids) {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        if (!o_.can_approve) return error(errc::unsupported, "this fake source cannot approve");
        if (c_->cancelled) return error(errc::cancelled, "cancelled");
        if (!s_->approve_failures.empty()) {
            error e = std::move(s_->approve_failures.front());
            s_->approve_failures.pop_front();
            return e;
        }
        s_->approvals.push_back(ids);
        s_->approved_by.push_back(o_.self_name);
        return {};
    }
    result<identity_type> identity() {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        ++s_->identity_calls;
        if (s_->identity_failure) return *s_->identity_failure;
        return identity_type{o_.self_name};
    }
    result<void> validate() const { return {}; }
    void cancel() noexcept {
        {
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            c_->cancelled = true;
        }
        s_->signal->notify_all();
    }
    void reset() noexcept {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        c_->cancelled = false;
    }
    const forewarn::clock& clock() const noexcept { return o_.clock; }
    const forewarn::logger& log() const noexcept { return o_.log; }

private:
    struct shared {
        std::shared_ptr<detail::wake_signal> signal = std::make_shared<detail::wake_signal>();
        document current;
        std::uint64_t version = 0;
        std::deque<error> next_failures;
        std::deque<error> approve_failures;
        std::optional<error> identity_failure;
        std::vector<std::vector<std::string>> approvals;
        std::vector<std::vector<std::string>> abandoned;
        std::vector<std::string> approved_by;
        std::size_t answers = 0;
        std::size_t identity_calls = 0;
    };
    // Per VM (as_vm makes a new one; plain copies share it), under the service's mutex.
    struct vm_state {
        bool cancelled = false;
        bool woken = false;
    };

    fake_source_options o_;
    std::shared_ptr<shared> s_;
    std::shared_ptr<vm_state> c_ = std::make_shared<vm_state>();
    // This copy's cursor (the poller's copy is the one that asks).
    bool asked_ = false;
    clock::time_point last_answer_{};
    std::uint64_t version_seen_ = 0;
};

static_assert(is_notice_source_v<fake_source>);

}  // namespace testing
FOREWARN_END_NAMESPACE
