// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// Which metadata service a document or event came from.
enum class cloud { none, azure, gce };

/// What kind of maintenance an event announces. Azure's five kinds, then GCE's three.
enum class event_type {
    unknown,         ///< a wire value this version does not know; see event::raw_type
    freeze,          ///< Azure Freeze: paused for seconds (memory-preserving maintenance)
    reboot,          ///< Azure Reboot
    redeploy,        ///< Azure Redeploy: moved to another host, temporary disk lost
    preempt,         ///< Azure Preempt: Spot VM eviction
    terminate,       ///< Azure Terminate: scale-set deletion
    live_migrate,    ///< GCE maintenance-event MIGRATE_ON_HOST_MAINTENANCE
    host_terminate,  ///< GCE maintenance-event TERMINATE_ON_HOST_MAINTENANCE
    preempted,       ///< GCE instance/preempted TRUE
};

/// Where an event is in its life. Azure has no "completed": a finished event disappears.
enum class event_status {
    unknown,    ///< a wire value this version does not know; see event::raw_status
    scheduled,  ///< announced; waits for approval or NotBefore
    started,    ///< in progress (or about to be, with no way to delay it)
};

/// Who asked for the event (Azure EventSource, in the api-versions that have it).
enum class event_source { unknown, platform, user };

/// One maintenance event, cloud-neutral. Wire strings are kept raw beside their enumerators.
struct event {
    std::string id;               ///< Azure EventId; for GCE a synthetic id per kind
    event_type type = event_type::unknown;
    std::string raw_type;         ///< the wire string, e.g. "Freeze" or "MIGRATE_ON_HOST_MAINTENANCE"
    event_status status = event_status::unknown;
    std::string raw_status;       ///< the wire string, e.g. "Scheduled"
    std::string resource_type;    ///< Azure ResourceType, e.g. "VirtualMachine"
    std::vector<std::string> resources;  ///< VM names this event affects (Azure Resources)
    /// The earliest time the event may start; empty when the wire value is absent or "".
    std::optional<std::chrono::system_clock::time_point> not_before;
    std::string description;
    std::optional<event_source> source;  ///< absent in api-versions that predate EventSource
    std::string raw_source;
    /// Azure DurationInSeconds as sent: -1 means the platform does not know; absent in api-versions that predate it.
    std::optional<std::int64_t> duration_in_seconds;

    /// The expected impact, or nothing when absent or unknown (-1).
    std::optional<std::chrono::seconds> duration() const {
        if (!duration_in_seconds || *duration_in_seconds < 0) return std::nullopt;
        return std::chrono::seconds(*duration_in_seconds);
    }

    /// True when `name` is listed in resources (exact, case-sensitive match as Azure sends it).
    bool affects(std::string_view name) const {
        for (const auto& r : resources)
            if (r == name) return true;
        return false;
    }

    friend bool operator==(const event& a, const event& b) {
        return a.id == b.id && a.type == b.type && a.raw_type == b.raw_type && a.status == b.status &&
               a.raw_status == b.raw_status && a.resource_type == b.resource_type &&
               a.resources == b.resources && a.not_before == b.not_before &&
               a.description == b.description && a.source == b.source &&
               a.raw_source == b.raw_source && a.duration_in_seconds == b.duration_in_seconds;
    }
    friend bool operator!=(const event& a, const event& b) { return !(a == b); }
};

/// A snapshot of the scheduled events, with the service's version tag for it.
struct document {
    cloud origin = cloud::none;
    /// Opaque: Azure DocumentIncarnation as decimal text, or GCE's ETags combined. It may start over.
    std::string incarnation;
    std::vector<event> events;

    /// The event with this id, or nullptr.
    const event* find(std::string_view event_id) const {
        for (const auto& e : events)
            if (e.id == event_id) return &e;
        return nullptr;
    }

    friend bool operator==(const document& a, const document& b) {
        return a.origin == b.origin && a.incarnation == b.incarnation && a.events == b.events;
    }
    friend bool operator!=(const document& a, const document& b) { return !(a == b); }
};

/// "azure", "gce" or "none".
constexpr std::string_view to_string(cloud c) noexcept {
    switch (c) {
    case cloud::azure: return "azure";
    case cloud::gce: return "gce";
    case cloud::none: break;
    }
    return "none";
}

/// The lower-case name used in forewarn's own output: "freeze", "live_migrate", "unknown", ...
constexpr std::string_view to_string(event_type t) noexcept {
    switch (t) {
    case event_type::freeze: return "freeze";
    case event_type::reboot: return "reboot";
    case event_type::redeploy: return "redeploy";
    case event_type::preempt: return "preempt";
    case event_type::terminate: return "terminate";
    case event_type::live_migrate: return "live_migrate";
    case event_type::host_terminate: return "host_terminate";
    case event_type::preempted: return "preempted";
    case event_type::unknown: break;
    }
    return "unknown";
}

/// "scheduled", "started" or "unknown".
constexpr std::string_view to_string(event_status s) noexcept {
    switch (s) {
    case event_status::scheduled: return "scheduled";
    case event_status::started: return "started";
    case event_status::unknown: break;
    }
    return "unknown";
}

/// "platform", "user" or "unknown".
constexpr std::string_view to_string(event_source s) noexcept {
    switch (s) {
    case event_source::platform: return "platform";
    case event_source::user: return "user";
    case event_source::unknown: break;
    }
    return "unknown";
}


/// Azure EventType wire string to enumerator (case-insensitive); unknown strings give unknown.
constexpr event_type azure_event_type(std::string_view wire) noexcept {
    if (detail::iequals(wire, "Freeze")) return event_type::freeze;
    if (detail::iequals(wire, "Reboot")) return event_type::reboot;
    if (detail::iequals(wire, "Redeploy")) return event_type::redeploy;
    if (detail::iequals(wire, "Preempt")) return event_type::preempt;
    if (detail::iequals(wire, "Terminate")) return event_type::terminate;
    return event_type::unknown;
}

/// Azure EventStatus wire string to enumerator (case-insensitive).
constexpr event_status azure_event_status(std::string_view wire) noexcept {
    if (detail::iequals(wire, "Scheduled")) return event_status::scheduled;
    if (detail::iequals(wire, "Started")) return event_status::started;
    return event_status::unknown;
}

/// Azure EventSource wire string to enumerator (case-insensitive).
constexpr event_source azure_event_source(std::string_view wire) noexcept {
    if (detail::iequals(wire, "Platform")) return event_source::platform;
    if (detail::iequals(wire, "User")) return event_source::user;
    return event_source::unknown;
}

FOREWARN_END_NAMESPACE
