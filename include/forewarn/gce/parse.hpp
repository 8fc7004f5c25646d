// SPDX-License-Identifier: MIT
#pragma once

// The GCE metadata server's maintenance values and the cloud-neutral events they become. Light:
// no client, no JSON.

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>

#include <optional>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

/// The keys the maintenance snapshot is made of, relative to /computeMetadata/v1/.
inline constexpr std::string_view maintenance_event_key = "instance/maintenance-event";
inline constexpr std::string_view preempted_key = "instance/preempted";

/// The id of the event a maintenance-event value gives ("maintenance-event:<VALUE>").
inline std::string maintenance_event_id(std::string_view value) { return "maintenance-event:" + std::string(value); }
/// The id of the event preempted TRUE gives.
inline constexpr std::string_view preempted_event_id = "preempted";

/// The maintenance-event value as an event (none for NONE). An empty value is an error.
/// MIGRATE_ON_HOST_MAINTENANCE is live_migrate, TERMINATE_ON_HOST_MAINTENANCE host_terminate,
/// anything else unknown with the value kept raw; status scheduled (the ~60 s warning).
result<std::optional<event>> maintenance_event_from(std::string_view body);

/// The preempted value as an event (none for FALSE), status started (the stop is under way).
/// Anything but TRUE/FALSE is an error.
result<std::optional<event>> preempted_event_from(std::string_view body);

#if FOREWARN_HEADER_DEFINITIONS
// Compiled into libforewarn in compiled mode (docs/building.md), inline in every user otherwise.

FOREWARN_INLINE result<std::optional<event>> maintenance_event_from(std::string_view body) {
    const auto v = detail::trim(body);
    if (v.empty()) {
        error e(errc::empty_body, "instance/maintenance-event answered with an empty value");
        e.field = "maintenance-event";
        return e;
    }
    if (detail::iequals(v, "NONE")) return std::optional<event>();
    event ev;
    ev.raw_type = std::string(v);
    ev.id = maintenance_event_id(ev.raw_type);
    if (detail::iequals(v, "MIGRATE_ON_HOST_MAINTENANCE"))
        ev.type = event_type::live_migrate;
    else if (detail::iequals(v, "TERMINATE_ON_HOST_MAINTENANCE"))
        ev.type = event_type::host_terminate;
    else
        ev.type = event_type::unknown;
    // The value turns from NONE about 60 s before the migration: a warning, not the start.
    ev.status = event_status::scheduled;
    return std::optional<event>(std::move(ev));
}

FOREWARN_INLINE result<std::optional<event>> preempted_event_from(std::string_view body) {
    const auto v = detail::trim(body);
    if (detail::iequals(v, "FALSE")) return std::optional<event>();
    if (detail::iequals(v, "TRUE")) {
        event ev;
        ev.id = std::string(preempted_event_id);
        ev.type = event_type::preempted;
        ev.raw_type = "preempted";
        ev.status = event_status::started;
        return std::optional<event>(std::move(ev));
    }
    error e(v.empty() ? errc::empty_body : errc::invalid_document,
            "instance/preempted is neither TRUE nor FALSE: \"" + std::string(v.substr(0, 64)) + '"');
    e.field = "preempted";
    return e;
}

#endif  // FOREWARN_HEADER_DEFINITIONS

}  // namespace gce
FOREWARN_END_NAMESPACE
