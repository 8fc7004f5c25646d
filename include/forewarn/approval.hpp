// SPDX-License-Identifier: MIT
#pragma once

// The poller's approval part: which events this VM approves and when (approval_policy, with
// leader election), the readiness that prepare handlers give through approval_handle, the
// outcome each handle can read back, and the optional cross-VM coordinator (a fleet budget).

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/coordinator.hpp>
#include <forewarn/event.hpp>
#include <forewarn/leader.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/state_store.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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

    /// Records when each event of `d` was first seen, and forgets events that are gone.
    void observe(const document& d, clock::time_point now);

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

    /// How long ago `id` was first seen (0 when unknown).
    std::chrono::nanoseconds seen_for(std::string_view id, clock::time_point now) const;

    /// The ids to approve now, in document order (one POST can carry them all).
    std::vector<std::string> due(const document& d, clock::time_point now) const;

    /**
     * The earliest time after `now` when due() may grow without a new document (a follower's
     * grace ending), so a poller whose source waits long (GCE) asks for a document by then.
     */
    std::optional<clock::time_point> next_deadline(const document& d, clock::time_point now) const;

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
    std::unordered_map<std::string, entry> entries_;
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

/// What the approver shares with the approval handles it gives out.
struct approval_shared {
    using callback = std::function<void(const approval_status&)>;
    std::mutex mutex;
    std::vector<std::string> ready;  ///< ready() calls not drained yet
    std::unordered_map<std::string, approval_status> status;
    std::unordered_map<std::string, std::vector<callback>> on_done;
    std::function<void()> wake;  ///< wakes the poller (set once, before any handle exists)
    bool can_approve = true;     ///< false: ready() settles at once as not_approved
};

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
    /// Whether the source can approve at all (GCE and AWS cannot).
    void set_can_approve(bool can);

    const std::string& self() const noexcept { return policy_.self(); }
    void set_self(std::string name) { policy_.set_self(std::move(name)); }
    bool needs_identity() const noexcept { return can_approve_ && policy_.needs_identity(); }

    /// A handle for a prepare change of `id` (a new life of the id: GCE and AWS ids recur).
    approval_handle handle(const std::string& id);

    /// The coordinator starts once this VM's name is known (again after a failed start).
    result<void> start_coordinator(const clock& c, const logger& log);
    void stop_coordinator() noexcept;

    /**
     * The latest document: first-seen times, readiness handed in since, the statuses of events
     * that are gone or no longer Scheduled, and the coordinator's view of this VM's events.
     */
    void observe(const document& d, clock::time_point now);

    /// Readiness given by handles since the last call.
    void drain();

    /**
     * The ids to approve now (the policy, then the coordinator), in document order. Every wanted
     * event gets its status; `problems` receives the coordinator's errors.
     */
    std::vector<std::string> due(const document& d, clock::time_point now, std::vector<error>& problems);

    /// The approval of `ids` succeeded.
    void approved(const std::vector<std::string>& ids, const document& d);

    /// The approval of `ids` failed (tried again at the next document).
    void failed(const std::vector<std::string>& ids, const error& e);

    /// Dry run: `ids` were due and nothing was sent. Final for their handles: not_approved.
    void withheld(const std::vector<std::string>& ids);

    /// When due() may grow without a new document (a follower's grace ending).
    std::optional<clock::time_point> next_deadline(const document& d, clock::time_point now) const;

    /// Callbacks of handles whose outcome became final, to run without a lock held.
    std::vector<completion> take_completions();

    /// Wanted events not approved yet (for a health snapshot).
    std::vector<std::string> awaiting(const document& d) const;

    /// Adds readiness to a state about to be saved, and the coordinator's own.
    void save(poller_state& st) const;
    /// Continues from a saved state.
    void restore(const poller_state& st, clock::time_point now);

private:
    // A wanted event the policy does not let through now: final or waiting, and why.
    void status_not_due(const event& e, clock::time_point now);

    void update(const std::string& id, approval_status st);

    void settle(const std::string& id, approval_status st);

    std::vector<local_event> local_events(const document& d) const;

    approval_policy policy_;
    std::shared_ptr<approval_coordinator> coordinator_;
    std::shared_ptr<detail::approval_shared> shared_;
    std::vector<completion> completions_;
    bool can_approve_ = true;
    bool coordinator_started_ = false;
};

#if FOREWARN_HEADER_DEFINITIONS
// Compiled into libforewarn in compiled mode (docs/building.md), inline in every user otherwise.

FOREWARN_INLINE bool approval_policy::needs_identity() const noexcept {
    return self_.empty() && options_.scope != approval_scope::never && options_.scope != approval_scope::all;
}

