// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/poller.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/poller.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE void poller_waker::set(std::function<void()> f) {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = std::move(f);
}

FOREWARN_INLINE void poller_waker::operator()() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fn_) fn_();
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
