// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/event.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/event.hpp>
#include <forewarn/detail/strings.hpp>  // the definitions only: the model includes nothing from detail/

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE

FOREWARN_INLINE std::optional<std::chrono::seconds> event::duration() const {
    if (!duration_in_seconds || *duration_in_seconds < 0) return std::nullopt;
    return std::chrono::seconds(*duration_in_seconds);
}

FOREWARN_INLINE bool event::affects(std::string_view name) const {
    for (const auto& r : resources)
        if (r == name) return true;
    return false;
}

FOREWARN_INLINE const event* document::find(std::string_view event_id) const {
    for (const auto& e : events)
        if (e.id == event_id) return &e;
    return nullptr;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
