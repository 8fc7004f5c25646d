// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/event_json.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/event_json.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

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

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
