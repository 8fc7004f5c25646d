// SPDX-License-Identifier: MIT
#pragma once

// The options of Azure's Scheduled Events client (azure/scheduled_events_client.hpp).

#include <forewarn/azure/parse.hpp>
#include <forewarn/client_options.hpp>
#include <forewarn/config.hpp>

#include <chrono>
#include <string>

FOREWARN_BEGIN_NAMESPACE
namespace azure {

/// Options of basic_scheduled_events_client: the common ones (client_options_base: endpoint,
/// connect_timeout, max_body, retry, rate_limit, self_name, clock, log) and Azure's. The
/// endpoint, empty: FOREWARN_AZURE_ENDPOINT (a URL, or a host that gets "http://"),
/// SCHEDULEDEVENTSIP (an IP or host found by the DHCP option 245 sample; becomes "http://IP"),
/// then http://169.254.169.254. The retry rules are Azure's: 410 (for retry.gone_window), 429,
/// 500, 503 and transport errors are retried; 400, 404 and malformed documents are not.
/// self_name is the name Scheduled Events lists in Resources; empty: identity() asks the instance
/// metadata (compute.name).
struct client_options : client_options_base {
    /// Any of known_api_versions; a newer well-formed date is sent as is (see validate_api_version).
    std::string api_version = std::string(latest_api_version);
    /// next(): time from one answer to the next request (the seeds: about once a second; notice
    /// can be as short as 30 s). Never below 200 ms, so one client stays under IMDS's 5 requests/s.
    std::chrono::milliseconds poll_interval{1000};
    /// Total timeout of each request until one has been answered: the first call enables the
    /// service and may take up to two minutes.
    std::chrono::milliseconds first_call_timeout{std::chrono::seconds(150)};
    /// Total timeout of each request after the first answer.
    std::chrono::milliseconds poll_timeout{std::chrono::seconds(5)};
};

}  // namespace azure
FOREWARN_END_NAMESPACE
