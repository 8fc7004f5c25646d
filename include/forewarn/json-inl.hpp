// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/json.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/json.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/event_json.hpp>  // RapidJSON: for the definitions only

FOREWARN_BEGIN_NAMESPACE

FOREWARN_INLINE FOREWARN_COLD result<std::string> json_string(std::string_view text, invalid_utf8 bad) {
    detail::json_writer w(bad == invalid_utf8::replace);
    if (!w.string(text)) return error(errc::invalid_argument, "the text is not valid UTF-8: JSON cannot carry it");
    return w.str();
}

FOREWARN_INLINE FOREWARN_COLD result<std::string> to_json(const event& e, invalid_utf8 bad) {
    detail::json_writer w(bad == invalid_utf8::replace);
    w.begin_object();
    detail::write_event_members(w, e);
    w.end_object();
    return detail::json_text(w);
}

FOREWARN_INLINE FOREWARN_COLD result<std::string> to_json(const change& c, invalid_utf8 bad) {
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
        // What this process's clock saw while the event was Started (null: not watched Started).
        w.key("observed_pause_s");
        if (c.pause)
            w.number(static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(c.pause->longest).count()) / 1000.0);
        else
            w.null();
        w.key("observed_pause_seen_by");
        if (c.pause)
            w.string(c.pause->seen_by());
        else
            w.null();
    }
    w.key("incarnation");
    w.string(c.incarnation);
    w.end_object();
    return detail::json_text(w);
}

FOREWARN_INLINE FOREWARN_COLD result<std::string> to_json(const document& d, invalid_utf8 bad) {
    detail::json_writer w(bad == invalid_utf8::replace);
    w.begin_object();
    w.key("cloud");
    w.string(to_string(d.origin));
    w.key("incarnation");
    w.string(d.incarnation);
    w.key("service_time");
    if (d.service_time)
        w.string(format_iso8601(*d.service_time));
    else
        w.null();
    w.key("events");
    w.begin_array();
    for (const auto& e : d.events) {
        w.begin_object();
        detail::write_event_members(w, e);
        w.end_object();
    }
    w.end_array();
    w.end_object();
    return detail::json_text(w);
}

FOREWARN_INLINE FOREWARN_COLD result<event> event_from_json(std::string_view text) {
    auto parsed = detail::parse_json(text);
    if (!parsed) return std::move(parsed).error();
    return detail::read_event(*parsed, "");
}

FOREWARN_INLINE FOREWARN_COLD result<change> change_from_json(std::string_view text) {
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
    // A recover's observed pause: a number of seconds with the clock that saw it, or both null.
    const auto* pause = detail::json_member(root, "observed_pause_s");
    const auto* seen_by = detail::json_member(root, "observed_pause_seen_by");
    const bool has_pause = pause && !pause->IsNull();
    if (has_pause && !pause->IsNumber()) return detail::json_type_error("observed_pause_s", "number", *pause);
    if (seen_by && !seen_by->IsNull() && !seen_by->IsString()) return detail::json_type_error("observed_pause_seen_by", "string", *seen_by);
    const std::string by = seen_by && seen_by->IsString() ? std::string(detail::json_string_view(*seen_by)) : std::string();
    if (has_pause) {
        const double seconds = pause->GetDouble();
        if (!(seconds >= 0 && seconds < 1e9)) return detail::json_shape_error("observed_pause_s", "not a pause in seconds");
        if (by != "monotonic" && by != "wall")
            return detail::json_shape_error("observed_pause_seen_by", "\"monotonic\" or \"wall\" with observed_pause_s");
        observed_pause op;
        op.longest = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
        (by == "wall" ? op.wall_jump : op.monotonic_gap) = op.longest;
        if (c.kind == change_kind::recover) c.pause = op;
    } else if (seen_by && !seen_by->IsNull()) {
        return detail::json_shape_error("observed_pause_seen_by", "given without observed_pause_s");
    }
    return c;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
