// SPDX-License-Identifier: MIT
#pragma once

// The poller's state keeping (detail::state_keeper): the state store read once at the start,
// written after a cycle that changed something, and tried again after a failed write.

#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/log.hpp>
#include <forewarn/poller/state_store.hpp>
#include <forewarn/result.hpp>

#include <memory>
#include <optional>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Holds no lock: only the thread that runs the poller's cycles (its own, or poll_once()'s
/// caller) uses it; the snapshot it saves comes from the ledger, which locks.
class state_keeper {
public:
    explicit state_keeper(std::shared_ptr<state_store> store) : store_(std::move(store)) {}

    /**
     * The saved state, on the first call only: nothing when no store is set, when none was saved
     * yet (logged at info), or when it cannot be read (reported: the poller starts with no
     * events known).
     */
    std::optional<poller_state> load(const logger& log, function_ref<void(const error&)> report);

    /// Something worth saving changed.
    void touch() noexcept { dirty_ = true; }
    bool dirty() const noexcept { return dirty_; }

    /// Saves `snapshot()` when something changed since the last save that worked; a failed save
    /// is reported and tried again at the next call.
    void save(function_ref<poller_state()> snapshot, function_ref<void(const error&)> report);

private:
    std::shared_ptr<state_store> store_;
    bool loaded_ = false;
    bool dirty_ = false;
};

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/poller/state_keeper-inl.hpp>
#endif
