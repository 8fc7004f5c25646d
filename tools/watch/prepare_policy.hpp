// SPDX-License-Identifier: MIT
// The prepare hook's policy: when its event is ready for approval, and by when. A prepare hook
// makes its event ready only when it succeeds before NotBefore less --hook-deadline (its approve-by
// time); it is stopped there or at --hook-timeout, whichever comes first. With --lb-drain, the load
// balancer's hold (from when /readyz turns not ready: the announcement, or --unready-before ahead
// of NotBefore) must end by that time too, or the event is not approved. The agent (agent.cpp)
// runs the hooks; this says what their times and ends mean.
#pragma once

#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/poller/approval.hpp>

#include "hooks.hpp"
#include "options.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace watch {

class prepare_policy {
public:
    using steady = std::chrono::steady_clock;

    /// `approving`: the agent approves at all (--approve is not never).
    prepare_policy(const settings& s, bool approving) : s_(s), approving_(approving) {}

    /// NotBefore less --hook-deadline on the steady clock; none for an event with no time.
    std::optional<steady::time_point> approve_by(const forewarn::event& e, std::chrono::system_clock::time_point now,
                                                 steady::time_point steady_now) const;
    std::optional<steady::time_point> approve_by(const forewarn::event& e) const;

    /// When a prepare hook is stopped: --hook-timeout from now, or its approve-by time if sooner
    /// and still ahead.
    steady::time_point deadline(const std::optional<steady::time_point>& approve_by, steady::time_point now = steady::now()) const;

    /// What a prepare hook's end means for its event: ready (approved as the policy allows) when it
    /// succeeded in time; else declined, and logged unless `quiet`.
    hook_runner::done_fn after(const std::string& id, std::optional<steady::time_point> approve_by, forewarn::approval_handle handle,
                               bool quiet) const;

    /// --lb-drain: whether the load balancer's hold can end by NotBefore less --hook-deadline.
    bool drain_fits(const forewarn::event& e, std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;

    /// At the announcement: false, logged and declined, when --lb-drain cannot fit.
    bool hold_fits(const forewarn::change& c, forewarn::approval_handle& handle) const;

private:
    const settings& s_;
    bool approving_;
};

}  // namespace watch
