// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/aws/parse.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/aws/parse.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/json.hpp>  // RapidJSON: for the definitions only
#include <unordered_set>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE result<const rapidjson::Value*> aws_string_member(const rapidjson::Value& obj, std::string_view name,
                                                                  const std::string& where, bool required) {
    const auto* v = json_member(obj, name);
    if (!v || v->IsNull()) {
        if (required) return json_shape_error(where + "." + std::string(name), "required member missing");
        return static_cast<const rapidjson::Value*>(nullptr);
    }
    if (!v->IsString()) return json_type_error(where + "." + std::string(name), "string", *v);
    return v;
}

FOREWARN_INLINE result<rapidjson::Document> aws_parse_body(std::string_view body, std::string_view what) {
    if (trim(body).empty()) {
        error e(errc::empty_body, std::string(what) + ": empty answer");
        e.field = std::string(what);
        return e;
    }
    return parse_json(body);
}

// A time member in ISO-8601 (the Spot and rebalance notices) or AWS's "21 Jan 2019 09:00:43 GMT".
FOREWARN_INLINE result<std::optional<std::chrono::system_clock::time_point>> aws_time_member(const rapidjson::Value& obj,
                                                                                             std::string_view name,
                                                                                             const std::string& where,
                                                                                             bool required,
                                                                                             bool aws_form) {
    auto v = aws_string_member(obj, name, where, required);
    if (!v) return std::move(v).error();
    if (!*v) return std::optional<std::chrono::system_clock::time_point>();
    const auto text = json_string_view(**v);
    auto t = aws_form ? parse_aws_time(text) : parse_time(text);
    if (!t) {
        error e = std::move(t).error();
        e.field = where + "." + std::string(name);
        return e;
    }
    if (required && !*t) return json_shape_error(where + "." + std::string(name), "empty time");
    return t;
}

}  // namespace detail

namespace aws {

FOREWARN_INLINE result<std::optional<event>> parse_target_lifecycle_state(std::string_view body) {
    const auto state = detail::trim(body);
    bool word = !state.empty() && state.size() <= 64;
    for (const char c : state) word = word && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == ':');
    if (!word) {
        error e(errc::invalid_document, "autoscaling/target-lifecycle-state: not a lifecycle state");
        e.field = "target-lifecycle-state";
        return e;
    }
    if (state != "Terminated" && state != "Warmed:Terminated") return std::optional<event>();
    event e;
    e.id = std::string(autoscaling_event_id);
    e.type = event_type::terminate;
    e.raw_type = std::string(state);
    e.status = event_status::scheduled;
    e.description = "Auto Scaling is terminating this instance (target lifecycle state " + e.raw_type + ")";
    return std::optional<event>(std::move(e));
}

FOREWARN_INLINE result<event> parse_spot_instance_action(std::string_view body) {
    auto doc = detail::aws_parse_body(body, "spot/instance-action");
    if (!doc) return std::move(doc).error();
    const rapidjson::Value& root = *doc;
    if (!root.IsObject()) return detail::json_type_error("instance-action", "object", root);
    auto action = detail::aws_string_member(root, "action", "instance-action", true);
    if (!action) return std::move(action).error();
    auto when = detail::aws_time_member(root, "time", "instance-action", true, false);
    if (!when) return std::move(when).error();
    event e;
    e.id = std::string(spot_event_id);
    e.raw_type = std::string(detail::json_string_view(**action));
    if (e.raw_type.empty()) return detail::json_shape_error("instance-action.action", "empty action");
    e.type = event_type_of_spot_action(e.raw_type);
    e.status = event_status::scheduled;
    e.not_before = *when;
    e.description = "Spot instance interruption: " + e.raw_type;
    return e;
}

