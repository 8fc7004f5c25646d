// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/gce/upcoming_maintenance.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/gce/upcoming_maintenance.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/json.hpp>  // RapidJSON: for the definitions only

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE result<std::optional<std::chrono::system_clock::time_point>> gce_upcoming_time(const rapidjson::Value& root,
                                                                                               const char* name) {
    const auto* v = json_member(root, name);
    if (!v || v->IsNull()) return std::optional<std::chrono::system_clock::time_point>();
    if (!v->IsString()) return json_type_error(std::string("upcoming-maintenance.") + name, "string", *v);
    auto t = parse_time(json_string_view(*v));
    if (!t) {
        error e = std::move(t).error();
        e.field = std::string("upcoming-maintenance.") + name;
        return e;
    }
    return *t;
}

FOREWARN_INLINE result<std::string> gce_upcoming_string(const rapidjson::Value& root, const char* name) {
    const auto* v = json_member(root, name);
    if (!v || v->IsNull()) return std::string();
    if (!v->IsString()) return json_type_error(std::string("upcoming-maintenance.") + name, "string", *v);
    return std::string(json_string_view(*v));
}

}  // namespace detail

namespace gce {

FOREWARN_INLINE result<std::optional<upcoming_maintenance>> parse_upcoming_maintenance(int status,
                                                                                       std::string_view body) {
    using none = std::optional<upcoming_maintenance>;
    const auto text = detail::trim(body);
    if (status == 404) return none();
    if (status == 503 && text.find("no notifications") != std::string_view::npos) return none();
    if (status != 200)
        return error(errc::http_status, "instance/upcoming-maintenance: HTTP " + std::to_string(status), status);
    if (text.empty() || detail::iequals(text, "NONE")) return none();
    detail::local_json doc;  // every poll's parse: no pool on the heap
    if (auto r = doc.parse(text); !r) return std::move(r).error();
    const rapidjson::Value& root = doc.document();
    if (!root.IsObject()) return detail::json_type_error("upcoming-maintenance", "object", root);
    if (root.MemberCount() == 0) return none();

    upcoming_maintenance m;
    auto type = detail::gce_upcoming_string(root, "type");
    if (!type) return std::move(type).error();
    m.type = std::move(*type);
    auto st = detail::gce_upcoming_string(root, "maintenance_status");
    if (!st) return std::move(st).error();
    m.status = std::move(*st);
    if (const auto* v = detail::json_member(root, "can_reschedule"); v && !v->IsNull()) {
        if (v->IsBool())
            m.can_reschedule = v->GetBool();
        else if (v->IsString())
            m.can_reschedule = detail::iequals(detail::json_string_view(*v), "true");
        else
            return detail::json_type_error("upcoming-maintenance.can_reschedule", "string", *v);
    }
    for (auto [name, target] : {std::pair{"window_start_time", &m.window_start}, std::pair{"window_end_time", &m.window_end},
                                std::pair{"latest_window_start_time", &m.latest_window_start}}) {
        auto t = detail::gce_upcoming_time(root, name);
        if (!t) return std::move(t).error();
        *target = *t;
    }
    if (const auto* v = detail::json_member(root, "maintenance_reasons"); v && !v->IsNull()) {
        if (!v->IsArray()) return detail::json_type_error("upcoming-maintenance.maintenance_reasons", "array", *v);
        for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
            const auto& r = (*v)[i];
            if (!r.IsString())
                return detail::json_type_error("upcoming-maintenance.maintenance_reasons[" + std::to_string(i) + "]",
                                               "string", r);
            m.reasons.emplace_back(detail::json_string_view(r));
        }
    }
    if (m.type.empty() && m.status.empty() && !m.window_start)
        return detail::json_shape_error("upcoming-maintenance", "none of type, maintenance_status or window_start_time");
    return std::optional<upcoming_maintenance>(std::move(m));
}

FOREWARN_INLINE event to_event(const upcoming_maintenance& m) {
    event e;
    e.id = std::string(upcoming_maintenance_event_id);
    e.type = event_type::maintenance;
    e.raw_type = m.type;
    e.raw_status = m.status;
    if (detail::iequals(m.status, "PENDING"))
        e.status = event_status::scheduled;
    else if (detail::iequals(m.status, "ONGOING"))
        e.status = event_status::started;
    else
        e.status = event_status::unknown;
    e.not_before = m.window_start;
    e.description = "GCE upcoming maintenance";
    if (m.window_end) e.description += " until " + format_iso8601(*m.window_end);
    if (!m.reasons.empty()) {
        e.description += ":";
        for (const auto& r : m.reasons) e.description += " " + r;
    }
    if (m.can_reschedule) e.description += " (can be rescheduled)";
    // performMaintenance starts a window that can be rescheduled, while it is still ahead.
    e.approvable = m.can_reschedule && e.status == event_status::scheduled;
    return e;
}

}  // namespace gce
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
