// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/event.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// How the VMs named in an event's Resources pick the one that approves it.
enum class leader_rule {
    first_listed,  ///< the first name in Resources (the seeds' "first machine in Resources")
    lowest_name,   ///< the lowest name in byte order (stable if Azure ever reorders Resources)
};

/**
 * Leader election over an event's Resources. Approving an Azure event lets it proceed for every
 * VM it names, so one of them (the leader) approves. For user-initiated events the seeds advise a
 * primary and a secondary: a follower approves too when the event is still Scheduled a grace
 * period after it first saw it, so recovery is not held back by a leader that does not answer.
 * Platform events are left to the leader and to NotBefore.
 */
class leader_election {
public:
    leader_election() = default;
    explicit leader_election(leader_rule rule, std::chrono::nanoseconds follower_grace = std::chrono::seconds(30))
        : rule_(rule), grace_(follower_grace) {}

    leader_rule rule() const noexcept { return rule_; }
    std::chrono::nanoseconds follower_grace() const noexcept { return grace_; }

    /// The elected leader among e.resources; empty when it lists nobody.
    std::string_view leader(const event& e) const noexcept {
        if (e.resources.empty()) return {};
        if (rule_ == leader_rule::first_listed) return e.resources.front();
        return *std::min_element(e.resources.begin(), e.resources.end());
    }

    /// True when `self` is named by the event and elected.
    bool is_leader(const event& e, std::string_view self) const noexcept {
        return !self.empty() && e.affects(self) && leader(e) == self;
    }

    /**
     * Whether `self` may approve `e`, which it first saw `seen_for` ago: the leader always; a
     * follower only a user-initiated event still Scheduled once the grace period has passed.
     * A VM the event does not name never.
     */
    bool may_approve(const event& e, std::string_view self, std::chrono::nanoseconds seen_for) const noexcept {
        if (self.empty() || !e.affects(self)) return false;
        if (leader(e) == self) return true;
        return follower_may_approve(e, seen_for);
    }

    /// The follower rule alone: a user-initiated event still Scheduled after the grace period.
    bool follower_may_approve(const event& e, std::chrono::nanoseconds seen_for) const noexcept {
        return e.source == event_source::user && e.status == event_status::scheduled && seen_for >= grace_;
    }

private:
    leader_rule rule_ = leader_rule::first_listed;
    std::chrono::nanoseconds grace_ = std::chrono::seconds(30);
};

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

/// What approval_policy approves and when. Plain struct: set the members you care about.
struct approval_options {
    approval_scope scope = approval_scope::own;
    /// Approve user-initiated (EventSource User) events at once, without waiting for ready
    /// (the seeds: "approving them immediately can help to avoid delays in admin actions").
    bool approve_user_events = false;
    /// Approve at once Freeze events whose known duration is shorter than this (the seed's
    /// sample: 0 <= DurationInSeconds < 9 is "no impact"). Unknown (-1) durations never qualify.
    std::optional<std::chrono::seconds> approve_freeze_shorter_than;
    /// This VM's name as Azure lists it in Resources; empty: ask the client's identity().
    std::string self;
    leader_rule rule = leader_rule::first_listed;
    std::chrono::nanoseconds follower_grace = std::chrono::seconds(30);
};

/**
 * Decides which events to approve, and remembers what it approved. Not thread-safe: the poller
 * owns it and feeds it readiness from its own thread.
 *
 * An event is due when it is Scheduled, not yet approved, wanted (its prepare handler said ready,
 * or an at-once rule covers it), and allowed by the scope: `own` needs this VM in Resources;
 * `leader` also needs the election (a follower only approves a user event after the grace);
 * `all` approves anything; `never` nothing. Time is a monotonic count from the poller's clock.
 */
class approval_policy {
public:
    explicit approval_policy(approval_options options = {})
        : options_(std::move(options)), election_(options_.rule, options_.follower_grace), self_(options_.self) {}

    const approval_options& options() const noexcept { return options_; }
    const leader_election& election() const noexcept { return election_; }

    /// This VM's name; empty until set (from the options or the client's identity()).
    const std::string& self() const noexcept { return self_; }
    void set_self(std::string name) { self_ = std::move(name); }