FOREWARN_INLINE result<credentials> parse_security_credentials(std::string_view body) {
    auto doc = detail::aws_parse_body(body, "iam/security-credentials");
    if (!doc) return std::move(doc).error();
    const rapidjson::Value& root = *doc;
    if (!root.IsObject()) return detail::json_type_error("security-credentials", "object", root);
    auto code = detail::aws_string_member(root, "Code", "security-credentials", true);
    if (!code) return std::move(code).error();
    if (detail::json_string_view(**code) != "Success")  // AWS's word; a failure says why in Message
        return detail::json_shape_error("security-credentials.Code",
                                        "not Success: " + std::string(detail::json_string_view(**code)).substr(0, 64));
    credentials c;
    for (const auto& [name, target] : {std::pair<const char*, std::string credentials::*>{"AccessKeyId", &credentials::access_key_id},
                                       {"SecretAccessKey", &credentials::secret_access_key},
                                       {"Token", &credentials::session_token}}) {
        auto v = detail::aws_string_member(root, name, "security-credentials", true);
        if (!v) return std::move(v).error();
        c.*target = std::string(detail::json_string_view(**v));
        if ((c.*target).empty()) return detail::json_shape_error("security-credentials." + std::string(name), "empty");
    }
    auto expires = detail::aws_time_member(root, "Expiration", "security-credentials", true, false);
    if (!expires) return std::move(expires).error();
    c.expiration = *expires;
    return c;
}

FOREWARN_INLINE result<event> parse_rebalance_recommendation(std::string_view body) {
    auto doc = detail::aws_parse_body(body, "rebalance");
    if (!doc) return std::move(doc).error();
    const rapidjson::Value& root = *doc;
    if (!root.IsObject()) return detail::json_type_error("rebalance", "object", root);
    auto when = detail::aws_time_member(root, "noticeTime", "rebalance", true, false);
    if (!when) return std::move(when).error();
    event e;
    e.id = std::string(rebalance_event_id);
    e.type = event_type::rebalance;
    e.raw_type = "rebalance";
    e.status = event_status::scheduled;
    e.not_before = *when;
    e.description = "Spot instance rebalance recommendation";
    return e;
}

FOREWARN_INLINE result<std::vector<event>> parse_scheduled_events(std::string_view body) {
    auto doc = detail::aws_parse_body(body, "events/maintenance/scheduled");
    if (!doc) return std::move(doc).error();
    const rapidjson::Value& root = *doc;
    if (!root.IsArray()) return detail::json_type_error("scheduled", "array", root);
    std::vector<event> out;
    out.reserve(root.Size());
    std::unordered_set<std::string> ids;
    for (rapidjson::SizeType i = 0; i < root.Size(); ++i) {
        const std::string where = "scheduled[" + std::to_string(i) + "]";
        const rapidjson::Value& item = root[i];
        if (!item.IsObject()) return detail::json_type_error(where, "object", item);
        auto id = detail::aws_string_member(item, "EventId", where, true);
        if (!id) return std::move(id).error();
        auto code = detail::aws_string_member(item, "Code", where, true);
        if (!code) return std::move(code).error();
        auto state = detail::aws_string_member(item, "State", where, false);
        if (!state) return std::move(state).error();
        auto description = detail::aws_string_member(item, "Description", where, false);
        if (!description) return std::move(description).error();
        auto not_before = detail::aws_time_member(item, "NotBefore", where, false, true);
        if (!not_before) return std::move(not_before).error();
        auto not_after = detail::aws_time_member(item, "NotAfter", where, false, true);
        if (!not_after) return std::move(not_after).error();
        event e;
        e.id = std::string(detail::json_string_view(**id));
        if (e.id.empty()) return detail::json_shape_error(where + ".EventId", "empty EventId");
        if (!ids.insert(e.id).second) return detail::json_shape_error(where + ".EventId", "EventId listed twice: " + e.id);
        e.raw_type = std::string(detail::json_string_view(**code));
        e.type = event_type_of_code(e.raw_type);
        // No State: AWS lists an event as active until it says otherwise.
        e.raw_status = *state ? std::string(detail::json_string_view(**state)) : std::string("active");
        e.status = event_status_of_state(e.raw_status);
        e.not_before = *not_before;
        if (*description) e.description = std::string(detail::json_string_view(**description));
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace aws

namespace detail {

FOREWARN_INLINE result<std::vector<event>> aws_parse_key(std::string_view path, std::string_view body) {
    if (path == aws::scheduled_events_path) return aws::parse_scheduled_events(body);
    std::vector<event> out;
    if (path == aws::target_lifecycle_state_path) {
        auto e = aws::parse_target_lifecycle_state(body);
        if (!e) return std::move(e).error();
        if (*e) out.push_back(std::move(**e));
        return out;
    }
    auto e = path == aws::spot_instance_action_path ? aws::parse_spot_instance_action(body) : aws::parse_rebalance_recommendation(body);
    if (!e) return std::move(e).error();
    out.push_back(std::move(*e));
    return out;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
