// SPDX-License-Identifier: MIT
// The etcd client's options from the settings (etcd_options.hpp).
#include "etcd_options.hpp"

#include "platform/arguments.hpp"

namespace watch {

forewarn::etcd::client_options etcd_client_options(const settings& s) {
    forewarn::etcd::client_options o;
    o.endpoints = forewarn::etcd::split_endpoints(s.etcd);
    o.username = s.etcd_user;
    if (auto pw = platform::environment("FOREWARN_ETCD_PASSWORD")) o.password = *pw;
    return o;
}

}  // namespace watch
