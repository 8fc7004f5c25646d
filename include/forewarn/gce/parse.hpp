// SPDX-License-Identifier: MIT
#pragma once

// The GCE metadata server's maintenance values and the cloud-neutral events they become. Light:
// no client, no JSON. The values are plain text, whose bytes need not be valid UTF-8.

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

/// The id of the event a maintenance-event value gives ("maintenance-event:<VALUE>"): a later
/// maintenance of the same kind has the same id again.
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

}  // namespace gce
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/gce/parse-inl.hpp>
#endif