FOREWARN_INLINE void approval_policy::observe(const document& d, clock::time_point now) {
    std::unordered_map<std::string, entry> next;
    next.reserve(d.events.size());
    for (const auto& e : d.events) {
        auto it = entries_.find(e.id);
        if (it != entries_.end())
            next.emplace(e.id, it->second);
        else
            next.emplace(e.id, entry{now, false, false, false});
    }
    entries_ = std::move(next);
}

FOREWARN_INLINE void approval_policy::mark_ready(std::string_view id) {
    auto it = entries_.find(std::string(id));
    if (it != entries_.end()) it->second.ready = true;
}

FOREWARN_INLINE bool approval_policy::is_ready(std::string_view id) const {
    auto it = entries_.find(std::string(id));
    return it != entries_.end() && it->second.ready;
}

FOREWARN_INLINE void approval_policy::mark_approved(const std::vector<std::string>& ids) {
    for (const auto& id : ids) {
        auto it = entries_.find(id);
        if (it != entries_.end()) it->second.approved = true;
    }
}

FOREWARN_INLINE bool approval_policy::was_approved(std::string_view id) const {
    auto it = entries_.find(std::string(id));
    return it != entries_.end() && it->second.approved;
}

FOREWARN_INLINE void approval_policy::mark_withheld(const std::vector<std::string>& ids) {
    for (const auto& id : ids) {
        auto it = entries_.find(id);
        if (it != entries_.end()) it->second.withheld = true;
    }
}

FOREWARN_INLINE bool approval_policy::was_withheld(std::string_view id) const {
    auto it = entries_.find(std::string(id));
    return it != entries_.end() && it->second.withheld;
}

FOREWARN_INLINE bool approval_policy::approves_at_once(const event& e) const noexcept {
    if (options_.approve_user_events && e.source == event_source::user) return true;
    if (options_.approve_freeze_shorter_than && e.type == event_type::freeze && e.duration_in_seconds &&
        *e.duration_in_seconds >= 0 && *e.duration_in_seconds < options_.approve_freeze_shorter_than->count())
        return true;
    return false;
}

FOREWARN_INLINE bool approval_policy::allowed(const event& e, std::chrono::nanoseconds seen_for) const noexcept {
    switch (options_.scope) {
    case approval_scope::never: return false;
    case approval_scope::all: return true;
    case approval_scope::own: return !self_.empty() && e.affects(self_);
    case approval_scope::leader: return election_.may_approve(e, self_, seen_for);
    }
    return false;
}

FOREWARN_INLINE std::chrono::nanoseconds approval_policy::seen_for(std::string_view id, clock::time_point now) const {
    auto it = entries_.find(std::string(id));
    return it == entries_.end() ? std::chrono::nanoseconds(0) : std::chrono::nanoseconds(now - it->second.first_seen);
}

FOREWARN_INLINE std::vector<std::string> approval_policy::due(const document& d, clock::time_point now) const {
    std::vector<std::string> out;
    for (const auto& e : d.events) {
        if (e.status != event_status::scheduled) continue;
        auto it = entries_.find(e.id);
        if (it == entries_.end() || it->second.approved || it->second.withheld) continue;
        if (std::find(out.begin(), out.end(), e.id) != out.end()) continue;
        if (!it->second.ready && !approves_at_once(e)) continue;
        if (!allowed(e, now - it->second.first_seen)) continue;
        out.push_back(e.id);
    }
    return out;
}

FOREWARN_INLINE std::optional<clock::time_point> approval_policy::next_deadline(const document& d,
                                                                                clock::time_point now) const {
    if (options_.scope != approval_scope::leader) return std::nullopt;
    std::optional<clock::time_point> best;
    for (const auto& e : d.events) {
        auto it = entries_.find(e.id);
        if (it == entries_.end() || it->second.approved || it->second.withheld || e.status != event_status::scheduled)
            continue;
        if (e.source != event_source::user || !e.affects(self_) || election_.is_leader(e, self_)) continue;
        if (!it->second.ready && !approves_at_once(e)) continue;
        const auto at = it->second.first_seen + election_.follower_grace();
        if (at > now && (!best || at < *best)) best = at;
    }
    return best;
}

FOREWARN_INLINE std::vector<std::string> approval_policy::approved_ids() const {
    std::vector<std::string> out;
    for (const auto& [id, en] : entries_)
        if (en.approved) out.push_back(id);
    std::sort(out.begin(), out.end());
    return out;
}

