// SPDX-License-Identifier: MIT
#pragma once

// The poller's change tracking: the diff from the last delivered document, the recover reason
// decided from evidence gathered across documents, and partial delivery after a stop().

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/hidden.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/poller/state_store.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// Options of change_tracker. Plain struct.
struct tracking_options {
    /**
     * Two documents further apart than this (by our monotonic or our wall clock) are not
     * continuous watching: an event that vanished between them before its NotBefore is
     * `unknown`, not `cancelled`. Unset: twice the usual spacing of the documents plus a second,
     * at least 2 s (3 s at a 1 s interval), so that a VM paused by a short Freeze counts
     * as a gap. The service's own clock (its Date headers) is judged the same way against its
     * own usual spacing, so an emulator running faster than real time is no gap.
     */
    std::optional<std::chrono::milliseconds> max_gap;
    /// This boot's id. Empty: /proc/sys/kernel/random/boot_id (Linux), else none (no reboot evidence).
    std::string boot_id;
};

namespace detail {

/// This boot's id on Linux ("" elsewhere or when unreadable). No <fstream>: one small read.
std::string read_boot_id();

std::string seconds_text(std::chrono::nanoseconds d);

}  // namespace detail

/**
 * Turns each successfully parsed document into the changes to deliver, and decides why an event
 * is over from evidence, never by guessing:
 *
 * | evidence                                                          | reason    |
 * |-------------------------------------------------------------------|-----------|
 * | the service marks it completed / cancelled (a final status)       | that      |
 * | it was seen Started                                               | completed |
 * | this VM approved it (an approved event starts at once)            | completed |
 * | this VM rebooted since it saw it (boot id, kept across restarts)  | completed |
 * | NotBefore had passed when it vanished (the service's Date, else our wall clock) | completed |
 * | its source's notices end by being cleared                         | completed |
 * | vanished before NotBefore, watched without a gap                  | cancelled |
 * | anything else (a gap in watching, a restart, no NotBefore)        | unknown   |
 *
 * Not thread-safe: the poller owns it.
 */
class change_tracker {
public:
    /// When a document was had: our monotonic and wall clocks.
    struct observation {
        clock::time_point steady;
        clock::wall_time_point wall;
    };

    explicit change_tracker(tracking_options options = {});

    const tracking_options& options() const noexcept { return options_; }
    const std::string& boot_id() const noexcept { return options_.boot_id; }

    /**
     * The changes from the last delivered document to `d`, reasons decided. Records the evidence
     * `d` gives. Call delivered() once the changes were handed on.
     */
    std::vector<change> track(const document& d, observation when);

    /**
     * The first `n` changes of the last track() were delivered (all of them unless a stop()
     * cut delivery short): the delivered document reflects exactly those, and the rest come
     * again from the next document.
     */
    void delivered(std::size_t n);

    /// This VM's approval of these events succeeded (evidence that they happened once gone).
    void mark_approved(const std::vector<std::string>& ids);
    bool approved(std::string_view id) const;

    /// The last document whose changes were all delivered (what the state store keeps).
    const document& delivered_document() const noexcept { return base_; }
    /// The last document tracked.
    const document& latest() const noexcept { return latest_; }

    /// What to keep across a restart: the delivered document and each of its events' evidence
    /// (`ready` is the approver's to fill).
    poller_state save() const;

    /// Continues from a saved state: its events count as delivered, and as not watched since.
    /// Its incarnation is not trusted (the service may have started over and reached it again).
    void restore(const poller_state& st);

    /// The gap beyond which two documents are not continuous watching by our clocks (see
    /// tracking_options).
    std::chrono::nanoseconds max_gap() const;
    /// The same by the service's clock: relative to the usual spacing of its Date headers.
    std::chrono::nanoseconds max_service_gap() const { return services_.limit(); }

private:
    // The usual spacing of documents on one clock: the median of the last eight.
    class cadence {
    public:
        void add(std::chrono::nanoseconds d);
        std::chrono::nanoseconds usual() const;
        /// Twice the usual spacing plus a second, at least 2 s.
        std::chrono::nanoseconds limit() const;

    private:
        std::array<std::chrono::nanoseconds, 8> last_{};
        std::size_t next_ = 0;
        std::size_t count_ = 0;
    };

    struct evidence {
        std::optional<clock::wall_time_point> first_seen, last_seen, last_seen_service;
        std::optional<clock::time_point> last_seen_steady;  // this process only
        bool seen_started = false;
        bool approved = false;
        bool restored = false;  // known from a saved state, not seen by this process yet
        std::string boot_id;
    };

    // A recover the two documents could not decide: the evidence across documents.
    void decide(change& c, const document& d, observation when);

    static void set(change& c, recover_reason r, std::string why);

    void apply(const change& c);

    void forget_if_gone(const std::string& id);

    tracking_options options_;
    document base_;
    document latest_;
    std::vector<change> pending_;
    struct evidence_map;  // by id: an unordered_map, in change_tracker-inl.hpp
    detail::hidden<evidence_map> evidence_;
    std::optional<clock::time_point> last_steady_;
    std::optional<clock::wall_time_point> last_service_;
    cadence ours_;
    cadence services_;
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/poller/change_tracker-inl.hpp>
#endif
