// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/notice_source.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/notice_source.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE bool source_pacer::wait(clock::time_point due, clock::time_point not_after) {
    const auto until = (std::min)(due, not_after);
    std::unique_lock<std::mutex> lock(signal_->mutex);
    clock_.wait_until(signal_, lock, until, [this] { return woken_ || cancelled_; });
    woken_ = false;
    return !cancelled_;
}

FOREWARN_INLINE void source_pacer::wake() noexcept {
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        woken_ = true;
    }
    signal_->notify_all();
}

FOREWARN_INLINE void source_pacer::cancel() noexcept {
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        cancelled_ = true;
    }
    signal_->notify_all();
}

FOREWARN_INLINE void source_pacer::reset() noexcept {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    cancelled_ = false;
    woken_ = false;
}

FOREWARN_INLINE source_pacer::source_pacer(forewarn::clock c)
    : clock_(std::move(c)), signal_(std::make_shared<wake_signal>()) {}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
