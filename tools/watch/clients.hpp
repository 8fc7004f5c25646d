// SPDX-License-Identifier: MIT
// The clients forewarn-watch runs, one per cloud, made from its settings: the agent and `check`
// both take theirs from here.
#pragma once

#include <forewarn/alibaba/metadata_client.hpp>
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/tencent/metadata_client.hpp>

#include "options.hpp"

#include <string>
#include <type_traits>
#include <utility>

namespace watch {

/// A client of `Client`'s cloud with the command line's endpoint, name and interval.
template <class Client, class Options>
Client make_client(Options o, const settings& s) {
    o.endpoint = s.endpoint;
    o.self_name = s.self;
    if constexpr (std::is_same_v<Options, forewarn::alibaba::client_options> || std::is_same_v<Options, forewarn::tencent::client_options>) {
        if (s.interval) o.spot_interval = *s.interval;
    } else if constexpr (!std::is_same_v<Options, forewarn::gce::client_options>) {
        if (s.interval) o.poll_interval = *s.interval;
    }
    return Client(std::move(o));
}

/// `f(client)` with the client of `cloud` ("azure", "gce", "aws", "alibaba" or "tencent").
template <class F>
auto with_client(const std::string& cloud, const settings& s, F&& f) {
    if (cloud == "azure") return f(make_client<forewarn::azure::scheduled_events_client>(forewarn::azure::client_options{}, s));
    if (cloud == "aws") return f(make_client<forewarn::aws::instance_metadata_client>(forewarn::aws::client_options{}, s));
    if (cloud == "alibaba") return f(make_client<forewarn::alibaba::metadata_client>(forewarn::alibaba::client_options{}, s));
    if (cloud == "tencent") return f(make_client<forewarn::tencent::metadata_client>(forewarn::tencent::client_options{}, s));
    return f(make_client<forewarn::gce::metadata_client>(forewarn::gce::client_options{}, s));
}

}  // namespace watch