FOREWARN_INLINE void approval_handle::ready(std::function<void(const approval_status&)> on_done) const {
    if (!shared_) return;
    std::function<void()> wake;
    std::optional<approval_status> final_now;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        auto it = shared_->status.find(id_);
        if (!shared_->can_approve) {
            // Nothing to wait for: the source cannot approve (GCE, AWS).
            approval_status st{approval_state::not_approved, "this source cannot approve", {}};
            if (it != shared_->status.end() && !is_final(it->second.state)) it->second = st;
            final_now = it != shared_->status.end() ? it->second : st;
        } else if (it != shared_->status.end() && is_final(it->second.state)) {
            final_now = it->second;
        } else {
            shared_->ready.push_back(id_);
            if (on_done) shared_->on_done[id_].push_back(std::move(on_done));
            wake = shared_->wake;
        }
    }
    if (final_now && on_done) on_done(*final_now);
    if (wake) wake();
}

FOREWARN_INLINE approval_status approval_handle::status() const {
    if (!shared_) return {approval_state::not_approved, "no poller behind this handle", {}};
    std::lock_guard<std::mutex> lock(shared_->mutex);
    auto it = shared_->status.find(id_);
    if (it == shared_->status.end()) return {};
    return it->second;
}

FOREWARN_INLINE void approver::set_wake(std::function<void()> wake) {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->wake = std::move(wake);
}

FOREWARN_INLINE void approver::set_can_approve(bool can) {
    can_approve_ = can;
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->can_approve = can;
}

FOREWARN_INLINE approval_handle approver::handle(const std::string& id) {
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->status.insert_or_assign(id, approval_status{});
    }
    return approval_handle(shared_, id);
}

FOREWARN_INLINE result<void> approver::start_coordinator(const clock& c, const logger& log) {
    if (!coordinator_ || coordinator_started_) return {};
    coordinator_context ctx;
    ctx.self = policy_.self();
    ctx.clock = c;
    ctx.log = log;
    std::weak_ptr<detail::approval_shared> weak = shared_;
    ctx.wake = [weak] {
        if (auto s = weak.lock()) {
            std::function<void()> w;
            {
                std::lock_guard<std::mutex> lock(s->mutex);
                w = s->wake;
            }
            if (w) w();
        }
    };
    auto r = coordinator_->start(ctx);
    coordinator_started_ = r.has_value();
    return r;
}

FOREWARN_INLINE void approver::stop_coordinator() noexcept {
    if (coordinator_ && coordinator_started_) coordinator_->stop();
    coordinator_started_ = false;
}

FOREWARN_INLINE void approver::observe(const document& d, clock::time_point now) {
    policy_.observe(d, now);
    drain();
    std::vector<std::string> gone;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        for (auto& [id, st] : shared_->status) {
            if (is_final(st.state)) continue;
            const event* e = d.find(id);
            if (!e)
                gone.push_back(id);
            else if (e->status != event_status::scheduled && !policy_.was_approved(id))
                gone.push_back(id);
        }
    }
    for (const auto& id : gone)
        settle(id, {approval_state::gone, d.find(id) ? "the event started before this VM approved it"
                                                      : "the event ended before this VM approved it",
                    {}});
    // Final statuses stay (a handle may read its outcome long after): one small entry per
    // prepare, and prepares are rare.
    if (coordinator_ && coordinator_started_) coordinator_->observe(local_events(d));
}

FOREWARN_INLINE void approver::drain() {
    std::vector<std::string> ids;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        ids.swap(shared_->ready);
    }
    for (const auto& id : ids) policy_.mark_ready(id);
}

FOREWARN_INLINE std::vector<std::string> approver::due(const document& d, clock::time_point now,
                                                       std::vector<error>& problems) {
    drain();
    std::vector<std::string> out;
    const auto candidates = can_approve_ ? policy_.due(d, now) : std::vector<std::string>{};
    for (const auto& e : d.events) {
        if (e.status != event_status::scheduled || policy_.was_approved(e.id) || policy_.was_withheld(e.id) ||
            !policy_.wanted(e))
            continue;
        if (std::find(candidates.begin(), candidates.end(), e.id) == candidates.end()) {
            status_not_due(e, now);
            continue;
        }
        if (coordinator_) {
            if (!coordinator_started_) {
                update(e.id, {approval_state::waiting, "the fleet coordinator has not started", {}});
                continue;
            }
            auto admitted = coordinator_->admit(e);
            if (!admitted) {
                error err = admitted.error();
                err.event_id = e.id;
                problems.push_back(err);
                update(e.id, {approval_state::waiting, "the fleet coordinator failed: not approving early", err});
                continue;
            }
            if (!*admitted) {
                update(e.id, {approval_state::waiting, "waiting for a fleet slot", {}});
                continue;
            }
        }
        out.push_back(e.id);
    }
    if (coordinator_ && coordinator_started_) coordinator_->observe(local_events(d));
    return out;
}

