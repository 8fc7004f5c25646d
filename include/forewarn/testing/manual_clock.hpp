// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/**
 * A forewarn::clock that moves only when a test says so. Give it to the clients (their
 * `client_options::clock`), and the poller, the retry backoff, the rate limit and the in-process
 * emulator all wait on it: nothing sleeps in real time, and every wait ends exactly when
 * advance() reaches its deadline. Copies share one time line. Thread-safe.
 *
 * It also knows when the threads that work on it are idle: a thread started by forewarn (the
 * poller's, a lane's for hanging GETs) is counted from its start, and is idle while it waits on
 * this clock for its next work. A thread in a retry backoff or a rate-limit wait is not idle:
 * its work goes on once that wait ends, and only time ends it, so wait_idle() moves time to the
 * end of the earliest such wait itself and looks again. wait_idle() returns once all of them are idle;
 * advance_and_wait() advances, then does the same. So "idle" means the work is done.
 *
 * A backoff or rate-limit wait by a thread when no counted thread runs (a test that drives a
 * poller's poll_once() on its own thread) has nobody to move time for it: after
 * `unattended_wait` of real time with the clock standing still, it moves time to its own end.
 *
 * @code
 * forewarn::testing::manual_clock clock;
 * // ... a source and a poller on `clock`, started ...
 * clock.wait_idle();                                 // the first poll is done
 * clock.advance_and_wait(std::chrono::seconds(1));   // one more, and everything it caused
 * @endcode
 */
class manual_clock : public forewarn::clock {
public:
    /// Time starts at 0; the wall clock at `wall_epoch` (default: now, whole seconds).
    explicit manual_clock(wall_time_point wall_epoch = std::chrono::time_point_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now()))
        : manual_clock(std::make_shared<state>(wall_epoch)) {}

    /// Moves time forward and wakes every waiter to look again (each counts as busy until it
    /// waits again or ends).
    void advance(duration d) const { state_->advance(d); }

    /// Steps the wall clock alone (negative: back) with monotonic time standing still and nobody
    /// woken: what time sync does to a guest whose monotonic clock stopped while it was paused.
    void step_wall(duration d) const { state_->wall_offset_ns.fetch_add(d.count()); }

    /// The wall time now() 0 corresponds to (before any step_wall()).
    wall_time_point wall_epoch() const noexcept { return state_->wall_epoch; }

    /// Threads asleep on this clock now.
    std::size_t sleepers() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->asleep;
    }
    /// Threads started by forewarn on this clock that have not ended.
    std::size_t threads() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->threads;
    }
    /// How many times a waiter went (back) to sleep on this clock since it was made.
    std::uint64_t sleeps() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->sleeps;
    }

    /// Blocks until at least `n` threads wait on this clock; false if `real_timeout` passes
    /// first (a safety net so that a broken test fails instead of hanging).
    bool wait_for_sleepers(std::size_t n, std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) const {
        std::unique_lock<std::mutex> lock(state_->mutex);
        return state_->changed.wait_for(lock, real_timeout, [&] { return state_->asleep >= n; });
    }

    /**
     * Blocks until every thread started on this clock waits on it for its next work (or has
     * ended) and nothing woke since: the work that the last advance() or notification caused is
     * done. While the only threads awake are asleep in a backoff or rate-limit wait, time moves
     * to the end of the earliest such wait (the work needs that time to pass). True at once when
     * no such thread runs. False after `real_timeout`.
     */
    bool wait_idle(std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) const {
        const auto give_up = std::chrono::steady_clock::now() + real_timeout;
        for (;;) {
            std::optional<time_point> step_to;
            {
                std::unique_lock<std::mutex> lock(state_->mutex);
                if (!state_->changed.wait_until(lock, give_up, [&] { return state_->asleep >= state_->threads; }))
                    return false;
                if (!state_->earliest_busy_deadline_locked()) return true;
                if (std::chrono::steady_clock::now() >= give_up) return false;  // work that never ends
                // Time moves in order: to the earliest deadline of any sleeper, so a waiter due
                // before the backoff ends runs at its own time, not late.
                step_to = state_->earliest_deadline_locked();
            }
            const auto now = this->now();
            advance(*step_to > now ? *step_to - now : duration(0));
        }
    }

    /// How long a backoff or rate-limit wait waits in real time, with the clock standing still
    /// and no counted thread running, before it moves time to its end (see the class comment).
    static constexpr std::chrono::milliseconds unattended_wait{2000};

    /// advance(d), then wait_idle().
    bool advance_and_wait(duration d, std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) const {
        advance(d);
        return wait_idle(real_timeout);
    }

