// SPDX-License-Identifier: MIT
#pragma once

// Where the GCE metadata server is and how its URLs are built: the endpoint precedence, the
// encoding of keys, and the `Metadata-Flavor: Google` check. No client, no JSON.

#include <forewarn/cloud_facts.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <utility>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

/// The server's name; it also answers at default_ip_endpoint (the fallback when the name does not resolve).
inline constexpr std::string_view default_host_endpoint = "http://metadata.google.internal.";
inline constexpr std::string_view default_ip_endpoint = "http://169.254.169.254";
/// Every key is under this path.
inline constexpr std::string_view root_path = "/computeMetadata/v1/";
/// The header every request carries and every answer of the metadata server carries back, with
/// its value: how the server and its clients know each other.
inline constexpr std::string_view flavor_header = "Metadata-Flavor";
inline constexpr std::string_view flavor = "Google";

}  // namespace gce

namespace detail {

constexpr bool gce_is_unreserved(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

/// Percent-encodes every byte but RFC 3986's unreserved ones (and '/' when `keep_slash`).
std::string percent_encode(std::string_view s, bool keep_slash);

/**
 * A metadata key as the path part of a URL. The key is relative to /computeMetadata/v1/ (one
 * leading '/' is tolerated). Refused: a scheme or authority (the client must never be pointed at
 * another host through a key), "." or ".." segments, '?', '#', control characters.
 */
result<std::string> gce_encode_key(std::string_view key);

/**
 * An endpoint option or variable as "scheme://authority[/prefix]" without a trailing '/'.
 * A bare "host:port" (GCE_METADATA_HOST's form) gets "http://"; a trailing
 * "/computeMetadata/v1/" is dropped, so the root URL from Google's docs works too.
 */
result<std::string> gce_normalize_endpoint(std::string_view e, std::string_view what);

/// Where the endpoint came from: the option, a variable, or the built-in default.
struct gce_resolved_endpoint {
    std::string base;         ///< "http://host:port" without a trailing '/'
    bool is_default = false;  ///< the built-in name, which falls back to the IP
};

/// An explicit option beats $FOREWARN_GCE_ENDPOINT, which beats $GCE_METADATA_HOST.
result<gce_resolved_endpoint> gce_resolve_endpoint(std::string_view option, std::string_view fallback_default,
                                                   std::string_view option_name = "gce::client_options::endpoint");

/// True when the answer says it comes from Google's metadata server.
bool gce_has_google_flavor(const http_response& r) noexcept;

/// detect_cloud()'s root: the IP by default (off-cloud, a DNS lookup could outlast the timeout).
inline result<std::string> gce_resolve_probe_endpoint(std::string_view option, std::string_view option_name) {
    auto r = gce_resolve_endpoint(option, gce::default_ip_endpoint, option_name);
    if (!r) return std::move(r).error();
    return std::move(r->base);
}

}  // namespace detail

namespace gce {

/// The GCE metadata server on the wire (cloud_facts.hpp): it names itself with the flavor header
/// on every answer; no session token.
inline constexpr cloud_facts facts = {
    cloud::gce, "gce", "GCE", "GCE metadata server",
    default_host_endpoint, default_ip_endpoint, "FOREWARN_GCE_ENDPOINT, GCE_METADATA_HOST", &detail::gce_resolve_probe_endpoint,
    nullptr, http_method::get, root_path, {flavor_header, flavor}, probe_recognition::echoed_header, true,
    {}, {"/computeMetadata/v1/instance/id?alt=text", ""}, {}, "metadata.google.internal"};

}  // namespace gce
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/gce/endpoint-inl.hpp>
#endif
