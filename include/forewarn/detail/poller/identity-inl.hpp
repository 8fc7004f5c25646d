// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/poller/identity.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/poller/identity.hpp>

#include <algorithm>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD result<std::optional<std::string>> identity_lookup::learn(clock::time_point now, bool approvals_wait,
                                                                         function_ref<result<std::string>()> ask) {
    if (known() || (next_try_ && now < *next_try_)) return std::optional<std::string>();
    auto id = ask();
    if (id) {
        name_ = *id;
        next_try_.reset();
        return std::optional<std::string>(name_);
    }
    error e = std::move(id).error();
    if (e.code == errc::cancelled) return e;
    pause_ = (std::min)(pause_ * 2, longest_pause);
    next_try_ = clock::saturating_add(now, pause_);
    e.message = (approvals_wait ? "cannot learn this VM's name, so nothing is approved yet: "
                                : "cannot learn this VM's name (self() stays empty): ") +
                e.message;
    return e;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif
