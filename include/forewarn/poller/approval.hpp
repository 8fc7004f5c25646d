// SPDX-License-Identifier: MIT
#pragma once

// The poller's approval part: which events this VM approves and when (approval_policy, with
// leader election), the readiness that prepare handlers give through approval_handle, the
// outcome each handle can read back, and the optional cross-VM coordinator (a fleet budget).

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/hidden.hpp>
#include <forewarn/detail/std_function.hpp>
#include <forewarn/poller/approval_window.hpp>
#include <forewarn/poller/coordinator.hpp>
#include <forewarn/event.hpp>
#include <forewarn/poller/leader.hpp>
#include <forewarn/log.hpp>
#include <forewarn/readiness.hpp>
#include <forewarn/result.hpp>
#include <forewarn/poller/state_store.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// Which events this VM approves at all.
enum class approval_scope {
    never,   ///< approve nothing: events proceed at NotBefore
    own,     ///< events whose Resources name this VM (the scale-set Terminate rule)
    leader,  ///< events naming this VM where it is the elected leader (plus the follower rule)
    all,     ///< every Scheduled event seen, whoever it names (it then proceeds for all of them)
};

/// "never", "own", "leader" or "all".
constexpr std::string_view to_string(approval_scope s) noexcept {
    switch (s) {
    case approval_scope::never: return "never";
    case approval_scope::own: return "own";
    case approval_scope::leader: return "leader";
    case approval_scope::all: return "all";
    }
    return "never";
}

/// What approval_policy approves and when. Plain struct: set the members you care about. This
/// VM's name is not here: it is the source's identity (its `self_name` option, or asked).
struct approval_options {
    approval_scope scope = approval_scope::own;
    /// Approve user-initiated (EventSource User) events at once, without waiting for ready
    /// (the seeds: "approving them immediately can help to avoid delays in admin actions").
    bool approve_user_events = false;
    /// Approve at once Freeze events whose known duration is shorter than this (the seed's
    /// sample: 0 <= DurationInSeconds < 9 is "no impact"). Unknown (-1) durations never qualify.
    std::optional<std::chrono::seconds> approve_freeze_shorter_than;
    /**
     * Approve early only inside this window of wall-clock time (approval_window::parse:
     * "22:00-04:00/mon-fri UTC"); outside it events wait, and proceed at NotBefore as the platform
     * decides. None (the default): any time.
     */
    std::optional<approval_window> window;
    leader_rule rule = leader_rule::first_listed;
    std::chrono::nanoseconds follower_grace = std::chrono::seconds(30);
    /**
     * Decide everything as configured, send nothing: an approval that would be sent now is
     * reported instead (poller_handlers::on_would_approve, an info log line), its handle's status
     * becomes not_approved ("dry run: ..."), and it never counts as approved (no recover reason,
     * state file or health figure takes it for one). The event then starts when the platform
     * starts it, as with scope never.
     */
    bool dry_run = false;
    /**
     * Hold an early approval of an event naming this VM until ready_for_traffic() (with
     * `readiness`) has said this VM is not ready for at least this long: the time a load balancer
     * needs to see the VM's readiness probe fail and take it out of its pool (its check interval
     * times the failures it waits for, plus the requests in flight). The hold and the prepare
     * handler's ready() run at once: the event is due once both are done. The hold counts from
     * the first document in which this VM was not ready (or, with readiness.unready_before, from
     * the moment that turned it so), and starts again whenever the VM is ready again. 0 (the
     * default): no hold. An event whose hold outlasts its NotBefore is never approved early: it
     * starts when the platform starts it.
     */
    std::chrono::seconds unready_for{0};
    /// The readiness `unready_for` counts: the options the VM's probe answers with
    /// (forewarn-watch passes its --unready-before here and to /readyz alike).
    readiness_options readiness;
};

/**
 * Decides which events to approve, and remembers what it approved. Not thread-safe: the poller
 * owns it and feeds it readiness from its own thread.
 *
 * An event is due when it is Scheduled, not yet approved, wanted (its prepare handler said ready,
 * or an at-once rule covers it), and allowed by the scope: `own` needs this VM in Resources;
 * `leader` also needs the election (a follower only approves a user event after the grace);
 * `all` approves anything; `never` nothing. Time is the poller's monotonic clock.
 */
class approval_policy {
public:
    explicit approval_policy(approval_options options = {})
        : options_(std::move(options)), election_(options_.rule, options_.follower_grace) {}

