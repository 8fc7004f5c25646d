// SPDX-License-Identifier: MIT
#pragma once

// The poller's ledger (detail::poller_ledger): what it knows of the events, the change tracker
// and the approver, kept consistent for the other threads that read it.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/std_function.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/poller/approval.hpp>
#include <forewarn/poller/change_tracker.hpp>
#include <forewarn/poller/coordinator.hpp>
#include <forewarn/poller/state_store.hpp>
#include <forewarn/result.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/**
 * The change tracker and the approver behind one mutex: the poller's thread writes, any thread
 * reads (latest(), delivered_document(), handle_for_known()). The mutex is never held while
 * anything outside the two is called: the coordinator (the user's code, which may block or read
 * the poller) is asked with no lock held. due() decides under the lock, asks admit() outside it,
 * and applies the answers under the lock again only if no newer document came meanwhile;
 * observe(), save_state() and load_state() get what was read under the lock. The coordinator's
 * start() and stop() take no lock either.
 */
class poller_ledger {
public:
    poller_ledger(tracking_options tracking, approval_options approval, std::shared_ptr<approval_coordinator> coordinator,
                  bool can_approve, std::function<void()> wake);

    // -- the events ---------------------------------------------------------------------------
    /// The changes from the last delivered document to `d`; the approver sees `d` too.
    std::vector<change> track(const document& d, change_tracker::observation when);
    /// `n` of the changes of the last track() were handed on. Returns whether the delivered
    /// content moved (its incarnation changed), which is worth saving even without a change.
    bool delivered(std::size_t n);
    /// The last document tracked (what handlers see as the present).
    document latest() const;
    /// The last document whose changes were all delivered.
    document delivered_document() const;

    // -- the approvals ------------------------------------------------------------------------
    approval_handle handle(const std::string& id);
    approval_handle handle_for_known(const std::string& id);
    std::string self() const;
    void set_self(const std::string& name);
    const std::shared_ptr<approval_coordinator>& coordinator() const noexcept { return approver_.coordinator(); }
    result<void> start_coordinator(const clock& c, const logger& log);
    void stop_coordinator() noexcept { approver_.stop_coordinator(); }
    /// When the approvals due may grow without a new document.
    std::optional<clock::time_point> next_deadline(clock::time_point now, clock::wall_time_point wall) const;
    /// The ids to approve now, in document order; `problems` gets the coordinator's errors.
    std::vector<std::string> due(clock::time_point now, clock::wall_time_point wall, std::vector<error>& problems);
    /// Wanted events of the latest document not approved yet.
    std::vector<std::string> awaiting() const;
    /// The approval of `ids` succeeded (the tracker keeps it as evidence).
    void approved(const std::vector<std::string>& ids);
    void failed(const std::vector<std::string>& ids, const error& e);
    /// Dry run: `ids` were due and nothing was sent.
    void withheld(const std::vector<std::string>& ids);
    /// Outcome callbacks of handles that became final, to run with no lock held.
    std::vector<approver::completion> take_completions();
    /// The events handles declined since the last call (approver::take_declined).
    std::vector<std::string> take_declined();

    // -- what is saved --------------------------------------------------------------------------
    poller_state save() const;
    void restore(const poller_state& st, clock::time_point now);

private:
    mutable std::mutex mutex_;
    change_tracker tracker_;
    approver approver_;
    std::uint64_t generation_ = 0;  // counts the documents tracked (and restores): "still current"
};

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/poller/ledger-inl.hpp>
#endif
