// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/diff.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/diff.hpp>

#if FOREWARN_HEADER_DEFINITIONS

#include <unordered_map>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD std::pair<recover_reason, std::string> vanished_reason(const event& last, const document& current,
                                                                       const vanish_evidence& ev) {
    if (ev.seen_started || last.status == event_status::started) return {recover_reason::completed, "seen Started"};
    if (ev.approved) return {recover_reason::completed, "approved by this VM"};
    if (ev.rebooted) return {recover_reason::completed, "this VM rebooted since it saw the event"};
    if (current.vanished_means_completed)
        return {recover_reason::completed, "the service ends every notice by clearing it"};
    const bool by_service = current.service_time.has_value();
    const auto judge = by_service ? current.service_time : ev.our_time;
    if (last.not_before && judge && *judge >= *last.not_before)
        return {recover_reason::completed, by_service ? "NotBefore had passed by the service's clock when it vanished"
                                                      : "NotBefore had passed by this VM's clock when it vanished"};
    // Before NotBefore: cancelled only when watched without a gap.
    if (!ev.gap) return {recover_reason::unknown, "vanished without evidence of what happened"};
    if (!ev.gap->empty()) return {recover_reason::unknown, *ev.gap};
    if (last.status != event_status::scheduled || !last.not_before)
        return {recover_reason::unknown, "vanished while not Scheduled, without evidence of what happened"};
    return {recover_reason::cancelled, "vanished before NotBefore while watched without a gap"};
}

}  // namespace detail

FOREWARN_INLINE std::vector<change> diff(const document& previous, const document& current) {
    std::vector<change> out;
    if (!previous.incarnation.empty() && previous.incarnation == current.incarnation &&
        previous.origin == current.origin)
        return out;

    // One index for both documents: per id, its first event in `previous` and whether `current`
    // has shown it yet (one hash map instead of two halves the hashing and the allocations).
    struct slot {
        const event* before = nullptr;
        bool seen = false;
    };
    std::unordered_map<std::string_view, slot> index;
    index.reserve(previous.events.size() + current.events.size());
    for (const auto& e : previous.events) index.emplace(e.id, slot{&e, false});

    for (const auto& e : current.events) {
        slot& s = index[e.id];
        if (s.seen) continue;  // duplicate id in one document: the first wins
        s.seen = true;
        const bool now_final = is_final(e.status);
        if (s.before == nullptr) {
            if (now_final) continue;  // over before this process saw it: nothing to prepare or recover
            out.push_back(detail::make_change(
                current, e.status == event_status::started ? change_kind::started : change_kind::prepare, e));
            continue;
        }
        const event& old = *s.before;
        if (old == e) continue;
        if (is_final(old.status)) continue;  // recovered already; what the service says after that is history
        if (now_final) {
            const bool done = e.status == event_status::completed;
            out.push_back(detail::make_change(current, change_kind::recover, e,
                                              done ? recover_reason::completed : recover_reason::cancelled,
                                              done ? "the service says it completed" : "the service says it was cancelled"));
            continue;
        }
        change c = detail::make_change(
            current, old.status != event_status::started && e.status == event_status::started ? change_kind::started
                                                                                             : change_kind::updated,
            e);
        c.previous = old;
        out.push_back(std::move(c));
    }

    // The same first-wins rule for `previous`, so a duplicated id disappears once.
    for (const auto& e : previous.events) {
        const slot& s = index.find(e.id)->second;
        if (s.before != &e || s.seen || is_final(e.status)) continue;
        auto [why, evidence] = detail::vanished_reason(e, current, {});
        out.push_back(detail::make_change(current, change_kind::recover, e, why, std::move(evidence)));
    }
    return out;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
