// SPDX-License-Identifier: MIT
#pragma once

// Whether this VM should take traffic now, from what the poller knows: the readiness probe a load
// balancer asks before maintenance (forewarn-watch's /readyz answers with it). A service with its
// own HTTP server answers its own probe the same way, from poller::last_document() and self().

#include <forewarn/config.hpp>
#include <forewarn/event.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE

struct readiness_options {
    /// 0 (the default): not ready from the moment an event naming this VM is announced. N > 0:
    /// from N seconds before its NotBefore, when that comes later than the announcement.
    std::chrono::seconds unready_before{0};
};

/// The answer: ready or not, why, and when it may change by time alone.
struct readiness {
    bool ready = true;
    std::string why;       ///< in words, for a probe's body or a log
    std::string event_id;  ///< the event that makes this VM not ready, if any
    /// When the answer turns by the clock alone (an event's NotBefore less unready_before);
    /// otherwise only a new document changes it.
    std::optional<std::chrono::system_clock::time_point> changes_at;
};

/**
 * Whether this VM (`self`; an event without Resources, as some sources give every event, is
 * always this VM's) should take traffic at `now`, given the last document: not while an event
 * naming it is Started, nor while one is Scheduled (from its announcement, or from
 * `unready_before` ahead of its NotBefore), until the event is gone (its recover) or ends (a final
 * status: completed, cancelled).
 *
 * @code
 * auto r = forewarn::ready_for_traffic(p.last_document(), p.self(), std::chrono::system_clock::now());
 * respond(r.ready ? 200 : 503, r.why);
 * @endcode
 */
readiness ready_for_traffic(const document& d, std::string_view self, std::chrono::system_clock::time_point now,
                            const readiness_options& o = {});

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/readiness-inl.hpp>
#endif
