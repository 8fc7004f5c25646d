// SPDX-License-Identifier: MIT
#pragma once

// Compute Engine's performMaintenance, the call that starts an upcoming maintenance window now
// (gce::client_options::perform_maintenance): its URL, the service account's token from the
// metadata server, Google's JSON errors in words, and the POST with its retries. The GCE client
// makes the call; this header is its wire format.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

/// Compute Engine's API root (gce::client_options::compute_endpoint overrides it).
inline constexpr std::string_view default_compute_endpoint = "https://compute.googleapis.com";
/// The default service account's token and scopes, on the metadata server.
inline constexpr std::string_view token_key = "instance/service-accounts/default/token";
inline constexpr std::string_view scopes_key = "instance/service-accounts/default/scopes";
/// Where the project and the zone are read (the zone's last path segment is its name).
inline constexpr std::string_view project_id_key = "project/project-id";
inline constexpr std::string_view zone_key = "instance/zone";

/// The service account's OAuth token, as the metadata server gives it.
struct access_token {
    std::string token;                    ///< access_token (a Bearer token); never logged
    std::chrono::seconds expires_in{0};  ///< from when it was read
};

/// `{"access_token", "expires_in", "token_type": "Bearer"}`; anything else is an error naming the
/// member, never its value.
result<access_token> parse_access_token(std::string_view body);

/// Google's JSON error (`{"error": {"code", "message", "errors": [{"reason"}]}}`) in words:
/// "MESSAGE (REASON)", at most 1 KiB; nothing when the body is not one.
std::optional<std::string> google_error_text(std::string_view body);

/// ENDPOINT/compute/v1/projects/PROJECT/zones/ZONE/instances/NAME/performMaintenance?requestId=ID
std::string perform_maintenance_url(std::string_view endpoint, std::string_view project, std::string_view zone,
                                    std::string_view instance, std::string_view request_id);

}  // namespace gce

namespace detail {

/// A random (version 4) UUID, for a request id that makes retries of one call safe.
std::string uuid_v4();

/**
 * POSTs performMaintenance (empty body, the Bearer token) until it is accepted: a 200 carries an
 * Operation (accepted, not done). 429 and 5xx and transport errors are tried again with backoff
 * (3 tries, the same request id); 400 and 403 are errors in Google's words.
 */
result<void> gce_perform_maintenance(function_ref<result<http_response>(const http_request&)> send, interruptible_sleep& sleep,
                                     const logger& log, const std::string& url, const std::string& token);

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/gce/compute-inl.hpp>
#endif
