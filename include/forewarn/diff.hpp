// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/event.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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

/// Why an event disappeared (recover only).
enum class recover_reason {
    none,       ///< not a recover change
    completed,  ///< last seen Started (and every GCE event: the server cannot say "cancelled")
    cancelled,  ///< last seen Scheduled: Azure withdrew it before it started
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

/// "completed", "cancelled" or "none".
constexpr std::string_view to_string(recover_reason r) noexcept {
    switch (r) {
    case recover_reason::completed: return "completed";
    case recover_reason::cancelled: return "cancelled";
    case recover_reason::none: break;
    }
    return "none";
}

/// One change, carrying the event as it is now (for recover: as it was last seen).
struct change {
    change_kind kind = change_kind::prepare;
    forewarn::event event;
    recover_reason reason = recover_reason::none;
    /// For updated and for Scheduled -> Started: the event as it was before.
    std::optional<forewarn::event> previous;
    cloud origin = cloud::none;  ///< the service of the document that showed the change
    std::string incarnation;     ///< that document's incarnation (Azure DocumentIncarnation, GCE ETags)
};

namespace detail {

inline change make_change(const document& d, change_kind kind, const event& e,
                          recover_reason reason = recover_reason::none) {
    change c;
    c.kind = kind;
    c.event = e;
    c.reason = reason;
    c.origin = d.origin;
    c.incarnation = d.incarnation;
    return c;
}

/// Index of events by id; the first of several events with one id wins (a hostile or buggy
/// document must not produce two callbacks for one id).
inline std::unordered_map<std::string_view, const event*> index_events(const document& d) {
    std::unordered_map<std::string_view, const event*> index;
    index.reserve(d.events.size());
    for (const auto& e : d.events) index.emplace(e.id, &e);
    return index;
}

}  // namespace detail

/**
 * The changes that turn `previous` into `current`, in a stable order: first the events of
 * `current` in document order (prepare, started, updated), then the events that disappeared, in
 * the order of `previous` (recover).
 *
 * Only ever call it with documents that were fetched and parsed successfully: a failed poll is
 * not an empty document, so it must not reach diff() (the poller keeps the last good document).
 * Two documents with the same non-empty incarnation have the same content by the protocol's
 * rule, so no work is done. An incarnation that went down (the service was disabled and enabled
 * again) is diffed by content like any other: events already known are not reported again.
 * Expected O(n + m) with hashing.
 */
inline std::vector<change> diff(const document& previous, const document& current) {
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
        if (s.before == nullptr) {
            out.push_back(detail::make_change(
                current, e.status == event_status::started ? change_kind::started : change_kind::prepare, e));
            continue;
        }
        const event& old = *s.before;
        if (old == e) continue;
        if (old.status != event_status::started && e.status == event_status::started) {
            change c = detail::make_change(current, change_kind::started, e);
            c.previous = old;
            out.push_back(std::move(c));
        } else {
            change c = detail::make_change(current, change_kind::updated, e);
            c.previous = old;
            out.push_back(std::move(c));
        }
    }

    // The same first-wins rule for `previous`, so a duplicated id disappears once.
    const bool gce = previous.origin == cloud::gce || current.origin == cloud::gce;
    for (const auto& e : previous.events) {
        const slot& s = index.find(e.id)->second;
        if (s.before != &e || s.seen) continue;
        const recover_reason why = (!gce && e.status == event_status::scheduled) ? recover_reason::cancelled
                                                                                  : recover_reason::completed;
        out.push_back(detail::make_change(current, change_kind::recover, e, why));
    }
    return out;
}

FOREWARN_END_NAMESPACE
