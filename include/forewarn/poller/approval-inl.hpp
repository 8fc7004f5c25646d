// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/poller/approval.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/poller/approval.hpp>

#include <algorithm>

#if FOREWARN_HEADER_DEFINITIONS

#include <forewarn/detail/hidden-inl.hpp>
#include <forewarn/detail/strings.hpp>

#include <mutex>
#include <unordered_map>

FOREWARN_BEGIN_NAMESPACE

struct approval_policy::entry_map : std::unordered_map<std::string, entry> {};

namespace detail {

/// What the approver shares with the approval handles it gives out.
struct approval_shared {
    using callback = std::function<void(const approval_status&)>;
    std::mutex mutex;
    std::vector<std::string> ready;  ///< ready() calls not drained yet
    std::unordered_map<std::string, approval_status> status;
    std::unordered_map<std::string, std::vector<callback>> on_done;
    std::vector<std::pair<std::string, std::string>> declined;  ///< decline() calls not drained yet: id, why
    std::function<void()> wake;  ///< wakes the poller (set once, before any handle exists)
    bool can_approve = true;     ///< false: ready() settles at once as not_approved
};

}  // namespace detail

FOREWARN_INLINE FOREWARN_COLD bool approval_policy::needs_identity() const noexcept {
    return self_.empty() && options_.scope != approval_scope::never && options_.scope != approval_scope::all;
}

FOREWARN_INLINE FOREWARN_COLD void approval_policy::observe(const document& d, clock::time_point now,
                                                            std::optional<std::chrono::system_clock::time_point> wall) {
    if (options_.unready_for.count() > 0) {
        // As the probe answers: ready_for_traffic() at the service's time. Not ready: since the
        // moment time alone turned it so (seen in an earlier document), else since now.
        readiness_options ro = options_.readiness;
        if (!wall) ro.unready_before = std::chrono::seconds(0);
        const auto r = ready_for_traffic(d, self_, wall.value_or(std::chrono::system_clock::time_point{}), ro);
        if (!r.ready) {
            if (!unready_since_) unready_since_ = unready_at_ && *unready_at_ <= now ? *unready_at_ : now;
            unready_at_.reset();
        } else {
            unready_since_.reset();
            unready_at_.reset();
            if (r.changes_at && wall)
                unready_at_ = now + std::chrono::duration_cast<clock::duration>(*r.changes_at - *wall);
        }
    }
    entry_map next;
    next.reserve(d.events.size());
    for (const auto& e : d.events) {
        auto it = entries_->find(e.id);
        if (it != entries_->end())
            next.emplace(e.id, it->second);
        else
            next.emplace(e.id, entry{now, false, false, false});
    }
    *entries_ = std::move(next);
}

FOREWARN_INLINE FOREWARN_COLD void approval_policy::mark_ready(std::string_view id) {
    auto it = entries_->find(std::string(id));
    if (it != entries_->end()) it->second.ready = true;
}

FOREWARN_INLINE FOREWARN_COLD bool approval_policy::is_ready(std::string_view id) const {
    auto it = entries_->find(std::string(id));
    return it != entries_->end() && it->second.ready;
}

FOREWARN_INLINE FOREWARN_COLD void approval_policy::mark_approved(const std::vector<std::string>& ids) {
    for (const auto& id : ids) {
        auto it = entries_->find(id);
        if (it != entries_->end()) it->second.approved = true;
    }
}

FOREWARN_INLINE FOREWARN_COLD bool approval_policy::was_approved(std::string_view id) const {
    auto it = entries_->find(std::string(id));
    return it != entries_->end() && it->second.approved;
}

FOREWARN_INLINE FOREWARN_COLD void approval_policy::mark_withheld(const std::vector<std::string>& ids) {
    for (const auto& id : ids) {
        auto it = entries_->find(id);
        if (it != entries_->end()) it->second.withheld = true;
    }
}

FOREWARN_INLINE FOREWARN_COLD bool approval_policy::was_withheld(std::string_view id) const {
    auto it = entries_->find(std::string(id));
    return it != entries_->end() && it->second.withheld;
}

FOREWARN_INLINE FOREWARN_COLD bool approval_policy::approves_at_once(const event& e) const noexcept {
    if (options_.approve_user_events && e.source == event_source::user) return true;
    if (options_.approve_freeze_shorter_than && e.type == event_type::freeze && e.duration_in_seconds &&
        *e.duration_in_seconds >= 0 && *e.duration_in_seconds < options_.approve_freeze_shorter_than->count())
        return true;
    return false;
}

