// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/poller/change_tracker.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/poller/change_tracker.hpp>
#include <forewarn/detail/strings.hpp>

#include <algorithm>

#if FOREWARN_HEADER_DEFINITIONS

#include <forewarn/detail/hidden-inl.hpp>

#include <unordered_map>

FOREWARN_BEGIN_NAMESPACE

struct change_tracker::evidence_map : std::unordered_map<std::string, evidence> {};
namespace detail {

FOREWARN_INLINE FOREWARN_COLD std::string read_boot_id() {
#if defined(__linux__)
    std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return {};
    std::array<char, 64> buf{};
    const std::size_t n = std::fread(buf.data(), 1, buf.size() - 1, f);
    std::fclose(f);
    std::string id(buf.data(), n);
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    return id;
#else
    return {};
#endif
}

FOREWARN_INLINE FOREWARN_COLD std::string seconds_text(std::chrono::nanoseconds d) {
    const auto tenths = std::chrono::duration_cast<std::chrono::milliseconds>(d).count() / 100;
    return detail::cat({detail::num(tenths / 10), ".", detail::num(tenths % 10), " s"});
}

}  // namespace detail

FOREWARN_INLINE FOREWARN_COLD change_tracker::change_tracker(tracking_options options)
    : options_(std::move(options)) {
    if (options_.boot_id.empty()) options_.boot_id = detail::read_boot_id();
}

FOREWARN_INLINE std::vector<change> change_tracker::track(const document& d, observation when) {
    auto changes = diff(base_, d);
    for (auto& c : changes)
        if (c.kind == change_kind::recover && c.reason == recover_reason::unknown) decide(c, d, when);
    // Evidence from this document, after the reasons (which look at the evidence before it).
    for (const auto& e : d.events) {
        auto& ev = (*evidence_)[e.id];
        if (!ev.first_seen) ev.first_seen = when.wall;
        ev.last_seen = when.wall;
        ev.last_seen_steady = when.steady;
        ev.last_seen_service = d.service_time;
        ev.seen_started = ev.seen_started || e.status == event_status::started;
        ev.boot_id = options_.boot_id;
        ev.restored = false;
    }
    if (last_steady_) ours_.add(when.steady - *last_steady_);
    last_steady_ = when.steady;
    if (d.service_time && last_service_) services_.add(*d.service_time - *last_service_);
    last_service_ = d.service_time;
    latest_ = d;
    pending_ = changes;
    return changes;
}

FOREWARN_INLINE FOREWARN_COLD void change_tracker::delivered(std::size_t n) {
    n = (std::min)(n, pending_.size());
    if (n == pending_.size()) {
        base_ = latest_;
    } else {
        for (std::size_t i = 0; i < n; ++i) apply(pending_[i]);
        base_.incarnation.clear();  // the content matches no incarnation: diff by content next time
    }
    for (std::size_t i = 0; i < n; ++i)
        if (pending_[i].kind == change_kind::recover) forget_if_gone(pending_[i].event.id);
    pending_.clear();
}

FOREWARN_INLINE FOREWARN_COLD void change_tracker::mark_approved(const std::vector<std::string>& ids) {
    for (const auto& id : ids) (*evidence_)[id].approved = true;
}

FOREWARN_INLINE bool change_tracker::approved(std::string_view id) const {
    auto it = evidence_->find(std::string(id));
    return it != evidence_->end() && it->second.approved;
}

FOREWARN_INLINE FOREWARN_COLD poller_state change_tracker::save() const {
    poller_state st;
    st.delivered = base_;
    for (const auto& e : base_.events) {
        auto it = evidence_->find(e.id);
        if (it == evidence_->end()) continue;
        saved_event s;
        s.id = e.id;
        s.first_seen = it->second.first_seen;
        s.last_seen = it->second.last_seen;
        s.last_seen_service = it->second.last_seen_service;
        s.seen_started = it->second.seen_started;
        s.approved = it->second.approved;
        s.boot_id = it->second.boot_id;
        st.events.push_back(std::move(s));
    }
    return st;
}

