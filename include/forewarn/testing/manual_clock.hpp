// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/detail/wake_signal.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/**
 * A clock that moves only when a test says so, for basic_poller<Client, testing::manual_clock>:
 * the poller's waits end when advance() reaches their deadline, so a test never sleeps.
 * Copies share one time line. Thread-safe.
 *
 * @code
 * forewarn::testing::manual_clock clock;
 * forewarn::basic_poller<my_fake_client, forewarn::testing::manual_clock> p(client, handlers, {}, clock);
 * p.start();
 * clock.wait_for_sleepers(1);           // the first poll is done, the poller waits for its next
 * clock.advance_and_wait(std::chrono::seconds(1));  // one more poll
 * @endcode
 */
class manual_clock {
public:
    using rep = std::int64_t;
    using period = std::nano;
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<manual_clock, duration>;
    static constexpr bool is_steady = true;  ///< it never goes back

    manual_clock() : state_(std::make_shared<state>()) {}

    time_point now() const noexcept { return time_point(duration(state_->now.load())); }

    /// Moves time forward and wakes every thread waiting on this clock to look again.
    void advance(duration d) {
        if (d.count() > 0) state_->now.fetch_add(d.count());
        std::vector<std::weak_ptr<forewarn::detail::wake_signal>> targets;
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            for (const auto& w : state_->waiters) targets.push_back(w.signal);
        }
        // The waiter's own mutex, never while holding ours: a waiter holds its mutex when it
        // registers with us, so taking both here would invert the order.
        for (auto& t : targets) {
            if (auto s = t.lock()) {
                std::lock_guard<std::mutex> lock(s->mutex);
                s->cv.notify_all();
            }
        }
    }

    /// Threads asleep on this clock now.
    std::size_t sleepers() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->asleep;
    }

    /// How many times a waiter went (back) to sleep on this clock since it was made.
    std::uint64_t sleeps() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->sleeps;
    }

    /// Blocks until at least `n` threads wait on this clock; false if `real_timeout` passes first
    /// (a safety net so that a broken test fails instead of hanging).
    bool wait_for_sleepers(std::size_t n, std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) const {
        std::unique_lock<std::mutex> lock(state_->mutex);
        return state_->changed.wait_for(lock, real_timeout, [&] { return state_->asleep >= n; });
    }

    /// Blocks until more than `count` waits have begun; false after `real_timeout`.
    bool wait_for_sleeps(std::uint64_t count, std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) const {
        std::unique_lock<std::mutex> lock(state_->mutex);
        return state_->changed.wait_for(lock, real_timeout, [&] { return state_->sleeps > count; });
    }

    /**
     * Advances and waits until a waiter woken by it has gone back to sleep: with one poller on
     * this clock, its work for this step is done when it returns. False after `real_timeout`.
     */
    bool advance_and_wait(duration d, std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) {
        const auto before = sleeps();
        advance(d);
        return wait_for_sleeps(before, real_timeout);
    }

    /// The hook the poller calls (through detail::wait_until) to sleep until `deadline`.
    template <class Pred>
    bool wait_until(const std::shared_ptr<forewarn::detail::wake_signal>& signal, std::unique_lock<std::mutex>& lock,
                    time_point deadline, Pred pred) const {
        typename std::list<waiter>::iterator self;
        {
            // Registered before the first look at the time, so no advance() can slip between.
            std::lock_guard<std::mutex> g(state_->mutex);
            self = state_->waiters.insert(state_->waiters.end(), waiter{signal});
        }
        bool asleep = false;
        while (!pred() && now() < deadline) {
            // Each time the waiter goes (back) to sleep counts, so advance_and_wait() also
            // returns when an advance did not reach the deadline.
            {
                std::lock_guard<std::mutex> g(state_->mutex);
                ++state_->sleeps;
                if (!asleep) ++state_->asleep;
                asleep = true;
            }
            state_->changed.notify_all();
            signal->cv.wait(lock);
        }
        {
            std::lock_guard<std::mutex> g(state_->mutex);
            state_->waiters.erase(self);
            if (asleep) --state_->asleep;
        }
        state_->changed.notify_all();
        return pred();
    }

private:
    struct waiter {
        std::weak_ptr<forewarn::detail::wake_signal> signal;
    };
    struct state {
        std::atomic<rep> now{0};
        mutable std::mutex mutex;
        std::condition_variable changed;
        std::list<waiter> waiters;
        std::uint64_t sleeps = 0;
        std::size_t asleep = 0;
    };
    std::shared_ptr<state> state_;
};

}  // namespace testing
FOREWARN_END_NAMESPACE
