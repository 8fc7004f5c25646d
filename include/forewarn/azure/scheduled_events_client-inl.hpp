// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/azure/scheduled_events_client.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/azure/scheduled_events_client.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/json.hpp>  // RapidJSON: for the definitions only

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE result<azure::instance_identity> azure_parse_instance_identity(std::string_view body) {
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

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
