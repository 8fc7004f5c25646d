// SPDX-License-Identifier: MIT
#pragma once

// The EC2 instance metadata answers that announce maintenance, and the cloud-neutral events they
// become. No client: these read bodies (tests, fuzzing, other transports use them directly).
//
//   GET /latest/meta-data/spot/instance-action            404 until a Spot interruption, then
//       {"action": "terminate" | "stop" | "hibernate", "time": "2026-11-22T12:00:00Z"}
//   GET /latest/meta-data/events/recommendations/rebalance 404, then {"noticeTime": "..."}
//   GET /latest/meta-data/events/maintenance/scheduled     a JSON array, [] when none, of
//       {"Code", "Description", "EventId", "NotAfter", "NotBefore", "State"}
//       with times as "21 Jan 2019 09:00:43 GMT"
//
// docs/aws.md has the mapping table.

#include <forewarn/aws/credentials.hpp>
#include <forewarn/aws/vocabulary.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/// The metadata paths read for notices, relative to the endpoint.
inline constexpr std::string_view spot_instance_action_path = "/latest/meta-data/spot/instance-action";
inline constexpr std::string_view rebalance_path = "/latest/meta-data/events/recommendations/rebalance";
inline constexpr std::string_view scheduled_events_path = "/latest/meta-data/events/maintenance/scheduled";
inline constexpr std::string_view target_lifecycle_state_path = "/latest/meta-data/autoscaling/target-lifecycle-state";

/// What an Auto Scaling lifecycle action needs from the instance metadata (IMDSv2): the instance
/// profile's role (this path lists it) and its credentials (this path and the role), the region,
/// and the group's name (a tag, present only with instance metadata tags on).
inline constexpr std::string_view security_credentials_path = "/latest/meta-data/iam/security-credentials/";
inline constexpr std::string_view region_path = "/latest/meta-data/placement/region";
inline constexpr std::string_view autoscaling_group_tag_path = "/latest/meta-data/tags/instance/aws:autoscaling:groupName";

/**
 * An instance profile's credentials (`iam/security-credentials/ROLE`): `Code` must be "Success";
 * `AccessKeyId`, `SecretAccessKey`, `Token` and `Expiration` (ISO-8601) are required. Anything
 * else is an error naming the member, never its value.
 */
result<credentials> parse_security_credentials(std::string_view body);

/// The ids of the notices that have none on the wire (one of each at a time; a later notice of the
/// kind has the same id again).
inline constexpr std::string_view spot_event_id = "spot-instance-action";
inline constexpr std::string_view rebalance_event_id = "rebalance-recommendation";
inline constexpr std::string_view autoscaling_event_id = "autoscaling-termination";

/**
 * The Spot instance-action body as an event: id spot_event_id, type from the action
 * (terminate: preempt, stop, hibernate; else unknown, raw_type keeps it), status scheduled with
 * `not_before` the action's time (about two minutes ahead: it cannot be delayed or approved).
 */
result<event> parse_spot_instance_action(std::string_view body);

/**
 * The rebalance recommendation body as an event: id rebalance_event_id, type rebalance,
 * raw_type "rebalance", status scheduled, `not_before` its noticeTime (when it was given: a
 * Spot instance at elevated risk of interruption, no fixed time).
 */
result<event> parse_rebalance_recommendation(std::string_view body);

/**
 * The scheduled-events list as events: id EventId, type from Code, raw_type the Code, status
 * from State (active scheduled, completed, canceled cancelled; raw_status keeps it),
 * `not_before` NotBefore, description Description. NotAfter is checked but has no field in the
 * model. An EventId twice, a missing EventId or Code, or a malformed time is an error.
 */
result<std::vector<event>> parse_scheduled_events(std::string_view body);

/**
 * The Auto Scaling target lifecycle state (`InService`, `Terminated`, `Warmed:Terminated`, ...):
 * `Terminated` and `Warmed:Terminated` (the group is scaling this instance in; a lifecycle hook
 * may hold it) are an event with id autoscaling_event_id, type terminate, raw_type the state,
 * status scheduled, no time; any other state is none. An answer that is not one word of letters
 * and ':' (HTML, JSON, empty) is an error.
 */
result<std::optional<event>> parse_target_lifecycle_state(std::string_view body);

/// Who this instance is, from the instance metadata.
struct instance_identity {
    std::string name;               ///< the instance id (or client_options::self_name): what events name
    std::string instance_id;        ///< meta-data/instance-id, e.g. "i-0123456789abcdef0"
    std::string instance_type;      ///< meta-data/instance-type; empty when not sent
    std::string availability_zone;  ///< meta-data/placement/availability-zone; empty when not sent
    std::string lifecycle;          ///< meta-data/instance-life-cycle: "spot", "on-demand" or "scheduled"; empty when not sent
    bool spot() const noexcept { return lifecycle == "spot"; }
};

/// Where instance_identity's informative fields are (a path this instance does not have leaves
/// its field empty); instance_id is at instance_id_path.
struct identity_field {
    std::string_view path;
    std::string instance_identity::*field;
};
inline constexpr identity_field identity_fields[] = {
    {"/latest/meta-data/instance-type", &instance_identity::instance_type},
    {"/latest/meta-data/placement/availability-zone", &instance_identity::availability_zone},
    {"/latest/meta-data/instance-life-cycle", &instance_identity::lifecycle}};

}  // namespace aws

namespace detail {

/// The events one notice path's body holds (`path` one of aws's *_path): the scheduled-events
/// list, the target lifecycle state (none or one), or the Spot or rebalance notice.
result<std::vector<event>> aws_parse_key(std::string_view path, std::string_view body);

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/aws/parse-inl.hpp>
#endif