FOREWARN_INLINE void approver::approved(const std::vector<std::string>& ids, const document& d) {
    policy_.mark_approved(ids);
    for (const auto& id : ids) settle(id, {approval_state::approved, "approved by this VM", {}});
    if (coordinator_ && coordinator_started_) coordinator_->observe(local_events(d));
}

FOREWARN_INLINE void approver::failed(const std::vector<std::string>& ids, const error& e) {
    for (const auto& id : ids) update(id, {approval_state::failed, "the approval request failed", e});
}

FOREWARN_INLINE void approver::withheld(const std::vector<std::string>& ids) {
    policy_.mark_withheld(ids);
    for (const auto& id : ids) update(id, {approval_state::not_approved, "dry run: it would have been approved now", {}});
}

FOREWARN_INLINE std::optional<clock::time_point> approver::next_deadline(const document& d,
                                                                         clock::time_point now) const {
    return can_approve_ ? policy_.next_deadline(d, now) : std::nullopt;
}

FOREWARN_INLINE auto approver::take_completions() -> std::vector<completion> {
    std::vector<completion> out;
    out.swap(completions_);
    return out;
}

FOREWARN_INLINE std::vector<std::string> approver::awaiting(const document& d) const {
    std::vector<std::string> out;
    if (!can_approve_) return out;
    for (const auto& e : d.events)
        if (e.status == event_status::scheduled && !policy_.was_approved(e.id) && !policy_.was_withheld(e.id) &&
            policy_.wanted(e))
            out.push_back(e.id);
    return out;
}

FOREWARN_INLINE void approver::save(poller_state& st) const {
    for (auto& s : st.events) s.ready = policy_.is_ready(s.id);
    if (coordinator_) st.coordinator = coordinator_->save_state();
}

FOREWARN_INLINE void approver::restore(const poller_state& st, clock::time_point now) {
    policy_.observe(st.delivered, now);
    std::vector<std::string> approved;
    for (const auto& s : st.events) {
        if (s.ready) policy_.mark_ready(s.id);
        if (s.approved) approved.push_back(s.id);
    }
    policy_.mark_approved(approved);
    if (coordinator_ && !st.coordinator.empty()) coordinator_->load_state(st.coordinator);
}

FOREWARN_INLINE void approver::status_not_due(const event& e, clock::time_point now) {
    if (!can_approve_) return update(e.id, {approval_state::not_approved, "this source cannot approve", {}});
    const auto& o = policy_.options();
    if (o.scope == approval_scope::never)
        return update(e.id, {approval_state::not_approved, "approval is off (scope never)", {}});
    if (policy_.needs_identity()) return update(e.id, {approval_state::waiting, "this VM's name is not known yet", {}});
    if (o.scope != approval_scope::all && !e.affects(policy_.self()))
        return update(e.id, {approval_state::not_approved, "the event does not name this VM", {}});
    if (o.scope == approval_scope::leader && !policy_.election().is_leader(e, policy_.self())) {
        if (e.source != event_source::user)
            return update(e.id, {approval_state::not_approved, "a follower leaves a platform event to the leader", {}});
        (void)now;
        return update(e.id, {approval_state::waiting, "a follower approves a user event after the grace", {}});
    }
    update(e.id, {approval_state::waiting, "not allowed yet", {}});
}

FOREWARN_INLINE void approver::update(const std::string& id, approval_status st) {
    if (is_final(st.state)) return settle(id, std::move(st));
    std::lock_guard<std::mutex> lock(shared_->mutex);
    auto it = shared_->status.find(id);
    if (it != shared_->status.end() && !is_final(it->second.state)) it->second = std::move(st);
}

FOREWARN_INLINE void approver::settle(const std::string& id, approval_status st) {
    std::vector<detail::approval_shared::callback> callbacks;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        auto it = shared_->status.find(id);
        if (it == shared_->status.end() || is_final(it->second.state)) return;
        it->second = st;
        auto cb = shared_->on_done.find(id);
        if (cb != shared_->on_done.end()) {
            callbacks = std::move(cb->second);
            shared_->on_done.erase(cb);
        }
    }
    for (auto& c : callbacks) completions_.emplace_back(std::move(c), st);
}

FOREWARN_INLINE std::vector<local_event> approver::local_events(const document& d) const {
    std::vector<local_event> out;
    out.reserve(d.events.size());
    for (const auto& e : d.events) out.push_back(local_event{e, policy_.wanted(e), policy_.was_approved(e.id)});
    return out;
}

FOREWARN_INLINE approver::approver(approval_options options, std::shared_ptr<approval_coordinator> coordinator)
    : policy_(std::move(options)), coordinator_(std::move(coordinator)),
      shared_(std::make_shared<detail::approval_shared>()) {}

#endif  // FOREWARN_HEADER_DEFINITIONS

FOREWARN_END_NAMESPACE
