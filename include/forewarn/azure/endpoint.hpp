// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/cloud_facts.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/result.hpp>

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace azure {

/// The Scheduled Events address on a virtual network (IMDS); classic VMs discover theirs (DHCP 245).
inline constexpr std::string_view default_endpoint = "http://169.254.169.254";
/// The header (and its value) IMDS requires on every request; it refuses one without it (400).
inline constexpr std::string_view metadata_header = "Metadata";
inline constexpr std::string_view metadata_header_value = "true";
/// The instance metadata detect_cloud() probes: the request the client's identity() makes.
inline constexpr std::string_view instance_path = "/metadata/instance/compute?api-version=2021-02-01";

}  // namespace azure

namespace detail {

/// An explicit endpoint beats $FOREWARN_AZURE_ENDPOINT, which beats $SCHEDULEDEVENTSIP (the
/// variable the Azure samples keep a discovered address in), which beats azure::default_endpoint.
inline result<std::string> azure_resolve_endpoint(std::string_view option, std::string_view option_name) {
    const auto chosen = choose_endpoint(option, option_name, {"FOREWARN_AZURE_ENDPOINT", "SCHEDULEDEVENTSIP"});
    if (chosen.text.empty()) return std::string(azure::default_endpoint);
    return normalize_endpoint(chosen.text, chosen.source);
}

}  // namespace detail

namespace azure {

/// Azure IMDS on the wire (cloud_facts.hpp): it sends no header of its own, so its probe's answer
/// must be the JSON object IMDS sends; it has no session token.
inline constexpr cloud_facts facts = {
    cloud::azure, "azure", "Azure", "Azure IMDS",
    default_endpoint, {}, "FOREWARN_AZURE_ENDPOINT, SCHEDULEDEVENTSIP", &detail::azure_resolve_endpoint, nullptr,
    http_method::get, instance_path, {metadata_header, metadata_header_value}, probe_recognition::json_object, true,
    {}, {}, {}, "the host's PTP clock"};

}  // namespace azure

FOREWARN_END_NAMESPACE

