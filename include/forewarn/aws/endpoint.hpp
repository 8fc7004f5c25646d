// SPDX-License-Identifier: MIT
#pragma once

// Where the EC2 instance metadata service is: the endpoint precedence the AWS SDKs use, and
// whether the environment turned it off. No client, no JSON.

#include <forewarn/cloud_facts.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/result.hpp>

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/// IMDS on IPv4, every instance.
inline constexpr std::string_view default_endpoint = "http://169.254.169.254";
/// IMDS on IPv6 (Nitro instances with the IPv6 endpoint turned on).
inline constexpr std::string_view ipv6_endpoint = "http://[fd00:ec2::254]";
/// IMDSv2's session token: `PUT token_path` with the lifetime asked for in `token_ttl_header`
/// gives it; every request then carries it in `token_header` (the client, detect_cloud's probe
/// and forewarn-watch check all ask this way).
inline constexpr std::string_view token_path = detail::latest_token_path;
inline constexpr std::string_view token_header = "X-aws-ec2-metadata-token";
inline constexpr std::string_view token_ttl_header = "X-aws-ec2-metadata-token-ttl-seconds";
/// Where the instance's id is ("i-0123456789abcdef0").
inline constexpr std::string_view instance_id_path = detail::latest_instance_id_path;
inline constexpr std::string_view instance_id_prefix = "i-";

}  // namespace aws

namespace detail {

/// An explicit endpoint beats $AWS_EC2_METADATA_SERVICE_ENDPOINT (the AWS SDKs' variable), which
/// beats aws::ipv6_endpoint when `ipv6`, else aws::default_endpoint.
inline result<std::string> aws_resolve_endpoint(std::string_view option, std::string_view option_name, bool ipv6) {
    const auto chosen = choose_endpoint(option, option_name, {"AWS_EC2_METADATA_SERVICE_ENDPOINT"});
    if (chosen.text.empty()) return std::string(ipv6 ? aws::ipv6_endpoint : aws::default_endpoint);
    return normalize_endpoint(chosen.text, chosen.source);
}

/// $AWS_EC2_METADATA_DISABLED=true (any case), as the AWS SDKs read it: IMDS must not be asked.
inline bool aws_metadata_disabled() { return iequals(trim(getenv_string("AWS_EC2_METADATA_DISABLED")), "true"); }

/// detect_cloud()'s root: IPv4 (the IPv6 endpoint is the client's option only).
inline result<std::string> aws_resolve_probe_endpoint(std::string_view option, std::string_view option_name) {
    return aws_resolve_endpoint(option, option_name, false);
}
inline const char* aws_disabled_reason() { return aws_metadata_disabled() ? "AWS_EC2_METADATA_DISABLED is true" : nullptr; }

}  // namespace detail

namespace aws {

/// AWS IMDS on the wire (cloud_facts.hpp): recognised by an IMDSv2 session token to its own TTL
/// header, which another service with session tokens refuses (as AWS refuses that one's header).
inline constexpr cloud_facts facts = {
    cloud::aws, "aws", "AWS", "AWS IMDSv2",
    default_endpoint, {}, "AWS_EC2_METADATA_SERVICE_ENDPOINT", &detail::aws_resolve_probe_endpoint, &detail::aws_disabled_reason,
    http_method::put, token_path, {token_ttl_header, "60"}, probe_recognition::session_token, true,
    {token_path, token_header, token_ttl_header}, {instance_id_path, instance_id_prefix},
    "set the instance's HttpPutResponseHopLimit to 2 or more (aws ec2 modify-instance-metadata-options "
    "--instance-id ID --http-put-response-hop-limit 2), or run the agent with host networking",
    "169.254.169.123"};

}  // namespace aws

FOREWARN_END_NAMESPACE