FOREWARN_INLINE FOREWARN_COLD bool approval_policy::allowed(const event& e, std::chrono::nanoseconds seen_for) const noexcept {
    switch (options_.scope) {
    case approval_scope::never: return false;
    case approval_scope::all: return true;
    case approval_scope::own: return !self_.empty() && e.affects(self_);
    case approval_scope::leader: return election_.may_approve(e, self_, seen_for);
    }
    return false;
}

FOREWARN_INLINE FOREWARN_COLD std::optional<clock::time_point> approval_policy::unready_since(clock::time_point now) const noexcept {
    if (options_.unready_for.count() <= 0) return std::nullopt;
    if (unready_since_) return unready_since_;
    if (unready_at_ && *unready_at_ <= now) return unready_at_;  // turned by time since the last document
    return std::nullopt;
}

FOREWARN_INLINE FOREWARN_COLD std::optional<clock::time_point> approval_policy::hold_ends(const event& e,
                                                                                       clock::time_point now) const noexcept {
    if (options_.unready_for.count() <= 0 || (!e.resources.empty() && !e.affects(self_))) return std::nullopt;
    if (const auto since = unready_since(now)) return *since + options_.unready_for;
    if (unready_at_) return *unready_at_ + options_.unready_for;  // not yet unready: the hold is all ahead
    return (clock::time_point::max)();  // ready, and no time of its own turns it: held until a document does
}

FOREWARN_INLINE FOREWARN_COLD bool approval_policy::held(const event& e, clock::time_point now) const noexcept {
    const auto ends = hold_ends(e, now);
    return ends && *ends > now;
}