    const approval_options& options() const noexcept { return options_; }
    const leader_election& election() const noexcept { return election_; }

    /// This VM's name; empty until set (from the source's identity()).
    const std::string& self() const noexcept { return self_; }
    void set_self(std::string name) { self_ = std::move(name); }

    /// True when approving needs this VM's name and none is known yet.
    bool needs_identity() const noexcept;

    /// Records when each event of `d` was first seen, and forgets events that are gone; with
    /// approval_options::unready_for, also since when this VM has not been ready (at `wall`, the
    /// service's time now: without it, readiness is taken without readiness.unready_before).
    void observe(const document& d, clock::time_point now,
                 std::optional<std::chrono::system_clock::time_point> wall = std::nullopt);

    /// The prepare handler for `id` said it is ready. Repeating it changes nothing.
    void mark_ready(std::string_view id);
    bool is_ready(std::string_view id) const;

    /// The approval of these ids succeeded: never approve them again.
    void mark_approved(const std::vector<std::string>& ids);
    bool was_approved(std::string_view id) const;

    /// Dry run: these ids would have been approved now. They are never due again, and never
    /// count as approved.
    void mark_withheld(const std::vector<std::string>& ids);
    bool was_withheld(std::string_view id) const;

    /// Whether an at-once rule (user event, short Freeze) covers `e`, readiness aside.
    bool approves_at_once(const event& e) const noexcept;

    /// Wanted: ready, or an at-once rule.
    bool wanted(const event& e) const { return is_ready(e.id) || approves_at_once(e); }

    /// Whether the scope lets this VM approve `e`, first seen `seen_for` ago.
    bool allowed(const event& e, std::chrono::nanoseconds seen_for) const noexcept;

    /// Since when this VM has not been ready for traffic, as the documents observed say (on the
    /// monotonic clock; none while it is ready, or when unready_for is 0).
    std::optional<clock::time_point> unready_since(clock::time_point now) const noexcept;
    /// When the load balancer's hold on `e` ends (unready_since() + unready_for); none when `e`
    /// is not held (unready_for 0, or an event that does not name this VM) or this VM is still
    /// ready. At or before `now`: the hold is over.
    std::optional<clock::time_point> hold_ends(const event& e, clock::time_point now) const noexcept;
    /// Whether the load balancer's hold keeps `e` from being due at `now`.
    bool held(const event& e, clock::time_point now) const noexcept;

    /// How long ago `id` was first seen (0 when unknown).
    std::chrono::nanoseconds seen_for(std::string_view id, clock::time_point now) const;

    /// The ids to approve now, in document order (one POST can carry them all).
    std::vector<std::string> due(const document& d, clock::time_point now,
                                 std::optional<std::chrono::system_clock::time_point> wall = std::nullopt) const;

    /// Whether the window (if any) lets approvals through at `wall` (unknown: not with a window).
    bool in_window(std::optional<std::chrono::system_clock::time_point> wall) const noexcept {
        return !options_.window || (wall && options_.window->contains(*wall));
    }

    /**
     * The earliest time after `now` when due() may grow without a new document (a follower's
     * grace ending), so a poller whose source waits long (a hanging GET) asks for a document by then.
     */
    std::optional<clock::time_point> next_deadline(const document& d, clock::time_point now,
                                                   std::optional<std::chrono::system_clock::time_point> wall = std::nullopt) const;

    /// Ids approved so far among the events still present.
    std::vector<std::string> approved_ids() const;

private:
    struct entry {
        clock::time_point first_seen;
        bool ready = false;
        bool approved = false;
        bool withheld = false;  // dry run: would have been approved
    };

    approval_options options_;
    leader_election election_;
    std::string self_;
    // unready_for: since when this VM has not been ready, and (while it is) the moment time alone
    // turns it not ready (readiness::changes_at on the monotonic clock).
    std::optional<clock::time_point> unready_since_;
    std::optional<clock::time_point> unready_at_;
    struct entry_map;  // by id: an unordered_map, in approval-inl.hpp
    detail::hidden<entry_map> entries_;
};

/// Where an event's approval stands, as its approval_handle sees it.
enum class approval_state {
    pending,       ///< not ready yet (or ready and not looked at yet)
    waiting,       ///< ready, and not allowed yet: a follower's grace, this VM's name, a fleet slot
    approved,      ///< this VM's approval succeeded (final)
    failed,        ///< the last approval request failed; it is tried again (see error)
    not_approved,  ///< this VM will not approve it: the scope, the election, or a source that cannot approve (final)
    gone,          ///< the event started or ended before this VM approved it (final)
};