FOREWARN_INLINE FOREWARN_COLD void change_tracker::restore(const poller_state& st) {
    base_ = st.delivered;
    base_.incarnation.clear();
    latest_ = base_;
    evidence_->clear();
    for (const auto& s : st.events) {
        auto& ev = (*evidence_)[s.id];
        ev.first_seen = s.first_seen;
        ev.last_seen = s.last_seen;
        ev.last_seen_service = s.last_seen_service;
        ev.seen_started = s.seen_started;
        ev.approved = s.approved;
        ev.boot_id = s.boot_id;
        ev.restored = true;
    }
    for (const auto& e : base_.events) (*evidence_)[e.id].restored = true;
    pending_.clear();
    last_steady_.reset();
    last_service_.reset();
}

FOREWARN_INLINE std::chrono::nanoseconds change_tracker::max_gap() const {
    if (options_.max_gap) return *options_.max_gap;
    return ours_.limit();
}

FOREWARN_INLINE FOREWARN_COLD void change_tracker::decide(change& c, const document& d, observation when) {
    const event& e = c.event;
    auto it = evidence_->find(e.id);
    if (it == evidence_->end()) return;
    const evidence& ev = it->second;
    detail::vanish_evidence v;
    v.seen_started = ev.seen_started;
    v.approved = ev.approved;
    v.rebooted = !ev.boot_id.empty() && !options_.boot_id.empty() && ev.boot_id != options_.boot_id;
    v.our_time = when.wall;
    // Was it watched without a gap until now?
    if (ev.restored) {
        v.gap = "last seen before this process started (a gap in watching)";
    } else {
        std::chrono::nanoseconds gap(0);
        if (ev.last_seen_steady) gap = (std::max)(gap, std::chrono::nanoseconds(when.steady - *ev.last_seen_steady));
        if (ev.last_seen) gap = (std::max)(gap, std::chrono::nanoseconds(when.wall - *ev.last_seen));
        std::chrono::nanoseconds served(0);
        if (ev.last_seen_service && d.service_time) served = *d.service_time - *ev.last_seen_service;
        if (gap > max_gap())
            v.gap = detail::cat({"a gap of ", detail::seconds_text(gap), " in watching"});
        else if (served > max_service_gap())
            v.gap = detail::cat({"a gap of ", detail::seconds_text(served), " in watching by the service's clock"});
        else
            v.gap = std::string();
    }
    auto decided = detail::vanished_reason(e, d, v);
    set(c, decided.first, std::move(decided.second));
}

FOREWARN_INLINE FOREWARN_COLD void change_tracker::set(change& c, recover_reason r, std::string why) {
    c.reason = r;
    c.evidence = std::move(why);
}

FOREWARN_INLINE FOREWARN_COLD void change_tracker::apply(const change& c) {
    auto it = std::find_if(base_.events.begin(), base_.events.end(), [&](const event& e) { return e.id == c.event.id; });
    if (c.kind == change_kind::recover && !is_final(c.event.status)) {
        if (it != base_.events.end()) base_.events.erase(it);
    } else if (it != base_.events.end()) {
        *it = c.event;
    } else {
        base_.events.push_back(c.event);
    }
}

FOREWARN_INLINE FOREWARN_COLD void change_tracker::forget_if_gone(const std::string& id) {
    if (!latest_.find(id)) evidence_->erase(id);
}

FOREWARN_INLINE void change_tracker::cadence::add(std::chrono::nanoseconds d) {
    last_[next_++ % last_.size()] = d;
    count_ = (std::min)(count_ + 1, last_.size());
}

FOREWARN_INLINE std::chrono::nanoseconds change_tracker::cadence::usual() const {
    if (count_ == 0) return std::chrono::nanoseconds(0);
    // Insertion sort of at most eight: std::sort here made g++ 12 -O2 warn, wrongly, of
    // an access past the array (-Warray-bounds), which -Werror builds turn into an error.
    const std::size_t n = (std::min)(count_, last_.size());
    auto sorted = last_;
    for (std::size_t i = 1; i < n; ++i)
        for (std::size_t j = i; j > 0 && sorted[j] < sorted[j - 1]; --j) std::swap(sorted[j], sorted[j - 1]);
    return sorted[n / 2];
}

FOREWARN_INLINE std::chrono::nanoseconds change_tracker::cadence::limit() const {
    return (std::max)(std::chrono::nanoseconds(std::chrono::seconds(2)), 2 * usual() + std::chrono::seconds(1));
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
