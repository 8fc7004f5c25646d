// SPDX-License-Identifier: MIT
// The etcd client's options made from forewarn-watch's settings: the agent's fleet budget and
// `check`'s etcd step both take theirs from here.
#pragma once

#include <forewarn/etcd/client.hpp>

#include "options.hpp"

namespace watch {

/// The etcd client's options: --etcd's endpoints, --etcd-user, and the password from
/// FOREWARN_ETCD_PASSWORD only.
forewarn::etcd::client_options etcd_client_options(const settings& s);

}  // namespace watch
