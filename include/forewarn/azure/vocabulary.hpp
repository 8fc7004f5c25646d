// SPDX-License-Identifier: MIT
#pragma once

// Azure Scheduled Events' wire words (EventType, EventStatus, EventSource) and the cloud-neutral
// enumerators they map to. Light: no JSON, no transport.

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>

#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace azure {

/// EventType wire string to enumerator (case-insensitive); unknown strings give unknown.
constexpr event_type event_type_of(std::string_view wire) noexcept {
    if (forewarn::detail::iequals(wire, "Freeze")) return event_type::freeze;
    if (forewarn::detail::iequals(wire, "Reboot")) return event_type::reboot;
    if (forewarn::detail::iequals(wire, "Redeploy")) return event_type::redeploy;
    if (forewarn::detail::iequals(wire, "Preempt")) return event_type::preempt;
    if (forewarn::detail::iequals(wire, "Terminate")) return event_type::terminate;
    return event_type::unknown;
}

/// EventStatus wire string to enumerator (case-insensitive). Azure sends no final status: a
/// finished event disappears.
constexpr event_status event_status_of(std::string_view wire) noexcept {
    if (forewarn::detail::iequals(wire, "Scheduled")) return event_status::scheduled;
    if (forewarn::detail::iequals(wire, "Started")) return event_status::started;
    return event_status::unknown;
}

/// EventSource wire string to enumerator (case-insensitive).
constexpr event_source event_source_of(std::string_view wire) noexcept {
    if (forewarn::detail::iequals(wire, "Platform")) return event_source::platform;
    if (forewarn::detail::iequals(wire, "User")) return event_source::user;
    return event_source::unknown;
}

}  // namespace azure
FOREWARN_END_NAMESPACE
