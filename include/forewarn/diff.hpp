// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/event.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// What happened to one event between two documents.
enum class change_kind {
    prepare,  ///< a new event that is Scheduled (or of a status this version does not know): time to prepare
    started,  ///< a new event already Started (e.g. hardware failure), or Scheduled -> Started
    recover,  ///< the event disappeared: it completed or was cancelled; see change::reason
    updated,  ///< the same event with other content (NotBefore, Resources, duration, description, ...)
};

/// Why an event is over (recover only). Decided from evidence, never guessed: see
/// change_tracker (docs/poller.md, "Recover reasons").
enum class recover_reason {
    none,       ///< not a recover change
    completed,  ///< it happened: seen Started, NotBefore passed, this VM rebooted or approved it, the service says so
    cancelled,  ///< withdrawn before it started: it vanished before NotBefore while watched without a gap, or the service says so
    unknown,    ///< nothing decides it (e.g. it vanished during a gap in watching): it may or may not have happened
};

/// "prepare", "started", "recover" or "updated".
constexpr std::string_view to_string(change_kind k) noexcept {
    switch (k) {
    case change_kind::prepare: return "prepare";
    case change_kind::started: return "started";
    case change_kind::recover: return "recover";
    case change_kind::updated: return "updated";
    }
    return "unknown";
}

/// "completed", "cancelled", "unknown" or "none".
constexpr std::string_view to_string(recover_reason r) noexcept {
    switch (r) {
    case recover_reason::completed: return "completed";
    case recover_reason::cancelled: return "cancelled";
    case recover_reason::unknown: return "unknown";
    case recover_reason::none: break;
    }
    return "none";
}

/// The enumerator back from its to_string() name (none for any other text).
constexpr recover_reason recover_reason_from_string(std::string_view name) noexcept {
    for (auto r : {recover_reason::completed, recover_reason::cancelled, recover_reason::unknown})
        if (to_string(r) == name) return r;
    return recover_reason::none;
}

/**
 * What this process's own clock saw while an event naming this VM was Started: the VM's pause as
 * the guest lived it (a Freeze is a gap between ticks), beside what the service announced
 * (DurationInSeconds). A paused guest's monotonic clock may keep running (the gap shows there) or
 * stop while its wall clock is stepped forward once time sync catches up (the jump of wall time
 * against monotonic time shows it); both are watched. The poller measures it (pause_meter.hpp) and
 * gives it with the recover change.
 */
struct observed_pause {
    /// The larger of the two below: the longest pause seen.
    std::chrono::nanoseconds longest{0};
    /// The longest a look came later than due on the monotonic clock (0: never late).
    std::chrono::nanoseconds monotonic_gap{0};
    /// The largest forward jump of wall time against monotonic time between two looks.
    std::chrono::nanoseconds wall_jump{0};
    /// From the first look to the last: how long it was watched.
    std::chrono::nanoseconds watched{0};
    /// Looks at the clocks while it was watched.
    std::uint64_t looks = 0;

    /// "monotonic" or "wall": which clock saw `longest` (monotonic when neither saw anything).
    std::string_view seen_by() const noexcept { return wall_jump > monotonic_gap ? "wall" : "monotonic"; }
};

/// One change, carrying the event as it is now (for recover: as it was last seen, or with the
/// final status the service gave it).
struct change {
    change_kind kind = change_kind::prepare;
    forewarn::event event;
    recover_reason reason = recover_reason::none;
    /// recover only: what decided the reason, in words ("seen Started", "NotBefore passed by the
    /// service's clock", "gap of 42 s in watching", ...).
    std::string evidence;
    /// For updated and for Scheduled -> Started: the event as it was before.
    std::optional<forewarn::event> previous;
    cloud origin = cloud::none;  ///< the service of the document that showed the change
    std::string incarnation;     ///< that document's incarnation (informative)
    /// recover only: the pause this process saw while the event was under way and named this VM
    /// (poller_options::pause_look); nothing when it was not watched (an event never seen
    /// Started, another VM's event, measuring off, poll_once()). A process restarted mid-event
    /// watched it from its start only (observed_pause::watched).
    std::optional<observed_pause> pause;
};

namespace detail {

inline change make_change(const document& d, change_kind kind, const event& e,
                          recover_reason reason = recover_reason::none, std::string evidence = {}) {
    change c;
    c.kind = kind;
    c.event = e;
    c.reason = reason;
    c.evidence = std::move(evidence);
    c.origin = d.origin;
    c.incarnation = d.incarnation;
    return c;
}

/// What is known about an event that vanished, beyond the document that lacks it. diff() knows
/// only what the previous document showed; change_tracker knows what spans documents.
struct vanish_evidence {
    bool seen_started = false;  ///< it was seen Started
    bool approved = false;      ///< this VM approved it
    bool rebooted = false;      ///< this VM rebooted since it saw the event
    /// This VM's wall clock when it vanished (NotBefore is judged by it when the service sent no Date).
    std::optional<std::chrono::system_clock::time_point> our_time;
    /// Whether it was watched without a gap until it vanished: unset when nothing is known
    /// (diff() alone); otherwise the gap's description when there was one, "" when none.
    std::optional<std::string> gap;
};

/**
 * The one place recover reasons are decided for an event `last` that `current` lacks: completed
 * when it was seen Started, approved by this VM, the VM rebooted since, the source says a vanished
 * event is over (document::vanished_means_completed), or its NotBefore had passed (the service's
 * clock first, else ours); cancelled when it vanished before NotBefore while Scheduled and watched
 * without a gap; otherwise unknown, with what kept it so.
 */
std::pair<recover_reason, std::string> vanished_reason(const event& last, const document& current,
                                                       const vanish_evidence& ev);

}  // namespace detail

/**
 * The changes that turn `previous` into `current`, in a stable order: first the events of
 * `current` in document order (prepare, started, updated, and recover for an event the service
 * marks completed or cancelled), then the events that disappeared, in the order of `previous`
 * (recover).
 *
 * The recover reason is what the two documents alone can tell (detail::vanished_reason, the rules
 * change_tracker uses too): completed when the event was last seen Started, when its NotBefore
 * had passed by the service's clock (`service_time`) when it vanished, or when the source says a
 * vanished event is over (`vanished_means_completed`: notices that end by being cleared);
 * completed or cancelled when the service says so (a final status); otherwise unknown.
 * change_tracker adds the evidence that spans documents (continuous watching, a reboot, an
 * approval) and is what the poller uses.
 *
 * Only ever call it with documents that were fetched and parsed successfully: a failed poll is
 * not an empty document, so it must not reach diff() (the poller keeps the last good document).
 * Two documents with the same non-empty incarnation have the same content by the protocol's
 * rule, so no work is done. An event first seen with a final status, and one that vanishes
 * after a final status, give nothing. Expected O(n + m) with hashing.
 */
std::vector<change> diff(const document& previous, const document& current);

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/diff-inl.hpp>
#endif
