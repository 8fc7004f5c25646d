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
#include <forewarn/detail/json.hpp>  // RapidJSON: for the definitions only
#endif

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE

/// How to write text that is not valid UTF-8 (possible in a GCE value): JSON cannot hold it.
enum class invalid_utf8 {
    fail,     ///< an error (the state file: nothing is written that would not read back the same)
    replace,  ///< each bad byte as U+FFFD (log lines: one line per change, whatever it holds)
};

namespace detail {
#if FOREWARN_HEADER_DEFINITIONS
// Compiled into libforewarn in compiled mode (docs/building.md), inline in every user otherwise.

/// The event's members into an object `w` has begun.
void write_event_members(json_writer& w, const event& e);

result<std::string> json_optional_string(const rapidjson::Value& obj, const char* name, const std::string& where);

/// An event from the members of a JSON object (as write_event_members writes them).
result<event> read_event(const rapidjson::Value& v, const std::string& where);

result<std::string> json_text(const json_writer& w);

FOREWARN_INLINE void write_event_members(json_writer& w, const event& e) {
    w.key("id");
    w.string(e.id);
    w.key("type");
    w.string(to_string(e.type));
    w.key("raw_type");
    w.string(e.raw_type);
    w.key("status");
    w.string(to_string(e.status));
    w.key("raw_status");
    w.string(e.raw_status);
    w.key("resource_type");
    w.string(e.resource_type);
    w.key("resources");
    w.begin_array();
    for (const auto& r : e.resources) w.string(r);
    w.end_array();
    w.key("not_before");
    if (e.not_before)
        w.string(format_iso8601(*e.not_before, true));
    else
        w.null();
    w.key("description");
    w.string(e.description);
    w.key("source");
    if (e.source) {
        w.string(to_string(*e.source));
        w.key("raw_source");
        w.string(e.raw_source);
    } else {
        w.null();
    }
    w.key("duration_s");
    if (e.duration_in_seconds)
        w.int64(*e.duration_in_seconds);
    else
        w.null();
}

FOREWARN_INLINE result<std::string> json_optional_string(const rapidjson::Value& obj, const char* name,
                                                         const std::string& where) {
    const auto* v = json_member(obj, name);
    if (!v || v->IsNull()) return std::string();
    if (!v->IsString()) return json_type_error(where + name, "string", *v);
    return std::string(json_string_view(*v));
}

FOREWARN_INLINE result<event> read_event(const rapidjson::Value& v, const std::string& where) {
    if (!v.IsObject()) return json_type_error(where, "object", v);
    const std::string at = where.empty() ? std::string() : where + ".";
    event e;
    const auto* id = json_member(v, "id");
    if (!id) return json_shape_error(at + "id", "required member missing");
    if (!id->IsString()) return json_type_error(at + "id", "string", *id);
    e.id = std::string(json_string_view(*id));
    struct text_field {
        const char* name;
        std::string* target;
    };
    std::string type, status, source;
    for (const auto& f : {text_field{"type", &type}, text_field{"raw_type", &e.raw_type}, text_field{"status", &status},
                          text_field{"raw_status", &e.raw_status}, text_field{"resource_type", &e.resource_type},
                          text_field{"description", &e.description}, text_field{"raw_source", &e.raw_source}}) {
        auto s = json_optional_string(v, f.name, at);
        if (!s) return std::move(s).error();
        *f.target = std::move(*s);
    }
    e.type = event_type_from_string(type);
    e.status = event_status_from_string(status);
    if (const auto* res = json_member(v, "resources"); res && !res->IsNull()) {
        if (!res->IsArray()) return json_type_error(at + "resources", "array", *res);
        for (rapidjson::SizeType j = 0; j < res->Size(); ++j) {
            if (!(*res)[j].IsString()) return json_type_error(at + "resources", "string", (*res)[j]);
            e.resources.emplace_back(json_string_view((*res)[j]));
        }
    }
    if (const auto* nb = json_member(v, "not_before"); nb && !nb->IsNull()) {
        if (!nb->IsString()) return json_type_error(at + "not_before", "string", *nb);
        auto t = parse_iso8601(json_string_view(*nb));
        if (!t) {
            error err = std::move(t).error();
            err.field = at + "not_before";
            return err;
        }
        e.not_before = *t;
    }
    if (const auto* src = json_member(v, "source"); src && !src->IsNull()) {
        if (!src->IsString()) return json_type_error(at + "source", "string", *src);
        e.source = event_source_from_string(json_string_view(*src));
    }
    if (const auto* d = json_member(v, "duration_s"); d && !d->IsNull()) {
        if (!d->IsInt64()) return json_type_error(at + "duration_s", "integer", *d);
        e.duration_in_seconds = d->GetInt64();
    }
    return e;
}

FOREWARN_INLINE result<std::string> json_text(const json_writer& w) {
    if (!w.complete()) return error(errc::invalid_argument, "the event holds text that is not valid UTF-8: JSON cannot carry it");
    return w.str();
}

#endif  // FOREWARN_HEADER_DEFINITIONS

}  // namespace detail

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
