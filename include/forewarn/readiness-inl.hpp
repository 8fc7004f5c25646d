// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/readiness.hpp> (spdlog's -inl files): included at the end of that
// header when FOREWARN_HEADER_DEFINITIONS is 1; compiled once into libforewarn in compiled mode.

#include <forewarn/readiness.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE

FOREWARN_INLINE readiness ready_for_traffic(const document& d, std::string_view self, std::chrono::system_clock::time_point now,
                                            const readiness_options& o) {
    readiness r;
    r.why = "no maintenance near";
    for (const auto& e : d.events) {
        if (!e.resources.empty() && !e.affects(self)) continue;
        if (e.status == event_status::started) {
            r.ready = false;
            r.event_id = e.id;
            r.why = "event " + e.id + " (" + std::string(to_string(e.type)) + ") is under way";
            r.changes_at.reset();
            return r;
        }
        if (e.status != event_status::scheduled) continue;  // completed, canceled, unknown
        const bool timed = o.unready_before.count() > 0 && e.not_before;
        const auto from = timed ? *e.not_before - o.unready_before : now;
        if (now >= from) {
            if (r.ready) {
                r.ready = false;
                r.event_id = e.id;
                r.why = "event " + e.id + " (" + std::string(to_string(e.type)) + ") is scheduled" +
                        (timed ? " to start within " + std::to_string(o.unready_before.count()) + " s" : std::string());
                r.changes_at.reset();
            }
        } else if (r.ready && (!r.changes_at || from < *r.changes_at)) {
            r.changes_at = from;
        }
    }
    return r;
}

FOREWARN_END_NAMESPACE

#endif
