// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/poller/approval_run.hpp> (spdlog's -inl files). Header-only: included
// at the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/poller/approval_run.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> approval_run(approval_run_parts p, clock::time_point now,
                                                      clock::wall_time_point wall, bool dry_run,
                                                      function_ref<result<void>(const std::vector<std::string>&)> approve,
                                                      function_ref<bool()> stopping, function_ref<bool(const error&)> quiet) {
    std::vector<error> problems;
    auto due = p.ledger.due(now, wall, problems);
    p.health.awaiting(p.ledger.awaiting());
    for (const auto& e : problems) p.dispatch.report(e);
    if (due.empty() || stopping()) return {};
    std::string ids;
    for (const auto& id : due) {
        if (!ids.empty()) ids += ',';
        ids += id;
    }
    if (dry_run) {
        p.ledger.withheld(due);
        p.health.awaiting(p.ledger.awaiting());
        if (p.log.enabled(log_level::info)) p.log(log_level::info, cat({"dry run: would approve ", ids, " (nothing sent)"}), {}, ids);
        p.dispatch.post("on_would_approve", &poller_handlers::on_would_approve, due);
        return due;
    }
    auto r = approve(due);
    if (!r) {
        if (quiet(r.error())) return {};
        p.ledger.failed(due, r.error());
        p.dispatch.report(r.error());
        return {};
    }
    p.ledger.approved(due);
    p.health.awaiting(p.ledger.awaiting(), true);
    p.state.touch();
    if (p.log.enabled(log_level::info)) p.log(log_level::info, cat({"approved ", ids}), {}, ids);
    p.dispatch.post("on_approved", &poller_handlers::on_approved, due);
    return due;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif
