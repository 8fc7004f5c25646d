// SPDX-License-Identifier: MIT
#pragma once

/**
 * forewarn's one JSON form of an `event` and a `change`: what forewarn-watch prints, what the
 * state file keeps, and what a service can log or ship. Reading it back gives the same event.
 *
 * An event:
 * @code
 * {"id":"C7061BAC-...","type":"freeze","raw_type":"Freeze","status":"scheduled",
 *  "raw_status":"Scheduled","resource_type":"VirtualMachine","resources":["WestNO_0"],
 *  "not_before":"2022-04-11T22:26:58Z","description":"...","source":"platform",
 *  "raw_source":"Platform","duration_s":5}
 * @endcode
 * `type`, `status` and `source` are forewarn's cloud-neutral names (to_string()), the `raw_`
 * members the wire words. `not_before` is ISO-8601 UTC (with a fraction when it has one) or
 * null; `source` null (and no `raw_source`) when the service sent none; `duration_s` as sent
 * (-1: the service does not know) or null when not sent.
 *
 * A change is the event's members after `"change"` (prepare | started | recover | updated) and
 * `"cloud"`, then for a recover `"reason"` (completed | cancelled | unknown) and `"evidence"`
 * (what decided it, in words), then `"incarnation"`.
 */

#include <forewarn/config.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>
#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/event_json.hpp>  // RapidJSON: for the definitions only
#endif

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE

/// How to write text that is not valid UTF-8 (possible in a GCE value): JSON cannot hold it.
enum class invalid_utf8 {
    fail,     ///< an error (the state file: nothing is written that would not read back the same)
    replace,  ///< each bad byte as U+FFFD (log lines: one line per change, whatever it holds)
};

/// The event as one JSON object (see the top of json.hpp).
result<std::string> to_json(const event& e, invalid_utf8 bad = invalid_utf8::fail);

/// The change as one JSON object: what forewarn-watch --json prints per line.
result<std::string> to_json(const change& c, invalid_utf8 bad = invalid_utf8::fail);

/// An event back from its JSON object. Unknown members are ignored (a newer writer may add some).
result<event> event_from_json(std::string_view text);

/// A change back from its JSON object (`previous` is not part of the form).
result<change> change_from_json(std::string_view text);

#if FOREWARN_HEADER_DEFINITIONS
// Compiled into libforewarn in compiled mode (docs/building.md), inline in every user otherwise.

FOREWARN_INLINE result<std::string> to_json(const event& e, invalid_utf8 bad) {
    detail::json_writer w(bad == invalid_utf8::replace);
    w.begin_object();
    detail::write_event_members(w, e);
    w.end_object();
    return detail::json_text(w);
}

FOREWARN_INLINE result<std::string> to_json(const change& c, invalid_utf8 bad) {
    detail::json_writer w(bad == invalid_utf8::replace);
    w.begin_object();
    w.key("change");
    w.string(to_string(c.kind));
    w.key("cloud");
    w.string(to_string(c.origin));
    detail::write_event_members(w, c.event);
    if (c.kind == change_kind::recover) {
        w.key("reason");
        w.string(to_string(c.reason));
        w.key("evidence");
        w.string(c.evidence);
    }
    w.key("incarnation");
    w.string(c.incarnation);
    w.end_object();
    return detail::json_text(w);
}

FOREWARN_INLINE result<event> event_from_json(std::string_view text) {
    auto parsed = detail::parse_json(text);
    if (!parsed) return std::move(parsed).error();
    return detail::read_event(*parsed, "");
}

FOREWARN_INLINE result<change> change_from_json(std::string_view text) {
    auto parsed = detail::parse_json(text);
    if (!parsed) return std::move(parsed).error();
    const rapidjson::Document& root = *parsed;
    auto e = detail::read_event(root, "");
    if (!e) return std::move(e).error();
    change c;
    c.event = std::move(*e);
    std::string kind, origin, reason;
    for (auto [name, target] : {std::pair<const char*, std::string*>{"change", &kind}, {"cloud", &origin},
                                {"reason", &reason}, {"evidence", &c.evidence}, {"incarnation", &c.incarnation}}) {
        auto s = detail::json_optional_string(root, name, "");
        if (!s) return std::move(s).error();
        *target = std::move(*s);
    }
    bool known = false;
    for (auto k : {change_kind::prepare, change_kind::started, change_kind::recover, change_kind::updated})
        if (to_string(k) == kind) {
            c.kind = k;
            known = true;
        }
    if (!known) return detail::json_shape_error("change", "unknown change kind \"" + kind + "\"");
    c.origin = cloud_from_string(origin);
    c.reason = recover_reason_from_string(reason);
    return c;
}

#endif  // FOREWARN_HEADER_DEFINITIONS

FOREWARN_END_NAMESPACE
