// SPDX-License-Identifier: MIT
// The etcd client's options made from forewarn-watch's settings: the agent's fleet budget and
// `check`'s etcd step both take theirs from here.
#pragma once

#include <forewarn/etcd/client.hpp>

#include "options.hpp"
#include "platform/arguments.hpp"

namespace watch {

/// The etcd client's options: --etcd's endpoints, --etcd-user, and the password from
/// FOREWARN_ETCD_PASSWORD only.
inline forewarn::etcd::client_options etcd_client_options(const settings& s) {
    forewarn::etcd::client_options o;
    o.endpoints = forewarn::etcd::split_endpoints(s.etcd);
    o.username = s.etcd_user;
    if (auto pw = platform::environment("FOREWARN_ETCD_PASSWORD")) o.password = *pw;
    return o;
}

}  // namespace watch
