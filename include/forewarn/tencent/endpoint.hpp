// SPDX-License-Identifier: MIT
#pragma once

// Where Tencent Cloud CVM's instance metadata is and how it is asked: the wire facts its client,
// detect_cloud() and forewarn-watch read (metadata_client.hpp is the client). No client, no JSON.

#include <forewarn/cloud_facts.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/result.hpp>

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace tencent {

/// The CVM metadata service (it resolves to a link-local address inside Tencent Cloud).
inline constexpr std::string_view default_endpoint = "http://metadata.tencentyun.com";
/// The variable that names another endpoint (a test's, an emulator's).
inline constexpr const char* endpoint_variable = "FOREWARN_TENCENT_ENDPOINT";
/// The reclaim notice: 404 while none (or not a Spot instance), else "2018-08-18 12:05:33" in UTC+8.
inline constexpr std::string_view termination_time_path = "/latest/meta-data/spot/termination-time";
/// Where an instance's id is (the service takes no token), and how every id begins ("ins-"; other
/// services under /latest/ give ids that begin "i-"): what detect_cloud and forewarn-watch check
/// recognise it by.
inline constexpr std::string_view instance_id_path = detail::latest_instance_id_path;
inline constexpr std::string_view instance_id_prefix = "ins-";

}  // namespace tencent

namespace detail {

/// An explicit endpoint beats $FOREWARN_TENCENT_ENDPOINT, which beats tencent::default_endpoint.
inline result<std::string> tencent_resolve_endpoint(std::string_view option, std::string_view option_name) {
    return resolve_endpoint(option, option_name, {tencent::endpoint_variable}, tencent::default_endpoint);
}

}  // namespace detail

namespace tencent {

/// Tencent CVM's metadata on the wire (cloud_facts.hpp): no token; recognised by an instance id of
/// its form. Its name resolves inside Tencent Cloud only (a lookup elsewhere may wait out the
/// resolver): detect_cloud() does not wait for it once a preferred cloud has answered.
inline constexpr cloud_facts facts = {
    cloud::tencent, "tencent", "Tencent Cloud", "Tencent CVM metadata",
    default_endpoint, {}, endpoint_variable, &detail::tencent_resolve_endpoint, nullptr,
    http_method::get, instance_id_path, {}, probe_recognition::instance_id, false,
    {}, {instance_id_path, instance_id_prefix}, {}, {}};

}  // namespace tencent
FOREWARN_END_NAMESPACE
