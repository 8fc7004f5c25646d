// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/gce/parse.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/gce/parse.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace gce {

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

}  // namespace gce
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
