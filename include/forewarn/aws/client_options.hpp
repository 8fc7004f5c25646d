// SPDX-License-Identifier: MIT
#pragma once

// The options of the AWS instance metadata client (aws/instance_metadata_client.hpp), and what
// IMDS's refusals mean.

#include <forewarn/client_options.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/latest_metadata.hpp>

#include <chrono>
#include <optional>
#include <string>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/// The longest session token IMDS grants, in seconds (six hours).
inline constexpr int max_token_ttl_seconds = forewarn::detail::max_session_token_ttl;

/// Options of basic_instance_metadata_client: the common ones (client_options_base: endpoint,
/// connect_timeout, max_body, retry, rate_limit, self_name, clock, log) and AWS's. The endpoint,
/// empty: $AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254 (or
/// http://[fd00:ec2::254] with `ipv6`). Retries: 429, 5xx and transport errors are retried; 400,
/// 403 and 404 are not; a 401 renews the token once. self_name, empty: the instance id.
struct client_options : client_options_base {
    bool ipv6 = false;
    /// The session token's lifetime asked for (X-aws-ec2-metadata-token-ttl-seconds): 1..21600.
    std::chrono::seconds token_ttl{max_token_ttl_seconds};
    /// IMDSv1 (no token) when the token PUT is refused with 403, 404 or 405. Off: IMDSv2 only,
    /// as AWS recommends; an instance that requires IMDSv2 refuses IMDSv1 anyway.
    bool allow_imdsv1 = false;
    /// next(): how often the Spot instance-action is read. A Spot notice gives two minutes, so
    /// it is read every second (AWS advises at least every 5 s; aws-node-termination-handler reads
    /// it every 2 s): a notice reaches the poller within about a second. Never below 200 ms.
    std::chrono::milliseconds spot_interval{1000};
    /// next(): how often the scheduled events and the rebalance recommendation are read (days
    /// and minutes of notice). Never below 1 s.
    std::chrono::milliseconds poll_interval{5000};
    /// next(): also read the Auto Scaling target lifecycle state (a 404 outside a group): its
    /// `Terminated` and `Warmed:Terminated` are a notice of type terminate.
    bool read_target_lifecycle_state = true;
    std::chrono::milliseconds timeout{std::chrono::seconds(5)};  ///< total timeout of each request

    // -- an Auto Scaling termination lifecycle hook (docs/aws.md, "Auto Scaling") ---------------
    /// The hook's name (LifecycleHookName). Set: the termination notice (autoscaling-termination)
    /// can be approved, and approve() completes the lifecycle action with CONTINUE; from the notice
    /// until then (or until it is declined or over) the client records a heartbeat every
    /// `lifecycle_heartbeat`. Empty (the default): the notice is heard, nothing is sent to Auto
    /// Scaling. No other notice of AWS can ever be approved.
    std::string lifecycle_hook;
    /// The group; empty: the instance's tag `aws:autoscaling:groupName`, which the instance
    /// metadata shows only with instance metadata tags turned on.
    std::string autoscaling_group;
    /// Auto Scaling's endpoint; empty: https://autoscaling.REGION.amazonaws.com/ for the region
    /// the instance metadata names. A VPC endpoint, or a test's server.
    std::string autoscaling_endpoint;
    /// How often a heartbeat restarts the hook's timeout, whatever `poll_interval`; keep several
    /// within the hook's HeartbeatTimeout (3600 s by default). At least 1 s. Each heartbeat is one
    /// try, bounded by half of `spot_interval` (at least 250 ms), so that it never holds up the
    /// Spot notice's next read; one that fails goes again at the next beat.
    std::chrono::seconds lifecycle_heartbeat{300};
};

/// What completing a lifecycle action needs, as the instance metadata gives it (what `check`
/// shows): the region, the group and where it came from, the instance profile's role and its
/// credentials' key id and expiry (never the secret).
struct autoscaling_target {
    std::string region;
    std::string group;
    bool group_from_tag = false;  ///< read from tags/instance/aws:autoscaling:groupName
    std::string role;
    std::string access_key_id;
    std::optional<std::chrono::system_clock::time_point> expiration;
};

}  // namespace aws

namespace detail {

/// What IMDS's refusals mean (detail::status_error's hints).
inline constexpr status_hint aws_status_hints[] = {
    {400, "a token TTL outside 1..21600?"},
    {401, "missing or expired session token"},
    {403, "IMDS turned off for this instance, or the request carried X-Forwarded-For"},
};

}  // namespace detail
FOREWARN_END_NAMESPACE
