// SPDX-License-Identifier: MIT
#pragma once

// The poller's identity part (detail::identity_lookup): this VM's name as events name it, asked
// of the source before the first delivery and again, after a growing pause, while it cannot tell.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Holds no lock: only the thread that runs the poller's cycles uses it (the name reaches other
/// threads through the health record and the ledger).
class identity_lookup {
public:
    static constexpr std::chrono::milliseconds first_pause{1000};
    static constexpr std::chrono::milliseconds longest_pause{std::chrono::minutes(1)};

    bool known() const noexcept { return !name_.empty(); }
    const std::string& name() const noexcept { return name_; }

    /**
     * Asks `ask` for the name unless it is known or the pause after the last failure is not over.
     * Returns the name when it was learned now, nothing when there was nothing to do, or the
     * error to report: a failure doubles the pause (1 s, 2 s, ... up to a minute); a cancelled
     * ask (a stop) changes nothing. `approvals_wait`: the source approves, so nothing is approved
     * until the name is known (the error says so).
     */
    result<std::optional<std::string>> learn(clock::time_point now, bool approvals_wait,
                                             function_ref<result<std::string>()> ask);

private:
    std::string name_;
    std::optional<clock::time_point> next_try_;
    std::chrono::milliseconds pause_{first_pause / 2};
};

/// `source.identity()`'s name (what learn() asks a notice source).
template <class Source>
result<std::string> name_of(Source& source) {
    auto r = source.identity();
    if (!r) return std::move(r).error();
    return std::move(r->name);
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/poller/identity-inl.hpp>
#endif
