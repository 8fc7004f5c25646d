// SPDX-License-Identifier: MIT
#pragma once

// GCE's long-notice feed, `instance/upcoming-maintenance` (days ahead on the machine series that
// have it), and the cloud-neutral event it becomes. The wire format only: no client.
//
// Documented answer: an object with string values, snake_case: window_start_time,
// window_end_time, latest_window_start_time (RFC 3339), maintenance_status (PENDING | ONGOING),
// type (SCHEDULED | UNSCHEDULED), can_reschedule ("true" | "false"), maintenance_reasons (an
// array). Nothing scheduled is `{}` by the documentation; in the field also the text NONE, a 503
// whose body says no notifications have been received yet, and 404 on machine types without the
// key. None of those is an error.

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

/// The key, relative to /computeMetadata/v1/ (read with ?alt=json).
inline constexpr std::string_view upcoming_maintenance_key = "instance/upcoming-maintenance";
/// The id of the event it gives (one at a time).
inline constexpr std::string_view upcoming_maintenance_event_id = "upcoming-maintenance";

/// One announced maintenance window, as the metadata server describes it.
struct upcoming_maintenance {
    std::string type;    ///< SCHEDULED | UNSCHEDULED (kept as sent)
    std::string status;  ///< maintenance_status: PENDING | ONGOING (kept as sent)
    bool can_reschedule = false;
    std::optional<std::chrono::system_clock::time_point> window_start, window_end, latest_window_start;
    std::vector<std::string> reasons;  ///< maintenance_reasons, e.g. PLANNED_UPDATE
};

/**
 * The answer to a GET of upcoming-maintenance (?alt=json) as a window, or nothing when none is
 * announced: 404 (no such key on this machine type), a 503 whose body says no notifications have
 * been received yet, the text NONE, `{}` or an empty body. Any other status is errc::http_status;
 * a body that is neither JSON nor NONE, or with members of the wrong type or a malformed time, is
 * a parse or document error naming the member.
 */
result<std::optional<upcoming_maintenance>> parse_upcoming_maintenance(int status, std::string_view body);

/**
 * The window as an event: id upcoming_maintenance_event_id, type maintenance (raw_type the wire
 * type, e.g. SCHEDULED), status scheduled while PENDING and started once ONGOING (raw_status
 * keeps the word; anything else unknown), not_before the window's start, the reasons in the
 * description. A window that goes away is a recover.
 */
event to_event(const upcoming_maintenance& m);

}  // namespace gce
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/gce/upcoming_maintenance-inl.hpp>
#endif
