// SPDX-License-Identifier: MIT
#pragma once

// How a poller is doing: poller_health, health()'s snapshot (detail/poller/health.hpp keeps it).

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// A snapshot of how a poller is doing (health()).
struct poller_health {
    bool running = false;
    std::optional<clock::wall_time_point> last_success;  ///< wall time of the last document had
    std::optional<clock::time_point> last_success_at;    ///< the same on the source's monotonic clock
    std::uint64_t polls = 0;                             ///< documents had
    std::uint64_t failures = 0;                          ///< failed polls
    std::uint32_t consecutive_failures = 0;              ///< failed polls since the last document
    std::optional<error> last_error;                     ///< the last error reported (any kind)
    /// The source's keys that failed in the last document while others answered
    /// (document::key_errors): each error's URL names its key. Empty when every key answered.
    std::vector<error> key_errors;
    std::string self;                                    ///< this VM's name, once known
    std::size_t events = 0;                              ///< events in the last document
    std::vector<std::string> awaiting_approval;          ///< wanted events not approved yet
    std::uint64_t approvals = 0;                         ///< successful approval requests
};

FOREWARN_END_NAMESPACE
