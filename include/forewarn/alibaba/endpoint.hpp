// SPDX-License-Identifier: MIT
#pragma once

// Where Alibaba Cloud ECS's instance metadata is and how it is asked: the wire facts its client,
// detect_cloud() and forewarn-watch read (metadata_client.hpp is the client). No client, no JSON.

#include <forewarn/cloud_facts.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/result.hpp>

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace alibaba {

/// The ECS metadata service, every instance.
inline constexpr std::string_view default_endpoint = "http://100.100.100.200";
/// The variable that names another endpoint (a test's, an emulator's).
inline constexpr const char* endpoint_variable = "FOREWARN_ALIBABA_ENDPOINT";
/// The reclaim notice: 404 while none is scheduled, else the time in UTC ("2015-01-05T18:02:00Z").
inline constexpr std::string_view termination_time_path = "/latest/meta-data/instance/spot/termination-time";
/// The hardened mode's session token: `PUT token_path` with the lifetime asked for in
/// `token_ttl_header` gives it; every request then carries it in `token_header`.
inline constexpr std::string_view token_path = detail::latest_token_path;
inline constexpr std::string_view token_header = "X-aliyun-ecs-metadata-token";
inline constexpr std::string_view token_ttl_header = "X-aliyun-ecs-metadata-token-ttl-seconds";
/// Where the instance's id is ("i-bp67acfmxazb4p****").
inline constexpr std::string_view instance_id_path = detail::latest_instance_id_path;
inline constexpr std::string_view instance_id_prefix = "i-";

}  // namespace alibaba

namespace detail {

/// An explicit endpoint beats $FOREWARN_ALIBABA_ENDPOINT, which beats alibaba::default_endpoint.
inline result<std::string> alibaba_resolve_endpoint(std::string_view option, std::string_view option_name) {
    return resolve_endpoint(option, option_name, {alibaba::endpoint_variable}, alibaba::default_endpoint);
}

}  // namespace detail

namespace alibaba {

/// Alibaba ECS's metadata on the wire (cloud_facts.hpp): recognised by a session token to its own
/// TTL header. Its address answers nowhere else: detect_cloud() does not wait for it once a
/// preferred cloud has answered.
inline constexpr cloud_facts facts = {
    cloud::alibaba, "alibaba", "Alibaba Cloud", "Alibaba ECS metadata",
    default_endpoint, {}, endpoint_variable, &detail::alibaba_resolve_endpoint, nullptr,
    http_method::put, token_path, {token_ttl_header, "60"}, probe_recognition::session_token, false,
    {token_path, token_header, token_ttl_header}, {instance_id_path, instance_id_prefix},
    "run the agent with host networking, so that the token's answer reaches it", {}};

}  // namespace alibaba
FOREWARN_END_NAMESPACE
