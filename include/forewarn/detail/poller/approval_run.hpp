// SPDX-License-Identifier: MIT
#pragma once

// One approval run of the poller (detail::approval_run): the approvals due now sent in one
// request, or, in a dry run, withheld and told; the outcome recorded and handed on.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/log.hpp>
#include <forewarn/detail/poller/dispatch.hpp>
#include <forewarn/detail/poller/health.hpp>
#include <forewarn/detail/poller/ledger.hpp>
#include <forewarn/detail/poller/state_keeper.hpp>
#include <forewarn/result.hpp>

#include <string>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The parts an approval run reads and records into, and how it approves.
struct approval_run_parts {
    poller_ledger& ledger;
    health_record& health;
    handler_dispatch& dispatch;
    state_keeper& state;
    const logger& log;
};

/**
 * One run, on the thread that runs the poller's cycles, holding no lock itself (each part locks
 * its own): the ids due now (the ledger: policy, then coordinator; its problems reported), then
 * in a dry run (`dry_run`) withheld, logged and given to on_would_approve, otherwise `approve(ids)`
 * once: on success recorded (ledger, health, state) and given to on_approved; on failure recorded
 * for the next document and reported, unless `quiet(error)` (a stop's cancellation). Returns the
 * ids it handled.
 */
std::vector<std::string> approval_run(approval_run_parts parts, clock::time_point now, clock::wall_time_point wall,
                                      bool dry_run, function_ref<result<void>(const std::vector<std::string>&)> approve,
                                      function_ref<bool()> stopping, function_ref<bool(const error&)> quiet);

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/poller/approval_run-inl.hpp>
#endif
