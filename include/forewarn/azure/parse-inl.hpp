// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/azure/parse.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/azure/parse.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/json.hpp>  // RapidJSON: for the definitions only
#include <unordered_set>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD std::string azure_event_field(std::size_t index, std::string_view member) {
    std::string f = cat({"Events[", num(index), "]"});
    if (!member.empty()) {
        f += '.';
        f += member;
    }
    return f;
}

/// An optional member: absent and null both mean "not sent" (serialisers write null for unset).
FOREWARN_INLINE const rapidjson::Value* azure_optional_member(const rapidjson::Value& obj,
                                                              std::string_view name) noexcept {
    const auto* v = json_member(obj, name);
    return v && !v->IsNull() ? v : nullptr;
}

FOREWARN_INLINE result<std::string> azure_required_string(const rapidjson::Value& obj, std::size_t index,
                                                          std::string_view name) {
    const auto* v = json_member(obj, name);
    if (!v) return json_shape_error(azure_event_field(index, name), "required member missing");
    if (!v->IsString()) return json_type_error(azure_event_field(index, name), "string", *v);
    return std::string(json_string_view(*v));
}

FOREWARN_INLINE result<event> azure_parse_event(const rapidjson::Value& v, std::size_t i, bool preview) {
    if (!v.IsObject()) return json_type_error(azure_event_field(i, ""), "object", v);
    event e;
    auto id = azure_required_string(v, i, "EventId");
    if (!id) return std::move(id).error();
    if (id->empty()) return json_shape_error(azure_event_field(i, "EventId"), "empty EventId");
    e.id = std::move(*id);

    auto type = azure_required_string(v, i, "EventType");
    if (!type) return std::move(type).error();
    e.raw_type = std::move(*type);
    e.type = azure::event_type_of(e.raw_type);

    auto status = azure_required_string(v, i, "EventStatus");
    if (!status) return std::move(status).error();
    e.raw_status = std::move(*status);
    e.status = azure::event_status_of(e.raw_status);
    e.approvable = e.status == event_status::scheduled;  // StartRequests starts any Scheduled event

    if (const auto* m = azure_optional_member(v, "ResourceType")) {
        if (!m->IsString()) return json_type_error(azure_event_field(i, "ResourceType"), "string", *m);
        e.resource_type = std::string(json_string_view(*m));
    }
    if (const auto* m = azure_optional_member(v, "Resources")) {
        if (!m->IsArray()) return json_type_error(azure_event_field(i, "Resources"), "array of strings", *m);
        e.resources.reserve(m->Size());
        for (rapidjson::SizeType k = 0; k < m->Size(); ++k) {
            const auto& r = (*m)[k];
            if (!r.IsString())
                return json_type_error(azure_event_field(i, cat({"Resources[", num(k), "]"})), "string", r);
            std::string_view name = json_string_view(r);
            // 2017-03-01 prefixed IaaS VM names with '_' and 2017-08-01 removed it: strip it so
            // that event::affects(compute.name) means the same thing on every api-version.
            if (preview && name.size() > 1 && name.front() == '_') name.remove_prefix(1);
            e.resources.emplace_back(name);
        }
    }
    if (const auto* m = azure_optional_member(v, "NotBefore")) {
        if (!m->IsString()) return json_type_error(azure_event_field(i, "NotBefore"), "string", *m);
        auto t = parse_time(json_string_view(*m));
        if (!t) {
            error err = std::move(t).error();
            err.field = azure_event_field(i, "NotBefore");
            return err;
        }
        e.not_before = *t;
    }
    if (const auto* m = azure_optional_member(v, "Description")) {
        if (!m->IsString()) return json_type_error(azure_event_field(i, "Description"), "string", *m);
        e.description = std::string(json_string_view(*m));
    }
    if (const auto* m = azure_optional_member(v, "EventSource")) {
        if (!m->IsString()) return json_type_error(azure_event_field(i, "EventSource"), "string", *m);
        e.raw_source = std::string(json_string_view(*m));
        e.source = azure::event_source_of(e.raw_source);
    }
    if (const auto* m = azure_optional_member(v, "DurationInSeconds")) {
        if (!m->IsInt64()) return json_type_error(azure_event_field(i, "DurationInSeconds"), "integer", *m);
        e.duration_in_seconds = m->GetInt64();
    }
    return e;
}

}  // namespace detail

