// SPDX-License-Identifier: MIT
#pragma once

// `forewarn-watch check`'s Kubernetes steps: can this agent reach its API server, is its token
// accepted, does its node exist, and may it make each call its node's writes need (one
// SelfSubjectAccessReview per verb). Each row (check_row.hpp) says what was seen, why that is likely, and
// what to do.

#include "../check_row.hpp"
#include "connection.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace watch::kubernetes {

/// One permission the agent needs: a verb on a resource (and subresource), in a namespace or
/// cluster-wide.
struct permission {
    const char* verb;
    const char* resource;
    const char* subresource;
    const char* ns;
};

/// What node.hpp's writes need (examples/kubernetes/forewarn-watch.yaml's ClusterRole carries it).
const std::vector<permission>& needed_permissions();

/// The findings for `c` and `node`, every request within `bound`.
std::vector<check_row> check_access(connection c, const std::string& node, std::chrono::milliseconds bound);

}  // namespace watch::kubernetes
