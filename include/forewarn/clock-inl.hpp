// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/clock.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/clock.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE void wake_signal::notify_all() noexcept {
    std::shared_ptr<clock_observer> o;
    {
        std::lock_guard<std::mutex> lock(observer_mutex_);
        o = observer_.lock();
    }
    if (o) o->waking(this);
    cv.notify_all();
}

FOREWARN_INLINE void clock_observer::attach(wake_signal& s, const std::shared_ptr<clock_observer>& o) {
    std::lock_guard<std::mutex> lock(s.observer_mutex_);
    s.observer_ = o;
}

}  // namespace detail

FOREWARN_INLINE auto clock::saturating_add(time_point t, duration d) noexcept -> time_point {
    if (d.count() <= 0) return t;
    if (t.time_since_epoch().count() > (duration::max)().count() - d.count()) return (time_point::max)();
    return t + d;
}

FOREWARN_INLINE auto clock::real() -> std::shared_ptr<const implementation> {
    static const std::shared_ptr<const implementation> instance = std::make_shared<real_time>();
    return instance;
}

FOREWARN_INLINE bool interruptible_sleep::sleep_for(std::chrono::nanoseconds d) {
    std::unique_lock<std::mutex> lock(signal_->mutex);
    return !clock_.wait_for(signal_, lock, d, [this] { return interrupted_; });
}

FOREWARN_INLINE void interruptible_sleep::interrupt() noexcept {
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        interrupted_ = true;
    }
    signal_->notify_all();
}

FOREWARN_INLINE void interruptible_sleep::reset() noexcept {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    interrupted_ = false;
}

FOREWARN_INLINE bool interruptible_sleep::interrupted() const noexcept {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    return interrupted_;
}

FOREWARN_INLINE interruptible_sleep::interruptible_sleep(forewarn::clock c)
    : clock_(std::move(c)), signal_(std::make_shared<detail::wake_signal>(true)) {}

FOREWARN_INLINE auto clock::real_time::now() const noexcept -> time_point {
    return std::chrono::time_point_cast<duration>(std::chrono::steady_clock::now());
}

FOREWARN_INLINE bool clock::real_time::wait_until(const std::shared_ptr<detail::wake_signal>& signal,
                                                  std::unique_lock<std::mutex>& lock, time_point deadline,
                                                  detail::predicate_ref pred) const {
    // A deadline far away (or "forever") is waited for without a timed wait that could overflow.
    if (deadline - now() > std::chrono::hours(24 * 365)) {
        signal->cv.wait(lock, [&] { return pred(); });
        return true;
    }
    return signal->cv.wait_until(lock, deadline, [&] { return pred(); });
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
