// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/log.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/log.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE

FOREWARN_INLINE void logger::operator()(log_level l, std::string_view message, std::string_view url,
                                        std::string_view event_id) const noexcept {
    if (!enabled(l)) return;
    try {
        sink(log_record{l, message, url, event_id});
    } catch (...) {
        // A sink that throws loses its line; forewarn goes on.
    }
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
