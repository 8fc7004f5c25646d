// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/fleet.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/fleet.hpp>

#include <algorithm>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE bool slot_admits(std::vector<slot_entry> entries, std::string_view self, std::size_t max) {
    std::sort(entries.begin(), entries.end(), [](const slot_entry& a, const slot_entry& b) { return a.order < b.order; });
    std::size_t busy = 0, ahead = 0;
    bool found = false;
    for (const auto& e : entries) {
        if (e.member == self) {
            found = true;
            continue;
        }
        if (e.state == slot_state::holding || e.state == slot_state::forced)
            ++busy;
        else if (e.state == slot_state::waiting && !found)
            ++ahead;
    }
    return found && busy + ahead < max;
}

FOREWARN_INLINE bool in_maintenance(const std::vector<local_event>& events, std::string_view self) {
    return std::any_of(events.begin(), events.end(), [&](const local_event& le) {
        return concerns(le.event, self) && (le.approved || le.event.status == event_status::started);
    });
}

FOREWARN_INLINE bool any_started(const std::vector<local_event>& events, std::string_view self) {
    return std::any_of(events.begin(), events.end(), [&](const local_event& le) {
        return le.event.status == event_status::started && concerns(le.event, self);
    });
}

FOREWARN_INLINE std::string encode_key_part(std::string_view name) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7F || c == '%' || c == '/') {
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace detail

FOREWARN_INLINE slot_state slot_state_from_string(std::string_view s) noexcept {
    if (s == "waiting") return slot_state::waiting;
    if (s == "holding") return slot_state::holding;
    if (s == "forced") return slot_state::forced;
    return slot_state::none;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
