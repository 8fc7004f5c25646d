// SPDX-License-Identifier: MIT
#pragma once

// The one clock of forewarn: every wait (the poller's, a retry backoff, the rate limit, a hanging
// request of the in-process emulator) goes through a forewarn::clock, so a test that injects
// testing::manual_clock never sleeps in real time and can tell when every thread is idle.

#include <forewarn/config.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>

FOREWARN_BEGIN_NAMESPACE

namespace detail {

class clock_observer;

/**
 * The mutex and condition variable a thread waits on. Shared (shared_ptr) so that whoever may
 * wake it (an approval handle, a clock, a cancel()) can outlive the waiter safely. Wake it with
 * notify_all(), never with cv.notify_all() directly: a manual clock counts the woken threads as
 * busy before they run, so a test waiting for idleness never mistakes them for idle.
 */
class wake_signal {
public:
    wake_signal() = default;
    /// `busy`: its waits are work in progress (a retry backoff, a rate limit), not a thread
    /// waiting for its next work; a manual clock does not call such a thread idle.
    explicit wake_signal(bool busy) noexcept : busy_(busy) {}

    std::mutex mutex;
    std::condition_variable cv;

    bool busy() const noexcept { return busy_; }

    /// Wakes every thread waiting on this signal. The caller may hold `mutex` or not, but
    /// changes what the waiters' predicates read under `mutex` first: a wake-up that changes
    /// nothing may reach a waiter between its look at the predicate and its sleep, and a manual
    /// clock would then count it busy while it sleeps.
    void notify_all() noexcept;

private:
    friend class clock_observer;
    const bool busy_ = false;
    std::mutex observer_mutex_;
    std::weak_ptr<clock_observer> observer_;
};

/// What a manual clock registers with a signal so that notify_all() can tell it first.
class clock_observer {
public:
    virtual ~clock_observer() = default;
    /// The waiters of `signal` are about to wake: count them as busy.
    virtual void waking(const wake_signal* signal) noexcept = 0;

protected:
    static void attach(wake_signal& s, const std::shared_ptr<clock_observer>& o);
};

/// A non-owning reference to a `bool()` callable: the predicate of a wait, without allocating.
class predicate_ref {
public:
    template <class F, std::enable_if_t<!std::is_same_v<std::decay_t<F>, predicate_ref>, int> = 0>
    predicate_ref(F& f) noexcept  // NOLINT(*-explicit-constructor): used like a function parameter
        : object_(static_cast<void*>(std::addressof(f))), call_([](void* o) { return static_cast<bool>((*static_cast<F*>(o))()); }) {}
    bool operator()() const { return call_(object_); }

private:
    void* object_;
    bool (*call_)(void*);
};

}  // namespace detail

/**
 * A monotonic time line with a matching wall clock, and the one way forewarn waits on it.
 * Copyable handle: copies share one time line. Default-constructed it is real time
 * (std::chrono::steady_clock and system_clock); testing::manual_clock is one that moves only when
 * a test says so. Clients, the poller, the rate limit and the in-process emulator take one.
 */
class clock {
public:
    using duration = std::chrono::nanoseconds;
    /// Monotonic time. A manual clock starts at the epoch of this type.
    using time_point = std::chrono::time_point<std::chrono::steady_clock, duration>;
    using wall_time_point = std::chrono::system_clock::time_point;

    /// What a clock does; implement it to drive forewarn from your own time source.
    class implementation {
    public:
        virtual ~implementation() = default;
        virtual time_point now() const noexcept = 0;
        /// The wall clock that goes with now() (what NotBefore is compared with).
        virtual wall_time_point wall_now() const noexcept = 0;
        /// Waits on `signal` (whose mutex `lock` holds) until pred() or `deadline`; returns pred().
        virtual bool wait_until(const std::shared_ptr<detail::wake_signal>& signal, std::unique_lock<std::mutex>& lock,
                                time_point deadline, detail::predicate_ref pred) const = 0;
        /// A thread that waits on this clock is about to start (called by its creator) / has ended.
        virtual void thread_started() const noexcept {}
        virtual void thread_ended() const noexcept {}
        /// True for real time: waits end by themselves.
        virtual bool is_real_time() const noexcept { return false; }
    };

    /// Real time.
    clock() : impl_(real()) {}
    explicit clock(std::shared_ptr<const implementation> impl) : impl_(impl ? std::move(impl) : real()) {}

    time_point now() const noexcept { return impl_->now(); }
    wall_time_point wall_now() const noexcept { return impl_->wall_now(); }
    bool is_real_time() const noexcept { return impl_->is_real_time(); }

    /// Waits on `signal` until pred() or `deadline`; the caller holds signal->mutex in `lock`.
    template <class Pred>
    bool wait_until(const std::shared_ptr<detail::wake_signal>& signal, std::unique_lock<std::mutex>& lock,
                    time_point deadline, Pred pred) const {
        return impl_->wait_until(signal, lock, deadline, detail::predicate_ref(pred));
    }
    template <class Pred>
    bool wait_for(const std::shared_ptr<detail::wake_signal>& signal, std::unique_lock<std::mutex>& lock, duration d,
                  Pred pred) const {
        return wait_until(signal, lock, saturating_add(now(), d), std::move(pred));
    }

    /// Call before starting a thread that will wait on this clock; the thread calls
    /// thread_ended() last. A manual clock counts such threads to know when all are idle.
    void thread_started() const noexcept { impl_->thread_started(); }
    void thread_ended() const noexcept { impl_->thread_ended(); }

    /// True when both handles share one time line.
    friend bool operator==(const clock& a, const clock& b) noexcept { return a.impl_ == b.impl_; }
    friend bool operator!=(const clock& a, const clock& b) noexcept { return !(a == b); }

    const std::shared_ptr<const implementation>& impl() const noexcept { return impl_; }

    /// `t + d`, clamped instead of overflowing (a deadline "forever" stays forever).
    static time_point saturating_add(time_point t, duration d) noexcept;

private:
    class real_time final : public implementation {
    public:
        time_point now() const noexcept override;
        wall_time_point wall_now() const noexcept override { return std::chrono::system_clock::now(); }
        bool wait_until(const std::shared_ptr<detail::wake_signal>& signal, std::unique_lock<std::mutex>& lock,
                        time_point deadline, detail::predicate_ref pred) const override;
        bool is_real_time() const noexcept override { return true; }
    };

    static std::shared_ptr<const implementation> real();

    std::shared_ptr<const implementation> impl_;
};

/**
 * A sleep that another thread can cut short, on a clock: the clients' retry backoff and rate
 * limit wait on one, and their cancel() interrupts it. Sticky: after interrupt() every sleep
 * returns false at once until reset(). Thread-safe.
 */
class interruptible_sleep {
public:
    explicit interruptible_sleep(forewarn::clock c = {});

    /// Sleeps up to `d` on the clock; false when interrupted (before or during the sleep).
    bool sleep_for(std::chrono::nanoseconds d);
    void interrupt() noexcept;
    void reset() noexcept;
    bool interrupted() const noexcept;
    const forewarn::clock& clock() const noexcept { return clock_; }

private:
    forewarn::clock clock_;
    std::shared_ptr<detail::wake_signal> signal_;
    bool interrupted_ = false;
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/clock-inl.hpp>
#endif
