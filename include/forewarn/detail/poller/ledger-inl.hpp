// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/poller/ledger.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/poller/ledger.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD poller_ledger::poller_ledger(tracking_options tracking, approval_options approval,
                                             std::shared_ptr<approval_coordinator> coordinator, bool can_approve,
                                             std::function<void()> wake)
    : tracker_(std::move(tracking)), approver_(std::move(approval), std::move(coordinator)) {
    approver_.set_wake(std::move(wake));
    approver_.set_can_approve(can_approve);
}

FOREWARN_INLINE std::vector<change> poller_ledger::track(const document& d, change_tracker::observation when) {
    std::vector<change> changes;
    std::optional<std::vector<local_event>> view;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        changes = tracker_.track(d, when);
        approver_.note(d, when.steady, when.wall);
        ++generation_;
        view = approver_.coordinator_view(d);
    }
    approver_.tell_coordinator(view);  // the user's code: no lock held
    return changes;
}

FOREWARN_INLINE FOREWARN_COLD bool poller_ledger::delivered(std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool moved = tracker_.delivered_document().incarnation != tracker_.latest().incarnation;
    tracker_.delivered(n);
    return moved;
}

FOREWARN_INLINE FOREWARN_COLD document poller_ledger::latest() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return tracker_.latest();
}

FOREWARN_INLINE FOREWARN_COLD document poller_ledger::delivered_document() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return tracker_.delivered_document();
}

FOREWARN_INLINE FOREWARN_COLD approval_handle poller_ledger::handle(const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    return approver_.handle(id, tracker_.latest().find(id));
}

FOREWARN_INLINE FOREWARN_COLD approval_handle poller_ledger::handle_for_known(const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    return approver_.handle_for_known(id, tracker_.latest().find(id));
}

FOREWARN_INLINE FOREWARN_COLD std::string poller_ledger::self() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return approver_.self();
}

FOREWARN_INLINE FOREWARN_COLD void poller_ledger::set_self(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    approver_.set_self(name);
}

FOREWARN_INLINE FOREWARN_COLD result<void> poller_ledger::start_coordinator(const clock& c, const logger& log) {
    if (!approver_.coordinator() || self().empty()) return {};
    return approver_.start_coordinator(c, log);
}

FOREWARN_INLINE FOREWARN_COLD std::optional<clock::time_point> poller_ledger::next_deadline(clock::time_point now,
                                                                             clock::wall_time_point wall) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return approver_.next_deadline(tracker_.latest(), now, wall);
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> poller_ledger::due(clock::time_point now, clock::wall_time_point wall,
                                                          std::vector<error>& problems) {
    // Decided under the lock, asked outside it (the coordinator is the user's code, and may read
    // the poller or block), applied under it again if the document asked about is still current.
    std::vector<event> asked;
    std::uint64_t generation;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        asked = approver_.candidates(tracker_.latest(), now, wall);
        generation = generation_;
    }
    if (asked.empty()) return {};
    const auto answers = approver_.ask_coordinator(asked);
    std::vector<std::string> out;
    std::optional<std::vector<local_event>> view;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (generation != generation_) return {};  // a newer document: its own turn asks again
        out = approver_.admitted(asked, answers, problems);
        view = approver_.coordinator_view(tracker_.latest());
    }
    approver_.tell_coordinator(view);
    return out;
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> poller_ledger::awaiting() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return approver_.awaiting(tracker_.latest());
}

FOREWARN_INLINE FOREWARN_COLD void poller_ledger::approved(const std::vector<std::string>& ids) {
    std::optional<std::vector<local_event>> view;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        approver_.mark_approved(ids);
        tracker_.mark_approved(ids);
        view = approver_.coordinator_view(tracker_.latest());
    }
    approver_.tell_coordinator(view);
}

FOREWARN_INLINE FOREWARN_COLD void poller_ledger::failed(const std::vector<std::string>& ids, const error& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    approver_.failed(ids, e);
}

FOREWARN_INLINE FOREWARN_COLD void poller_ledger::withheld(const std::vector<std::string>& ids) {
    std::lock_guard<std::mutex> lock(mutex_);
    approver_.withheld(ids);
}

FOREWARN_INLINE FOREWARN_COLD std::vector<approver::completion> poller_ledger::take_completions() {
    std::lock_guard<std::mutex> lock(mutex_);
    return approver_.take_completions();
}

FOREWARN_INLINE FOREWARN_COLD std::vector<std::string> poller_ledger::take_declined() {
    std::lock_guard<std::mutex> lock(mutex_);
    return approver_.take_declined();
}

FOREWARN_INLINE FOREWARN_COLD poller_state poller_ledger::save() const {
    poller_state st;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        st = tracker_.save();
        approver_.save_readiness(st);
    }
    if (const auto& c = approver_.coordinator()) st.coordinator = c->save_state();  // no lock held
    return st;
}

FOREWARN_INLINE FOREWARN_COLD void poller_ledger::restore(const poller_state& st, clock::time_point now) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        tracker_.restore(st);
        approver_.restore_readiness(st, now);
        ++generation_;
    }
    if (const auto& c = approver_.coordinator(); c && !st.coordinator.empty()) c->load_state(st.coordinator);
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif
