// SPDX-License-Identifier: MIT
// The agent's timing defaults, each stated once: the option table's (options.hpp, what --help
// and docs/operators.md say) and the Kubernetes room's (node_actions_options), which the flags set.
#pragma once

#include <chrono>

namespace watch::defaults {

inline constexpr std::chrono::seconds hook_deadline{15};      ///< a prepare hook is done this long before NotBefore
inline constexpr std::chrono::seconds hook_timeout{600};      ///< no hook runs longer
inline constexpr std::chrono::seconds drain_lead{15 * 60};    ///< the node tainted and cordoned this long before NotBefore
inline constexpr std::chrono::seconds drain_margin{10};       ///< the drain ends this long before the hook deadline
inline constexpr std::chrono::seconds drain_timeout{120};     ///< a drain's length for an event with no time

}  // namespace watch::defaults