namespace azure {

FOREWARN_INLINE FOREWARN_COLD result<void> validate_api_version(std::string_view v) {
    if (is_known_api_version(v)) return {};
    bool shape = v.size() == 10 && v[4] == '-' && v[7] == '-';
    for (std::size_t i = 0; shape && i < v.size(); ++i)
        if (i != 4 && i != 7 && (v[i] < '0' || v[i] > '9')) shape = false;
    if (!shape)
        return error(errc::invalid_argument, detail::cat({"api-version \"", v,
                                                 "\" is not a date like 2020-07-01 ({latest} is not supported)"}));
    if (v < known_api_versions[0])
        return error(errc::invalid_argument,
                     detail::cat({"api-version ", v, " predates Scheduled Events (first: 2017-03-01)"}));
    return {};
}

FOREWARN_INLINE result<document> parse_document(std::string_view body, std::string_view api_version) {
    if (forewarn::detail::trim(body).empty()) return error(errc::empty_body, "empty Scheduled Events document");
    forewarn::detail::local_json parsed;  // every poll's parse: no pool on the heap
    if (auto r = parsed.parse(body); !r) return std::move(r).error();
    const rapidjson::Document& root = parsed.document();
    if (!root.IsObject()) return forewarn::detail::json_type_error("$", "object", root);

    document doc;
    doc.origin = cloud::azure;

    const auto* inc = forewarn::detail::json_member(root, "DocumentIncarnation");
    if (!inc) return forewarn::detail::json_shape_error("DocumentIncarnation", "required member missing");
    if (inc->IsUint64())
        doc.incarnation = std::string(detail::num(inc->GetUint64()));
    else if (inc->IsInt64())
        doc.incarnation = std::string(detail::num(inc->GetInt64()));
    else
        return forewarn::detail::json_type_error("DocumentIncarnation", "integer", *inc);

    const auto* events = forewarn::detail::json_member(root, "Events");
    if (!events) return forewarn::detail::json_shape_error("Events", "required member missing");
    if (!events->IsArray()) return forewarn::detail::json_type_error("Events", "array", *events);

    const bool preview = is_preview_api_version(api_version);
    doc.events.reserve(events->Size());
    std::unordered_set<std::string_view> ids;
    ids.reserve(events->Size());
    for (rapidjson::SizeType i = 0; i < events->Size(); ++i) {
        auto e = detail::azure_parse_event((*events)[i], i, preview);
        if (!e) return std::move(e).error();
        doc.events.push_back(std::move(*e));
    }
    for (std::size_t i = 0; i < doc.events.size(); ++i)
        if (!ids.insert(doc.events[i].id).second)
            return forewarn::detail::json_shape_error(detail::azure_event_field(i, "EventId"),
                                                      forewarn::detail::cat({"duplicate EventId \"", doc.events[i].id, "\""}));
    return doc;
}

FOREWARN_INLINE FOREWARN_COLD result<std::string> write_start_requests(const std::vector<std::string>& ids,
                                                         const std::optional<std::string>& incarnation) {
    if (ids.empty()) return error(errc::invalid_argument, "no EventId to approve");
    forewarn::detail::json_writer w;
    w.begin_object();
    if (incarnation) {
        w.key("DocumentIncarnation");
        if (!w.string(*incarnation)) return error(errc::invalid_argument, "DocumentIncarnation is not valid UTF-8");
    }
    w.key("StartRequests");
    w.begin_array();
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i].empty()) return error(errc::invalid_argument, detail::cat({"EventId #", detail::num(i), " is empty"}));
        w.begin_object();
        w.key("EventId");
        if (!w.string(ids[i]))
            return error(errc::invalid_argument, detail::cat({"EventId #", detail::num(i), " is not valid UTF-8"}));
        w.end_object();
    }
    w.end_array();
    w.end_object();
    if (!w.complete()) return error(errc::invalid_argument, "could not write the StartRequests body");
    return w.str();
}

}  // namespace azure

namespace detail {

FOREWARN_INLINE FOREWARN_COLD result<azure::instance_identity> azure_parse_instance_identity(std::string_view body) {
    if (trim(body).empty()) return error(errc::empty_body, "empty instance metadata answer");
    auto parsed = parse_json(body);
    if (!parsed) return std::move(parsed).error();
    const rapidjson::Document& root = *parsed;
    if (!root.IsObject()) return json_type_error("compute", "object", root);
    azure::instance_identity id;
    const auto* name = json_member(root, "name");
    if (!name) return json_shape_error("compute.name", "required member missing");
    if (!name->IsString()) return json_type_error("compute.name", "string", *name);
    id.name = std::string(json_string_view(*name));
    if (id.name.empty()) return json_shape_error("compute.name", "empty VM name");
    struct optional_field {
        const char* member;
        std::string azure::instance_identity::*target;
    };
    for (const auto& f : {optional_field{"vmScaleSetName", &azure::instance_identity::vm_scale_set_name},
                          optional_field{"resourceId", &azure::instance_identity::resource_id},
                          optional_field{"vmId", &azure::instance_identity::vm_id}}) {
        const auto* v = json_member(root, f.member);
        if (!v || v->IsNull()) continue;
        if (!v->IsString()) return json_type_error(std::string("compute.") + f.member, "string", *v);
        id.*f.target = std::string(json_string_view(*v));
    }
    return id;
}

FOREWARN_INLINE FOREWARN_COLD error azure_status_error(int status, std::string_view what, std::string_view body, std::string_view api_version) {
    const std::string bad_request = cat({"IMDS refuses a request without the \"Metadata: true\" header, with an api-version it "
                                         "does not support, ",
                                         api_version, " here, or with an EventId it does not know"});
    const status_hint hints[] = {{400, bad_request}, {404, "no such metadata path here"}};
    return status_error(status, what, body, hints);
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
