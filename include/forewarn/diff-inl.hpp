// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/diff.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/diff.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE std::pair<recover_reason, std::string> vanished_reason(const event& last, const document& previous,
                                                                       const document& current) {
    if (last.status == event_status::started) return {recover_reason::completed, "seen Started"};
    if (previous.origin == cloud::gce || current.origin == cloud::gce)
        return {recover_reason::completed, "GCE ends every notice by clearing it"};
    if (last.not_before && current.service_time && *current.service_time >= *last.not_before)
        return {recover_reason::completed, "NotBefore had passed by the service's clock when it vanished"};
    return {recover_reason::unknown, "vanished without evidence of what happened"};
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
        auto [why, evidence] = detail::vanished_reason(e, previous, current);
        out.push_back(detail::make_change(current, change_kind::recover, e, why, std::move(evidence)));
    }
    return out;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