    /// True when approving needs this VM's name and none is known yet.
    bool needs_identity() const noexcept {
        return self_.empty() && options_.scope != approval_scope::never && options_.scope != approval_scope::all;
    }

    /// Records when each event of `d` was first seen, and forgets events that are gone.
    void observe(const document& d, std::chrono::nanoseconds now) {
        std::unordered_map<std::string, entry> next;
        next.reserve(d.events.size());
        for (const auto& e : d.events) {
            auto it = entries_.find(e.id);
            if (it != entries_.end())
                next.emplace(e.id, it->second);
            else
                next.emplace(e.id, entry{now, false, false});
        }
        entries_ = std::move(next);
    }

    /// The prepare handler for `id` said it is ready. Repeating it changes nothing.
    void mark_ready(std::string_view id) {
        auto it = entries_.find(std::string(id));
        if (it != entries_.end()) it->second.ready = true;
    }

    bool is_ready(std::string_view id) const {
        auto it = entries_.find(std::string(id));
        return it != entries_.end() && it->second.ready;
    }

    /// The approval of these ids succeeded: never approve them again.
    void mark_approved(const std::vector<std::string>& ids) {
        for (const auto& id : ids) {
            auto it = entries_.find(id);
            if (it != entries_.end()) it->second.approved = true;
        }
    }

    bool was_approved(std::string_view id) const {
        auto it = entries_.find(std::string(id));
        return it != entries_.end() && it->second.approved;
    }

    /// Whether an at-once rule (user event, short Freeze) covers `e`, readiness aside.
    bool approves_at_once(const event& e) const noexcept {
        if (options_.approve_user_events && e.source == event_source::user) return true;
        if (options_.approve_freeze_shorter_than && e.type == event_type::freeze && e.duration_in_seconds &&
            *e.duration_in_seconds >= 0 && *e.duration_in_seconds < options_.approve_freeze_shorter_than->count())
            return true;
        return false;
    }

    /// Whether the scope lets this VM approve `e`, first seen `seen_for` ago.
    bool allowed(const event& e, std::chrono::nanoseconds seen_for) const noexcept {
        switch (options_.scope) {
        case approval_scope::never: return false;
        case approval_scope::all: return true;
        case approval_scope::own: return !self_.empty() && e.affects(self_);
        case approval_scope::leader: return election_.may_approve(e, self_, seen_for);
        }
        return false;
    }

    /// The ids to approve now, in document order (one POST can carry them all).
    std::vector<std::string> due(const document& d, std::chrono::nanoseconds now) const {
        std::vector<std::string> out;
        for (const auto& e : d.events) {
            if (e.status != event_status::scheduled) continue;
            auto it = entries_.find(e.id);
            if (it == entries_.end() || it->second.approved) continue;
            if (std::find(out.begin(), out.end(), e.id) != out.end()) continue;
            if (!it->second.ready && !approves_at_once(e)) continue;
            if (!allowed(e, now - it->second.first_seen)) continue;
            out.push_back(e.id);
        }
        return out;
    }

    /**
     * The earliest time after `now` when due() may grow without a new document (a follower's
     * grace ending), so a poller that sleeps long (GCE) or is driven by hand knows to look again.
     */
    std::optional<std::chrono::nanoseconds> next_deadline(const document& d, std::chrono::nanoseconds now) const {
        if (options_.scope != approval_scope::leader) return std::nullopt;
        std::optional<std::chrono::nanoseconds> best;
        for (const auto& e : d.events) {
            auto it = entries_.find(e.id);
            if (it == entries_.end() || it->second.approved || e.status != event_status::scheduled) continue;
            if (e.source != event_source::user || !e.affects(self_) || election_.is_leader(e, self_)) continue;
            const auto at = it->second.first_seen + election_.follower_grace();
            if (at > now && (!best || at < *best)) best = at;
        }
        return best;
    }

    /// Ids approved so far among the events still present (for a state file).
    std::vector<std::string> approved_ids() const {
        std::vector<std::string> out;
        for (const auto& [id, en] : entries_)
            if (en.approved) out.push_back(id);
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    struct entry {
        std::chrono::nanoseconds first_seen;
        bool ready = false;
        bool approved = false;
    };

    approval_options options_;
    leader_election election_;
    std::string self_;
    std::unordered_map<std::string, entry> entries_;
};

FOREWARN_END_NAMESPACE
