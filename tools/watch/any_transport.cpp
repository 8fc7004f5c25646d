// SPDX-License-Identifier: MIT
// The agent's senders' retry policy (any_transport.hpp).
#include "any_transport.hpp"

#include <algorithm>

namespace watch {

forewarn::retry_policy sender_retries(int attempts, std::chrono::milliseconds first, std::chrono::milliseconds most) {
    forewarn::retry_options o;
    o.max_attempts = (std::max)(1, attempts);
    o.initial_backoff = first;
    o.max_backoff = most;
    o.jitter = 0;
    o.max_elapsed = std::chrono::hours(24 * 365);
    o.budget_capacity = 1e18;
    return forewarn::retry_policy(forewarn::retry_rules::http, o);
}

}  // namespace watch
