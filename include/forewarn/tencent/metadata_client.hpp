// SPDX-License-Identifier: MIT
#pragma once

// Tencent Cloud CVM's instance metadata as a notice source: a Spot instance's reclaim notice,
// whose time Tencent writes in UTC+8 (docs/tencent.md).

#include <forewarn/tencent/endpoint.hpp>
#include <forewarn/detail/spot_notice_client.hpp>  // the family: client_base, latest_metadata, event, result
#include <forewarn/fwd.hpp>
#include <forewarn/time.hpp>

#include <cstddef>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace tencent {

/// The reclaim notice's body as an event (detail::spot_termination): "YYYY-MM-DD HH:MM:SS", which
/// Tencent writes in China Standard Time (UTC+8); the event's not_before is that instant.
inline result<event> parse_termination_time(std::string_view body) {
    const auto t = forewarn::detail::trim(body);
    bool shaped = t.size() == 19 && t[10] == ' ';
    for (std::size_t i = 0; shaped && i < t.size(); ++i)
        shaped = (i == 4 || i == 7) ? t[i] == '-' : (i == 13 || i == 16) ? t[i] == ':' : i == 10 || (t[i] >= '0' && t[i] <= '9');
    if (!shaped) {
        error e(errc::invalid_document, "termination-time: not a time like 2018-08-18 12:05:33");
        e.field = "termination-time";
        return e;
    }
    // A date or time out of range is the parse's error, as the document's.
    return forewarn::detail::parsed_spot_termination(
        forewarn::detail::parse_iso8601(std::string(t.substr(0, 10)) + 'T' + std::string(t.substr(11)) + "+08:00"),
        std::string(t) + " (UTC+8)");
}

/// Who this instance is: its instance id ("ins-xxxxxxxx"), or client_options::self_name.
struct instance_identity {
    std::string name;
};

/// Options of basic_metadata_client: the reclaim-notice clients' (endpoint, spot_interval,
/// timeouts, retry, self_name, clock, log; the endpoint's variable is FOREWARN_TENCENT_ENDPOINT).
struct client_options : forewarn::detail::spot_notice_options {};

/**
 * Tencent Cloud CVM instance metadata over a Transport, a notice source: next() reads
 * `spot/termination-time` every `spot_interval`; a time there is a preempt event
 * ("spot-termination", about two minutes ahead, its not_before in UTC) that names this instance.
 * The service takes no token. Nothing is approved (errc::unsupported).
 */
template <class Transport = default_transport>
class basic_metadata_client : public forewarn::detail::spot_notice_client<basic_metadata_client<Transport>, Transport,
                                                                          instance_identity, cloud::tencent, client_options> {
public:
    static constexpr std::string_view endpoint_option = "tencent::client_options::endpoint";
    static constexpr auto resolve = &forewarn::detail::tencent_resolve_endpoint;
    static constexpr std::string_view termination_time_path = tencent::termination_time_path;
    static result<event> parse(std::string_view body) { return parse_termination_time(body); }

    FOREWARN_CLIENT_MOVABLE(basic_metadata_client);
    explicit basic_metadata_client(client_options options = {}, Transport transport = Transport())
        : basic_metadata_client::spot_notice_client(std::move(options), std::move(transport)) {}  // no session token
};

FOREWARN_CLIENT_MOVABLE_DEFAULTS(basic_metadata_client);

/// The client over the default transport (include <forewarn/transport/default.hpp> or forewarn.hpp).
using metadata_client = basic_metadata_client<>;

}  // namespace tencent
FOREWARN_END_NAMESPACE

#define FOREWARN_TENCENT_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>
