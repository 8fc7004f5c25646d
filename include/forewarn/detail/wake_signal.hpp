// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>

#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Whether Clock sleeps its waiters itself (a manual clock), instead of real time passing.
template <class Clock, class = void>
struct has_wait_hook : std::false_type {};

template <class Clock>
struct has_wait_hook<Clock, std::void_t<decltype(std::declval<const Clock&>().wait_until(
                                std::declval<const std::shared_ptr<wake_signal>&>(),
                                std::declval<std::unique_lock<std::mutex>&>(),
                                std::declval<typename Clock::time_point>(), std::declval<bool (*)()>()))>>
    : std::true_type {};

/**
 * Waits on `signal` (whose mutex `lock` holds) until pred() or `deadline` of `clock`. A clock
 * with a wait_until hook (testing::manual_clock) decides when its time has come; any other clock
 * is real time and the condition variable's own timed wait does it.
 * Returns pred().
 */
template <class Clock, class Pred>
bool wait_until(const Clock& clock, const std::shared_ptr<wake_signal>& signal, std::unique_lock<std::mutex>& lock,
                typename Clock::time_point deadline, Pred pred) {
    if constexpr (has_wait_hook<Clock>::value) {
        return clock.wait_until(signal, lock, deadline, std::move(pred));
    } else {
        (void)clock;
        return signal->cv.wait_until(lock, deadline, std::move(pred));
    }
}

}  // namespace detail
FOREWARN_END_NAMESPACE
