// SPDX-License-Identifier: MIT
#pragma once

// The poller's handlers (poller_handlers): what a program registers to hear of maintenance and
// to answer it (detail/poller/dispatch.hpp runs them).

#include <forewarn/config.hpp>
#include <forewarn/detail/std_function.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/poller/approval.hpp>
#include <forewarn/result.hpp>

#include <string>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// The callbacks. Each runs on the poller's thread (or the executor) with no lock held; an
/// empty one is skipped.
struct poller_handlers {
    /// A new Scheduled event: prepare, then call ready() on the handle (now or later).
    std::function<void(const change&, approval_handle)> on_prepare;
    /// An event started: a new one already Started (hardware failure), or Scheduled -> Started.
    std::function<void(const change&)> on_started;
    /// An event is over: change::reason says completed, cancelled or unknown. Time to recover.
    std::function<void(const change&)> on_recover;
    /// An event changed NotBefore, Resources, duration, description, ...
    std::function<void(const change&)> on_updated;
    /// A failed poll, approval, identity, coordinator or state store, or a handler that threw.
    /// The poller goes on.
    std::function<void(const error&)> on_error;
    /// These events were approved (one request).
    std::function<void(const std::vector<std::string>&)> on_approved;
    /// Dry run (approval_options::dry_run): these events would have been approved now; nothing
    /// was sent.
    std::function<void(const std::vector<std::string>&)> on_would_approve;
};

FOREWARN_END_NAMESPACE