/// "pending", "waiting", "approved", "failed", "not_approved" or "gone".
constexpr std::string_view to_string(approval_state s) noexcept {
    switch (s) {
    case approval_state::pending: return "pending";
    case approval_state::waiting: return "waiting";
    case approval_state::approved: return "approved";
    case approval_state::failed: return "failed";
    case approval_state::not_approved: return "not_approved";
    case approval_state::gone: return "gone";
    }
    return "pending";
}

/// True for the states that do not change any more.
constexpr bool is_final(approval_state s) noexcept {
    return s == approval_state::approved || s == approval_state::not_approved || s == approval_state::gone;
}

/// The outcome of one event's approval.
struct approval_status {
    approval_state state = approval_state::pending;
    std::string why;    ///< in words, e.g. "a follower approves a user event after the grace"
    forewarn::error error;  ///< for failed (and waiting on a coordinator error): what went wrong
};

namespace detail {
struct approval_shared;  // what the approver shares with its handles (approval-inl.hpp)
}  // namespace detail

/**
 * Given to on_prepare: call ready() once the service is ready for the event to start (drained,
 * checkpointed, ...), from the handler itself or later from any thread. The poller approves it
 * when the approval policy allows (at most once), and the handle reports how that went. Copyable;
 * harmless after the poller is gone.
 */
class approval_handle {
public:
    approval_handle() = default;
    approval_handle(std::shared_ptr<detail::approval_shared> shared, std::string event_id)
        : shared_(std::move(shared)), id_(std::move(event_id)) {}

    /// The event this handle approves.
    const std::string& event_id() const noexcept { return id_; }

    /**
     * Says the service is ready; repeating it is harmless. Wakes the poller to approve promptly.
     * `on_done`, if given, is called once the outcome is final (approved, not_approved or gone):
     * at once on this thread when it is final already, else where the poller calls handlers.
     */
    void ready(std::function<void(const approval_status&)> on_done = {}) const;

    /**
     * Says the service will not be ready for this event (its preparation failed). The poller,
     * woken, settles it as not_approved with `why` (callbacks given to ready() hear it) and tells
     * its source to let go of what it holds for the event: a heartbeat that holds the service's
     * action back stops, and the service goes on at its own timeout. Harmless once final.
     */
    void decline(std::string why = "the service declined it") const;

    /// Where this event's approval stands now.
    approval_status status() const;

private:
    std::shared_ptr<detail::approval_shared> shared_;
    std::string id_;
};

/**
 * The approval part of a poller: the policy, readiness from handles, each event's approval
 * status, and the optional coordinator. The poller's thread calls it; handles may call in from
 * any thread. It decides; the poller sends the approval through its source and reports back.
 */
class approver {
public:
    /// A callback to run for a handle whose outcome became final (the poller runs it).
    using completion = std::pair<std::function<void(const approval_status&)>, approval_status>;

    explicit approver(approval_options options = {}, std::shared_ptr<approval_coordinator> coordinator = {});

    const approval_policy& policy() const noexcept { return policy_; }
    const std::shared_ptr<approval_coordinator>& coordinator() const noexcept { return coordinator_; }

    /// Set before the first handle: how a handle wakes the poller.
    void set_wake(std::function<void()> wake);
    /// Whether the source can approve at all (its can_approve()).
    void set_can_approve(bool can);

    const std::string& self() const noexcept { return policy_.self(); }
    void set_self(std::string name) { policy_.set_self(std::move(name)); }
    bool needs_identity() const noexcept { return can_approve_ && policy_.needs_identity(); }

    /**
     * A handle for a prepare change of `id` (a new life of the id: a source's ids may recur). Given
     * the event, one that cannot be approved (event::approvable false) reads not_approved at once.
     */
    approval_handle handle(const std::string& id, const event* e = nullptr);

    /// The coordinator starts once this VM's name is known (again after a failed start).
    result<void> start_coordinator(const clock& c, const logger& log);
    void stop_coordinator() noexcept;

    /**
     * The latest document: first-seen times, readiness handed in since, the statuses of events
     * that are gone or no longer Scheduled, and the coordinator's view of this VM's events.
     * (note() and then tell_coordinator(), for a caller that holds a lock over the first.)
     */
    void observe(const document& d, clock::time_point now,
                 std::optional<std::chrono::system_clock::time_point> wall = std::nullopt);

    /// Readiness given by handles since the last call.
    void drain();

