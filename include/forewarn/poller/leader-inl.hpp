// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/poller/leader.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/poller/leader.hpp>

#include <algorithm>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE

FOREWARN_INLINE FOREWARN_COLD std::string_view leader_election::leader(const event& e) const noexcept {
    if (e.resources.empty()) return {};
    if (rule_ == leader_rule::first_listed) return e.resources.front();
    return *std::min_element(e.resources.begin(), e.resources.end());
}

FOREWARN_INLINE FOREWARN_COLD bool leader_election::is_leader(const event& e, std::string_view self) const noexcept {
    return !self.empty() && e.affects(self) && leader(e) == self;
}

FOREWARN_INLINE FOREWARN_COLD bool leader_election::may_approve(const event& e, std::string_view self,
                                                  std::chrono::nanoseconds seen_for) const noexcept {
    if (self.empty() || !e.affects(self)) return false;
    if (leader(e) == self) return true;
    return follower_may_approve(e, seen_for);
}

FOREWARN_INLINE FOREWARN_COLD bool leader_election::follower_may_approve(const event& e,
                                                           std::chrono::nanoseconds seen_for) const noexcept {
    return e.source == event_source::user && e.status == event_status::scheduled && seen_for >= grace_;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
