// SPDX-License-Identifier: MIT
// --etcd: the fleet budget (forewarn::etcd::maintenance_budget) made from the settings, as the
// poller's approval coordinator: its slot changes counted, logged, and with --json printed as a
// line of their own.
#pragma once

#include <forewarn/poller/coordinator.hpp>
#include <forewarn/result.hpp>

#include "metrics.hpp"
#include "options.hpp"

#include <functional>
#include <memory>
#include <string>

namespace watch {

/// The budget for `s` (--etcd, --fleet-group, --fleet-max, ...), validated; an error whose message
/// is the line to log (exit 2) when its settings or its TLS files cannot be used. `print` takes a
/// JSON line for stdout (with --json).
forewarn::result<std::shared_ptr<forewarn::approval_coordinator>> make_fleet_budget(const settings& s, const std::string& cloud,
                                                                                    metrics& counters,
                                                                                    std::function<void(const std::string&)> print);

}  // namespace watch
