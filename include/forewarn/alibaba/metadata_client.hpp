// SPDX-License-Identifier: MIT
#pragma once

// Alibaba Cloud ECS's instance metadata as a notice source: a preemptible (Spot) instance's
// reclaim notice, under the hardened mode's session token (docs/alibaba.md).

#include <forewarn/alibaba/endpoint.hpp>
#include <forewarn/detail/spot_notice_client.hpp>  // the family: client_base, latest_metadata, event, result
#include <forewarn/fwd.hpp>
#include <forewarn/time.hpp>

#include <chrono>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace alibaba {

/// The reclaim notice's body as an event (detail::spot_termination): an ISO 8601 time with its zone.
inline result<event> parse_termination_time(std::string_view body) {
    const auto text = forewarn::detail::trim(body);
    return forewarn::detail::parsed_spot_termination(forewarn::detail::parse_iso8601(text), text);
}

/// Who this instance is: its instance id ("i-bp67acfmxazb4p****"), or client_options::self_name.
struct instance_identity {
    std::string name;
};

/// Options of basic_metadata_client: the reclaim-notice clients' (endpoint, spot_interval, timeouts,
/// retry, self_name, clock, log; the endpoint's variable is FOREWARN_ALIBABA_ENDPOINT) and the token's.
struct client_options : forewarn::detail::spot_notice_options {
    /// The session token's lifetime asked for (X-aliyun-ecs-metadata-token-ttl-seconds): 1..21600.
    std::chrono::seconds token_ttl{forewarn::detail::max_session_token_ttl};
};

/**
 * Alibaba Cloud ECS instance metadata over a Transport, a notice source: next() reads
 * `instance/spot/termination-time` every `spot_interval`; a time there is a preempt event
 * ("spot-termination", about five minutes ahead) that names this instance. Every request carries a
 * session token from `PUT /latest/api/token` (the hardened mode, which every instance accepts),
 * renewed before it expires and after a 401. Nothing is approved (errc::unsupported).
 */
template <class Transport = default_transport>
class basic_metadata_client : public forewarn::detail::spot_notice_client<basic_metadata_client<Transport>, Transport,
                                                                          instance_identity, cloud::alibaba, client_options> {
public:
    static constexpr std::string_view endpoint_option = "alibaba::client_options::endpoint";
    static constexpr auto resolve = &forewarn::detail::alibaba_resolve_endpoint;
    static constexpr std::string_view termination_time_path = alibaba::termination_time_path;
    static result<event> parse(std::string_view body) { return parse_termination_time(body); }

    FOREWARN_CLIENT_MOVABLE(basic_metadata_client);
    explicit basic_metadata_client(client_options options = {}, Transport transport = Transport())
        : basic_metadata_client::spot_notice_client(std::move(options), std::move(transport),
                                                    {alibaba::token_header, alibaba::token_ttl_header, "Alibaba metadata", &client_options::token_ttl,
                                                     "alibaba::client_options::token_ttl"}) {}
};

FOREWARN_CLIENT_MOVABLE_DEFAULTS(basic_metadata_client);

/// The client over the default transport (include <forewarn/transport/default.hpp> or forewarn.hpp).
using metadata_client = basic_metadata_client<>;

}  // namespace alibaba
FOREWARN_END_NAMESPACE

#define FOREWARN_ALIBABA_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>