    /**
     * The ids to approve now (the policy, then the coordinator), in document order. Every wanted
     * event gets its status; `problems` receives the coordinator's errors. One call does the
     * three steps below, and then tell_coordinator().
     */
    std::vector<std::string> due(const document& d, clock::time_point now, std::vector<error>& problems,
                                 std::optional<std::chrono::system_clock::time_point> wall = std::nullopt);

    /// The approval of `ids` succeeded (mark_approved(), then tell_coordinator()).
    void approved(const std::vector<std::string>& ids, const document& d);

    // -- the same in steps, so that its owner can call the coordinator with no lock held -------
    // (the poller's ledger: it decides under its lock, asks the coordinator outside it, and applies
    // the answers under the lock again)

    /// observe() without the coordinator.
    void note(const document& d, clock::time_point now,
              std::optional<std::chrono::system_clock::time_point> wall = std::nullopt);
    /// due()'s first step: the events the policy lets through now (statuses for the others).
    std::vector<event> candidates(const document& d, clock::time_point now,
                                  std::optional<std::chrono::system_clock::time_point> wall = std::nullopt);
    /// due()'s second step: the coordinator's answer for each candidate (true for each without a
    /// coordinator). It calls the coordinator: call it with no lock held.
    std::vector<result<bool>> ask_coordinator(const std::vector<event>& candidates);
    /// due()'s third step: the ids admitted, statuses for the others, the coordinator's errors.
    std::vector<std::string> admitted(const std::vector<event>& candidates, const std::vector<result<bool>>& answers,
                                      std::vector<error>& problems);
    /// approved() without the coordinator.
    void mark_approved(const std::vector<std::string>& ids);
    /// What the coordinator is told of `d` (this VM's events), or nothing without a started one.
    std::optional<std::vector<local_event>> coordinator_view(const document& d) const;
    /// Tells the coordinator `view`, if there is one. It calls the coordinator: no lock held.
    void tell_coordinator(const std::optional<std::vector<local_event>>& view);

    /// The approval of `ids` failed (tried again at the next document).
    void failed(const std::vector<std::string>& ids, const error& e);

    /// Dry run: `ids` were due and nothing was sent. Final for their handles: not_approved.
    void withheld(const std::vector<std::string>& ids);

    /// When due() may grow without a new document (a follower's grace ending, the window opening).
    std::optional<clock::time_point> next_deadline(const document& d, clock::time_point now,
                                                   std::optional<std::chrono::system_clock::time_point> wall = std::nullopt) const;

    /// Callbacks of handles whose outcome became final, to run without a lock held.
    std::vector<completion> take_completions();

    /// The events handles declined since the last call, settled as not_approved (those final
    /// already are left out): what the source may let go of.
    std::vector<std::string> take_declined();

    /// Wanted events not approved yet (for a health snapshot).
    std::vector<std::string> awaiting(const document& d) const;

    /**
     * A handle for an event announced earlier (a prepare delivered before a restart whose work had
     * not finished): unlike handle(), it keeps a status already known, and one restored as
     * approved reads approved.
     */
    approval_handle handle_for_known(const std::string& id, const event* e = nullptr);

    /// Whether `e` can be approved: the source can approve, and the event does not say otherwise.
    bool approvable(const event& e) const noexcept { return can_approve_ && e.approvable.value_or(true); }

    /// Adds readiness to a state about to be saved, and the coordinator's own
    /// (save_readiness(), then the coordinator's save_state()).
    void save(poller_state& st) const;
    /// Continues from a saved state (restore_readiness(), then the coordinator's load_state()).
    void restore(const poller_state& st, clock::time_point now);
    void save_readiness(poller_state& st) const;
    void restore_readiness(const poller_state& st, clock::time_point now);

private:
    // A wanted event the policy does not let through now: final or waiting, and why.
    void status_not_due(const event& e, clock::time_point now, std::optional<std::chrono::system_clock::time_point> wall);

    void update(const std::string& id, approval_status st);

    static approval_status not_approvable() {
        return {approval_state::not_approved, "its source cannot approve this event", {}};
    }

    void settle(const std::string& id, approval_status st);

    std::vector<local_event> local_events(const document& d) const;

    approval_policy policy_;
    std::shared_ptr<approval_coordinator> coordinator_;
    std::shared_ptr<detail::approval_shared> shared_;
    std::vector<completion> completions_;
    bool can_approve_ = true;
    bool coordinator_started_ = false;
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/poller/approval-inl.hpp>
#endif