private:
    struct waiter {
        std::shared_ptr<forewarn::detail::wake_signal> signal;
        bool asleep = false;
        time_point deadline{};
    };

    class state final : public clock::implementation,
                        public forewarn::detail::clock_observer,
                        public std::enable_shared_from_this<state> {
    public:
        explicit state(wall_time_point epoch) : wall_epoch(epoch) {}

        time_point now() const noexcept override { return time_point(duration(now_ns.load())); }
        wall_time_point wall_now() const noexcept override {
            return wall_epoch +
                   std::chrono::duration_cast<wall_time_point::duration>(duration(now_ns.load() + wall_offset_ns.load()));
        }

        bool wait_until(const std::shared_ptr<forewarn::detail::wake_signal>& signal, std::unique_lock<std::mutex>& lock,
                        time_point deadline, forewarn::detail::predicate_ref pred) const override {
            attach(*signal, std::const_pointer_cast<state>(shared_from_this()));
            typename std::list<waiter>::iterator self;
            {
                // Registered before the first look at the time, so no advance() slips between.
                std::lock_guard<std::mutex> g(mutex);
                self = waiters.insert(waiters.end(), waiter{signal, false, deadline});
            }
            // The signal's mutex is held from each look at pred() and the time until the wait
            // releases it: advance() and notify_all() mark this waiter busy under that same
            // mutex, so it can never be counted asleep after it was woken.
            while (!pred() && now() < deadline) {
                {
                    std::lock_guard<std::mutex> g(mutex);
                    self->asleep = true;
                    ++asleep;
                    ++sleeps;
                }
                changed.notify_all();
                if (signal->busy() && deadline != (time_point::max)()) {
                    // Woken (not a time-out), or alone with time standing still: look again.
                    // A time-out with someone else around keeps waiting, uncounted as a wake-up.
                    for (;;) {
                        const auto before = now_ns.load();
                        if (signal->cv.wait_for(lock, unattended_wait) == std::cv_status::no_timeout) break;
                        if (now_ns.load() == before && unattended()) {
                            lock.unlock();
                            advance(deadline - now());
                            lock.lock();
                            break;
                        }
                        if (pred() || now() >= deadline) break;
                    }
                } else {
                    signal->cv.wait(lock);
                }
                std::lock_guard<std::mutex> g(mutex);
                if (self->asleep) {  // a spurious wake-up: nobody marked it
                    self->asleep = false;
                    --asleep;
                }
            }
            {
                std::lock_guard<std::mutex> g(mutex);
                if (self->asleep) --asleep;
                waiters.erase(self);
            }
            changed.notify_all();
            return pred();
        }

        void thread_started() const noexcept override {
            std::lock_guard<std::mutex> g(mutex);
            ++threads;
        }
        void thread_ended() const noexcept override {
            {
                std::lock_guard<std::mutex> g(mutex);
                if (threads > 0) --threads;
            }
            changed.notify_all();
        }

        // No thread counted on this clock runs: nobody else moves time.
        bool unattended() const {
            std::lock_guard<std::mutex> g(mutex);
            return threads == 0;
        }

        // The earliest deadline of any sleeper.
        std::optional<time_point> earliest_deadline_locked() const {
            std::optional<time_point> earliest;
            for (const auto& w : waiters)
                if (w.asleep && (!earliest || w.deadline < *earliest)) earliest = w.deadline;
            return earliest;
        }

        // The end of the earliest backoff or rate-limit wait of a sleeper, if any.
        std::optional<time_point> earliest_busy_deadline_locked() const {
            std::optional<time_point> earliest;
            for (const auto& w : waiters)
                if (w.asleep && w.signal->busy() && (!earliest || w.deadline < *earliest)) earliest = w.deadline;
            return earliest;
        }

        // notify_all() on a signal: its sleepers are busy from now on.
        void waking(const forewarn::detail::wake_signal* signal) noexcept override {
            std::lock_guard<std::mutex> g(mutex);
            mark_awake_locked(signal);
        }

        void advance(duration d) const {
            if (d.count() > 0) now_ns.fetch_add(d.count());
            std::vector<std::shared_ptr<forewarn::detail::wake_signal>> targets;
            {
                std::lock_guard<std::mutex> g(mutex);
                for (const auto& w : waiters)
                    if (std::find(targets.begin(), targets.end(), w.signal) == targets.end()) targets.push_back(w.signal);
            }
            // Each waiter's own mutex first, then ours (the order wait_until takes them in).
            for (auto& t : targets) {
                std::lock_guard<std::mutex> signal_lock(t->mutex);
                {
                    std::lock_guard<std::mutex> g(mutex);
                    mark_awake_locked(t.get());
                }
                t->cv.notify_all();
            }
        }

        const wall_time_point wall_epoch;
        mutable std::atomic<std::int64_t> now_ns{0};
        mutable std::atomic<std::int64_t> wall_offset_ns{0};  // step_wall()
        mutable std::mutex mutex;
        mutable std::condition_variable changed;
        mutable std::list<waiter> waiters;
        mutable std::size_t asleep = 0;
        mutable std::size_t threads = 0;
        mutable std::uint64_t sleeps = 0;

    private:
        void mark_awake_locked(const forewarn::detail::wake_signal* signal) const noexcept {
            for (auto& w : waiters)
                if (w.signal.get() == signal && w.asleep) {
                    w.asleep = false;
                    --asleep;
                }
        }
    };

    explicit manual_clock(std::shared_ptr<state> s) : forewarn::clock(s), state_(std::move(s)) {}

    std::shared_ptr<state> state_;
};

}  // namespace testing
FOREWARN_END_NAMESPACE