FOREWARN_INLINE FOREWARN_COLD std::chrono::nanoseconds approval_policy::seen_for(std::string_view id, clock::time_point now) const {
    auto it = entries_->find(std::string(id));
    return it == entries_->end() ? std::chrono::nanoseconds(0) : std::chrono::nanoseconds(now - it->second.first_seen);
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> approval_policy::due(const document& d, clock::time_point now,
                                                             std::optional<std::chrono::system_clock::time_point> wall) const {
    std::vector<std::string> out;
    if (!in_window(wall)) return out;
    for (const auto& e : d.events) {
        if (e.status != event_status::scheduled || !e.approvable.value_or(true)) continue;
        auto it = entries_->find(e.id);
        if (it == entries_->end() || it->second.approved || it->second.withheld) continue;
        if (std::find(out.begin(), out.end(), e.id) != out.end()) continue;
        if (!it->second.ready && !approves_at_once(e)) continue;
        if (!allowed(e, now - it->second.first_seen)) continue;
        if (held(e, now)) continue;
        out.push_back(e.id);
    }
    return out;
}

FOREWARN_INLINE FOREWARN_COLD std::optional<clock::time_point> approval_policy::next_deadline(
    const document& d, clock::time_point now, std::optional<std::chrono::system_clock::time_point> wall) const {
    if (options_.window && wall && !options_.window->contains(*wall)) {
        // Closed: the next chance is the opening, if anything waits for it.
        for (const auto& e : d.events) {
            auto it = entries_->find(e.id);
            if (it == entries_->end() || it->second.approved || it->second.withheld || e.status != event_status::scheduled ||
                !e.approvable.value_or(true))
                continue;
            if (!it->second.ready && !approves_at_once(e)) continue;
            return now + std::chrono::duration_cast<clock::duration>(options_.window->next_open(*wall) - *wall) +
                   std::chrono::milliseconds(10);
        }
        return std::nullopt;
    }
    std::optional<clock::time_point> best;
    const auto earliest = [&](clock::time_point at) {
        if (at > now && at != (clock::time_point::max)() && (!best || at < *best)) best = at;
    };
    for (const auto& e : d.events) {
        auto it = entries_->find(e.id);
        if (it == entries_->end() || it->second.approved || it->second.withheld || e.status != event_status::scheduled ||
            !e.approvable.value_or(true))
            continue;
        if (!it->second.ready && !approves_at_once(e)) continue;
        if (const auto ends = hold_ends(e, now)) earliest(*ends);  // the load balancer's hold ending
        if (options_.scope != approval_scope::leader) continue;
        if (e.source != event_source::user || !e.affects(self_) || election_.is_leader(e, self_)) continue;
        earliest(it->second.first_seen + election_.follower_grace());
    }
    return best;
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> approval_policy::approved_ids() const {
    std::vector<std::string> out;
    for (const auto& [id, en] : *entries_)
        if (en.approved) out.push_back(id);
    std::sort(out.begin(), out.end());
    return out;
}

FOREWARN_INLINE FOREWARN_COLD void approval_handle::ready(std::function<void(const approval_status&)> on_done) const {
    if (!shared_) return;
    std::function<void()> wake;
    std::optional<approval_status> final_now;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        auto it = shared_->status.find(id_);
        if (!shared_->can_approve) {
            // Nothing to wait for: the source cannot approve (its can_approve() is false).
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

FOREWARN_INLINE FOREWARN_COLD void approval_handle::decline(std::string why) const {
    if (!shared_) return;
    std::function<void()> wake;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        auto it = shared_->status.find(id_);
        if (it != shared_->status.end() && is_final(it->second.state)) return;
        shared_->declined.emplace_back(id_, std::move(why));
        wake = shared_->wake;
    }
    if (wake) wake();
}

FOREWARN_INLINE FOREWARN_COLD approval_status approval_handle::status() const {
    if (!shared_) return {approval_state::not_approved, "no poller behind this handle", {}};
    std::lock_guard<std::mutex> lock(shared_->mutex);
    auto it = shared_->status.find(id_);
    if (it == shared_->status.end()) return {};
    return it->second;
}

FOREWARN_INLINE FOREWARN_COLD void approver::set_wake(std::function<void()> wake) {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->wake = std::move(wake);
}

FOREWARN_INLINE FOREWARN_COLD void approver::set_can_approve(bool can) {
    can_approve_ = can;
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->can_approve = can;
}

FOREWARN_INLINE FOREWARN_COLD approval_handle approver::handle(const std::string& id, const event* e) {
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->status.insert_or_assign(id, e && can_approve_ && !approvable(*e) ? not_approvable() : approval_status{});
    }
    return approval_handle(shared_, id);
}

FOREWARN_INLINE FOREWARN_COLD approval_handle approver::handle_for_known(const std::string& id, const event* e) {
    const bool approved = policy_.was_approved(id);
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        auto it = shared_->status.try_emplace(id).first;
        if (approved && !is_final(it->second.state))
            it->second = approval_status{approval_state::approved, "approved before this restart", {}};
        else if (e && can_approve_ && !approvable(*e) && !is_final(it->second.state))
            it->second = not_approvable();
    }
    return approval_handle(shared_, id);
}

FOREWARN_INLINE FOREWARN_COLD result<void> approver::start_coordinator(const clock& c, const logger& log) {
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

FOREWARN_INLINE FOREWARN_COLD void approver::stop_coordinator() noexcept {
    if (coordinator_ && coordinator_started_) coordinator_->stop();
    coordinator_started_ = false;
}

FOREWARN_INLINE FOREWARN_COLD void approver::observe(const document& d, clock::time_point now,
                                                     std::optional<std::chrono::system_clock::time_point> wall) {
    note(d, now, wall);
    tell_coordinator(coordinator_view(d));
}

FOREWARN_INLINE FOREWARN_COLD void approver::note(const document& d, clock::time_point now,
                                                  std::optional<std::chrono::system_clock::time_point> wall) {
    policy_.observe(d, now, wall);
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
}

FOREWARN_INLINE FOREWARN_COLD void approver::drain() {
    std::vector<std::string> ids;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        ids.swap(shared_->ready);
    }
    for (const auto& id : ids) policy_.mark_ready(id);
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> approver::due(const document& d, clock::time_point now,
                                                       std::vector<error>& problems,
                                                       std::optional<std::chrono::system_clock::time_point> wall) {
    const auto asked = candidates(d, now, wall);
    auto out = admitted(asked, ask_coordinator(asked), problems);
    tell_coordinator(coordinator_view(d));
    return out;
}

FOREWARN_INLINE FOREWARN_COLD std::vector<event> approver::candidates(const document& d, clock::time_point now,
                                                        std::optional<std::chrono::system_clock::time_point> wall) {
    drain();
    std::vector<event> out;
    const auto allowed = can_approve_ ? policy_.due(d, now, wall) : std::vector<std::string>{};
    for (const auto& e : d.events) {
        if (e.status != event_status::scheduled || policy_.was_approved(e.id) || policy_.was_withheld(e.id) ||
            !policy_.wanted(e))
            continue;
        if (std::find(allowed.begin(), allowed.end(), e.id) == allowed.end()) {
            status_not_due(e, now, wall);
            continue;
        }
        if (coordinator_ && !coordinator_started_) {
            update(e.id, {approval_state::waiting, "the fleet coordinator has not started", {}});
            continue;
        }
        out.push_back(e);
    }
    return out;
}

FOREWARN_INLINE FOREWARN_COLD std::vector<result<bool>> approver::ask_coordinator(const std::vector<event>& asked) {
    std::vector<result<bool>> answers;
    answers.reserve(asked.size());
    for (const auto& e : asked) answers.push_back(coordinator_ ? coordinator_->admit(e) : result<bool>(true));
    return answers;
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> approver::admitted(const std::vector<event>& asked,
                                                            const std::vector<result<bool>>& answers,
                                                            std::vector<error>& problems) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < asked.size() && i < answers.size(); ++i) {
        const auto& e = asked[i];
        if (!answers[i]) {
            error err = answers[i].error();
            err.event_id = e.id;
            problems.push_back(err);
            update(e.id, {approval_state::waiting, "the fleet coordinator failed: not approving early", err});
            continue;
        }
        if (!*answers[i]) {
            update(e.id, {approval_state::waiting, "waiting for a fleet slot", {}});
            continue;
        }
        out.push_back(e.id);
    }
    return out;
}

FOREWARN_INLINE FOREWARN_COLD void approver::approved(const std::vector<std::string>& ids, const document& d) {
    mark_approved(ids);
    tell_coordinator(coordinator_view(d));
}

FOREWARN_INLINE FOREWARN_COLD void approver::mark_approved(const std::vector<std::string>& ids) {
    policy_.mark_approved(ids);
    for (const auto& id : ids) settle(id, {approval_state::approved, "approved by this VM", {}});
}

FOREWARN_INLINE FOREWARN_COLD std::optional<std::vector<local_event>> approver::coordinator_view(const document& d) const {
    if (!coordinator_ || !coordinator_started_) return std::nullopt;
    return local_events(d);
}

FOREWARN_INLINE FOREWARN_COLD void approver::tell_coordinator(const std::optional<std::vector<local_event>>& view) {
    if (view && coordinator_ && coordinator_started_) coordinator_->observe(*view);
}

FOREWARN_INLINE FOREWARN_COLD void approver::failed(const std::vector<std::string>& ids, const error& e) {
    for (const auto& id : ids) update(id, {approval_state::failed, "the approval request failed", e});
}

FOREWARN_INLINE FOREWARN_COLD void approver::withheld(const std::vector<std::string>& ids) {
    policy_.mark_withheld(ids);
    for (const auto& id : ids) update(id, {approval_state::not_approved, "dry run: it would have been approved now", {}});
}

FOREWARN_INLINE FOREWARN_COLD std::optional<clock::time_point> approver::next_deadline(
    const document& d, clock::time_point now, std::optional<std::chrono::system_clock::time_point> wall) const {
    return can_approve_ ? policy_.next_deadline(d, now, wall) : std::nullopt;
}

FOREWARN_INLINE FOREWARN_COLD auto approver::take_completions() -> std::vector<completion> {
    std::vector<completion> out;
    out.swap(completions_);
    return out;
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> approver::take_declined() {
    std::vector<std::pair<std::string, std::string>> declined;
    {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        declined.swap(shared_->declined);
    }
    std::vector<std::string> out;
    for (auto& [id, why] : declined) {
        if (policy_.was_approved(id)) continue;
        policy_.mark_withheld({id});  // never approved after this
        settle(id, {approval_state::not_approved, std::move(why), {}});
        if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
    }
    return out;
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> approver::awaiting(const document& d) const {
    std::vector<std::string> out;
    if (!can_approve_) return out;
    for (const auto& e : d.events)
        if (e.status == event_status::scheduled && approvable(e) && !policy_.was_approved(e.id) &&
            !policy_.was_withheld(e.id) && policy_.wanted(e))
            out.push_back(e.id);
    return out;
}

FOREWARN_INLINE FOREWARN_COLD void approver::save(poller_state& st) const {
    save_readiness(st);
    if (coordinator_) st.coordinator = coordinator_->save_state();
}

FOREWARN_INLINE FOREWARN_COLD void approver::save_readiness(poller_state& st) const {
    for (auto& s : st.events) s.ready = policy_.is_ready(s.id);
}

FOREWARN_INLINE FOREWARN_COLD void approver::restore(const poller_state& st, clock::time_point now) {
    restore_readiness(st, now);
    if (coordinator_ && !st.coordinator.empty()) coordinator_->load_state(st.coordinator);
}

FOREWARN_INLINE FOREWARN_COLD void approver::restore_readiness(const poller_state& st, clock::time_point now) {
    policy_.observe(st.delivered, now);
    std::vector<std::string> approved;
    for (const auto& s : st.events) {
        if (s.ready) policy_.mark_ready(s.id);
        if (s.approved) approved.push_back(s.id);
    }
    policy_.mark_approved(approved);
    // Handles asked for before the state was loaded (handle_for_known) learn what it says.
    for (const auto& id : approved) {
        bool waiting;
        {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            auto it = shared_->status.find(id);
            waiting = it != shared_->status.end() && !is_final(it->second.state);
        }
        if (waiting) settle(id, {approval_state::approved, "approved before this restart", {}});
    }
}

FOREWARN_INLINE FOREWARN_COLD void approver::status_not_due(const event& e, clock::time_point now,
                                              std::optional<std::chrono::system_clock::time_point> wall) {
    if (!can_approve_) return update(e.id, {approval_state::not_approved, "this source cannot approve", {}});
    if (!approvable(e)) return update(e.id, not_approvable());
    const auto& o = policy_.options();
    if (o.scope == approval_scope::never)
        return update(e.id, {approval_state::not_approved, "approval is off (scope never)", {}});
    if (!policy_.in_window(wall))
        return update(e.id, {approval_state::waiting, detail::cat({"outside the approval window ", o.window->to_string()}), {}});
    if (policy_.needs_identity()) return update(e.id, {approval_state::waiting, "this VM's name is not known yet", {}});
    if (o.scope != approval_scope::all && !e.affects(policy_.self()))
        return update(e.id, {approval_state::not_approved, "the event does not name this VM", {}});
    if (o.scope == approval_scope::leader && !policy_.election().is_leader(e, policy_.self())) {
        if (e.source != event_source::user)
            return update(e.id, {approval_state::not_approved, "a follower leaves a platform event to the leader", {}});
        return update(e.id, {approval_state::waiting, "a follower approves a user event after the grace", {}});
    }
    if (policy_.held(e, now)) {
        const auto since = policy_.unready_since(now);
        const auto held_for = since ? std::chrono::duration_cast<std::chrono::seconds>(now - *since).count() : 0;
        return update(e.id, {approval_state::waiting,
                             detail::cat({"the load balancer's hold: not ready for ", detail::num(held_for), " s of ",
                                          detail::num(o.unready_for.count()), " s"}),
                             {}});
    }
    update(e.id, {approval_state::waiting, "not allowed yet", {}});
}

FOREWARN_INLINE FOREWARN_COLD void approver::update(const std::string& id, approval_status st) {
    if (is_final(st.state)) return settle(id, std::move(st));
    std::lock_guard<std::mutex> lock(shared_->mutex);
    auto it = shared_->status.find(id);
    if (it != shared_->status.end() && !is_final(it->second.state)) it->second = std::move(st);
}

FOREWARN_INLINE FOREWARN_COLD void approver::settle(const std::string& id, approval_status st) {
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

FOREWARN_INLINE FOREWARN_COLD std::vector<local_event> approver::local_events(const document& d) const {
    std::vector<local_event> out;
    out.reserve(d.events.size());
    for (const auto& e : d.events)
        out.push_back(local_event{e, approvable(e) && policy_.wanted(e), policy_.was_approved(e.id)});
    return out;
}

FOREWARN_INLINE FOREWARN_COLD approver::approver(approval_options options, std::shared_ptr<approval_coordinator> coordinator)
    : policy_(std::move(options)), coordinator_(std::move(coordinator)),
      shared_(std::make_shared<detail::approval_shared>()) {}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
