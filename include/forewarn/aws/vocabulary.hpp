// SPDX-License-Identifier: MIT
#pragma once

// AWS EC2's wire words (scheduled-event Code and State, the Spot instance-action) and the
// cloud-neutral enumerators they map to. Light: no JSON, no transport.

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>

#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/// A scheduled event's Code (case-insensitive): instance-reboot and system-reboot are reboot,
/// system-maintenance maintenance, instance-retirement retirement, instance-stop stop; any other
/// word unknown (event::raw_type keeps it).
constexpr event_type event_type_of_code(std::string_view code) noexcept {
    if (forewarn::detail::iequals(code, "instance-reboot") || forewarn::detail::iequals(code, "system-reboot"))
        return event_type::reboot;
    if (forewarn::detail::iequals(code, "system-maintenance")) return event_type::maintenance;
    if (forewarn::detail::iequals(code, "instance-retirement")) return event_type::retirement;
    if (forewarn::detail::iequals(code, "instance-stop")) return event_type::stop;
    return event_type::unknown;
}

/// A scheduled event's State (case-insensitive): active is scheduled, completed completed,
/// canceled (AWS's spelling) cancelled; any other word unknown.
constexpr event_status event_status_of_state(std::string_view state) noexcept {
    if (forewarn::detail::iequals(state, "active")) return event_status::scheduled;
    if (forewarn::detail::iequals(state, "completed")) return event_status::completed;
    if (forewarn::detail::iequals(state, "canceled") || forewarn::detail::iequals(state, "cancelled"))
        return event_status::cancelled;
    return event_status::unknown;
}

/// The Spot instance-action's action (case-insensitive): terminate is preempt (the event type of
/// a Spot eviction), stop stop, hibernate hibernate; any other word unknown.
constexpr event_type event_type_of_spot_action(std::string_view action) noexcept {
    if (forewarn::detail::iequals(action, "terminate")) return event_type::preempt;
    if (forewarn::detail::iequals(action, "stop")) return event_type::stop;
    if (forewarn::detail::iequals(action, "hibernate")) return event_type::hibernate;
    return event_type::unknown;
}

}  // namespace aws
FOREWARN_END_NAMESPACE
