// SPDX-License-Identifier: MIT
// The agent's wiring, written once for every cloud (agent.cpp): the hooks
// and their journal, the handlers, the poller's options, the fleet budget, metrics and health,
// webhooks and the ready file, over one poller of a watch::source (source.hpp), whatever its cloud.
#pragma once

#include "options.hpp"
#include "source.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace watch {

/// The agent over `src` until a stop (a signal, or --exit-after's last line): the poller over
/// the source, the hooks, handlers, fleet budget, metrics, webhook and ready file. The exit code.
int run_agent(std::unique_ptr<source> src, const settings& s);

}  // namespace watch
