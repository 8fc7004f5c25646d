// SPDX-License-Identifier: MIT
#pragma once

// The scenario-file reader (format: docs/emulator.md). The control API reads its bodies with the
// same functions, so a step or a fault is spelled the same in a file and in a request. Unknown
// members are errors that name the member: a typo never silently becomes a default.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/result.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/time.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/// An error in a scenario file or a control request, with the member at fault.
inline error scenario_error(std::string field, std::string what) {
    return forewarn::detail::json_shape_error(std::move(field), std::move(what));
}

}  // namespace testing

namespace detail {

inline result<testing::scenario_duration> emulator_json_duration(const rapidjson::Value& v, const std::string& field) {
    if (v.IsNumber()) {
        const double s = v.GetDouble();
        if (!(s >= 0) || s > 1e12) return testing::scenario_error(field, "a duration must be a non-negative number of seconds");
        return testing::scenario_duration(static_cast<std::int64_t>(s * 1000 + 0.5));
    }
    if (v.IsString()) {
        if (auto d = emulator_parse_duration(json_string_view(v))) return *d;
        return testing::scenario_error(field, "not a duration (\"15m\", \"30s\", \"500ms\", \"1h30m\", or seconds)");
    }
    return json_type_error(field, "duration", v);
}

inline result<std::string> emulator_json_string(const rapidjson::Value& v, const std::string& field) {
    if (!v.IsString()) return json_type_error(field, "string", v);
    return std::string(json_string_view(v));
}

inline result<std::int64_t> emulator_json_int(const rapidjson::Value& v, const std::string& field) {
    if (!v.IsInt64()) return json_type_error(field, "integer", v);
    return v.GetInt64();
}

// Rejects members the format does not know, so that a typo ("notcie") is an error, not a default.
inline result<void> emulator_known_members(const rapidjson::Value& obj, const std::string& field,
                                           std::initializer_list<std::string_view> known) {
    for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
        const std::string_view name = json_string_view(it->name);
        if (std::find(known.begin(), known.end(), name) == known.end())
            return testing::scenario_error(field.empty() ? std::string(name) : field + "." + std::string(name), "unknown member");
    }
    return {};
}

// Calls `f(name, field, value)` for each member of `obj` (`field` names the member for errors),
// stopping at the first error.
template <class F>
result<void> emulator_each_member(const rapidjson::Value& obj, const std::string& field, F&& f) {
    for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
        const std::string_view name = json_string_view(it->name);
        if (auto r = f(name, field + "." + std::string(name), it->value); !r) return r;
    }
    return {};
}

/// An Azure event as a scenario step (or POST /emulator/v1/azure/events) writes it.
inline result<testing::azure_event_spec> emulator_parse_event_spec(const rapidjson::Value& v, const std::string& field) {
    if (!v.IsObject()) return json_type_error(field, "object", v);
    if (auto k = emulator_known_members(v, field, {"EventId", "id", "EventType", "type", "Resources", "resources",
                                                   "ResourceType", "notice", "Description", "description",
                                                   "EventSource", "source", "DurationInSeconds", "duration_in_seconds",
                                                   "impact", "started", "at"});
        !k)
        return k.error();
    testing::azure_event_spec e;
    auto read = emulator_each_member(v, field, [&](std::string_view name, const std::string& f,
                                                   const rapidjson::Value& m) -> result<void> {
        // Each text member goes to one place; the others are read below.
        std::string* text = name == "EventId" || name == "id"                ? &e.id
                            : name == "EventType" || name == "type"          ? &e.type
                            : name == "ResourceType"                         ? &e.resource_type
                            : name == "EventSource" || name == "source"      ? &e.source
                                                                             : nullptr;
        if (text) {
            auto s = emulator_json_string(m, f);
            if (!s) return s.error();
            *text = std::move(*s);
        } else if (name == "Description" || name == "description") {
            auto s = emulator_json_string(m, f);
            if (!s) return s.error();
            e.description = std::move(*s);
        } else if (name == "Resources" || name == "resources") {
            if (!m.IsArray()) return json_type_error(f, "array", m);
            for (rapidjson::SizeType i = 0; i < m.Size(); ++i) {
                auto s = emulator_json_string(m[i], f + "[" + std::to_string(i) + "]");
                if (!s) return s.error();
                e.resources.push_back(std::move(*s));
            }
        } else if (name == "notice" || name == "impact") {
            auto d = emulator_json_duration(m, f);
            if (!d) return d.error();
            (name == "notice" ? e.notice : e.impact) = *d;
        } else if (name == "DurationInSeconds" || name == "duration_in_seconds") {
            auto n = emulator_json_int(m, f);
            if (!n) return n.error();
            e.duration_in_seconds = *n;
        } else if (name == "started") {
            if (!m.IsBool()) return json_type_error(f, "boolean", m);
            e.started = m.GetBool();
        }
        return {};
    });
    if (!read) return read.error();
    return e;
}

/// A fault as a `fault` step (or POST /emulator/v1/faults) writes it.
inline result<testing::fault_spec> emulator_parse_fault(const rapidjson::Value& v, const std::string& field) {
    using testing::fault_spec;
    if (!v.IsObject()) return json_type_error(field, "object", v);
    if (auto k = emulator_known_members(v, field, {"kind", "service", "path", "method", "status", "count", "fraction",
                                                   "duration", "bytes", "body", "at"});
        !k)
        return k.error();
    fault_spec f;
    bool count_given = false;
    auto read = emulator_each_member(v, field, [&](std::string_view name, const std::string& mf,
                                                   const rapidjson::Value& m) -> result<void> {
        if (name == "kind") {
            auto s = emulator_json_string(m, mf);
            if (!s) return s.error();
            bool found = false;
            for (auto k : {fault_spec::kind::status, fault_spec::kind::delay, fault_spec::kind::stall,
                           fault_spec::kind::empty_body, fault_spec::kind::truncated_json,
                           fault_spec::kind::malformed_json, fault_spec::kind::close_mid_body, fault_spec::kind::body})
                if (*s == to_string(k)) {
                    f.what = k;
                    found = true;
                }
            if (!found) return testing::scenario_error(mf, "unknown fault kind \"" + *s + "\"");
        } else if (name == "service" || name == "path" || name == "method" || name == "body") {
            auto s = emulator_json_string(m, mf);
            if (!s) return s.error();
            // The names of the services the emulator runs (a new service adds its own here).
            if (name == "service" && *s != "azure" && *s != "gce" && *s != "aws" && *s != "alibaba" && *s != "tencent" &&
                *s != "any")
                return testing::scenario_error(mf, "expected \"azure\", \"gce\", \"aws\", \"alibaba\", \"tencent\" or \"any\"");
            (name == "service" ? f.service : name == "path" ? f.path : name == "method" ? f.method : f.body) = std::move(*s);
        } else if (name == "status") {
            auto n = emulator_json_int(m, mf);
            if (!n) return n.error();
            if (*n < 100 || *n > 599) return testing::scenario_error(mf, "an HTTP status is 100 to 599");
            f.status = static_cast<int>(*n);
        } else if (name == "count") {
            auto n = emulator_json_int(m, mf);
            if (!n) return n.error();
            if (*n < -1 || *n == 0) return testing::scenario_error(mf, "a positive count, or -1 for every request");
            f.count = *n;
            count_given = true;
        } else if (name == "fraction") {
            if (!m.IsNumber()) return json_type_error(mf, "number", m);
            f.fraction = m.GetDouble();
            if (!(f.fraction > 0 && f.fraction <= 1)) return testing::scenario_error(mf, "a fraction is in (0, 1]");
        } else if (name == "duration") {
            auto d = emulator_json_duration(m, mf);
            if (!d) return d.error();
            f.duration = *d;
        } else if (name == "bytes") {
            auto n = emulator_json_int(m, mf);
            if (!n) return n.error();
            if (*n < 0) return testing::scenario_error(mf, "bytes is not negative");
            f.bytes = static_cast<std::size_t>(*n);
        }
        return {};
    });
    if (!read) return read.error();
    if (!count_given && f.fraction < 1) f.count = -1;
    if (f.what == fault_spec::kind::body && !v.HasMember("status")) f.status = 200;
    return f;
}

/// GCE keys to set, `{"instance/maintenance-event": "MIGRATE_ON_HOST_MAINTENANCE", "x": null}`
/// (null deletes): a gce_set step, or POST /emulator/v1/gce.
inline result<std::vector<std::pair<std::string, std::optional<std::string>>>>
emulator_parse_gce_values(const rapidjson::Value& v, const std::string& field) {
    if (!v.IsObject()) return json_type_error(field, "object", v);
    std::vector<std::pair<std::string, std::optional<std::string>>> out;
    for (auto g = v.MemberBegin(); g != v.MemberEnd(); ++g) {
        std::string key(json_string_view(g->name));
        if (g->value.IsNull()) {
            out.emplace_back(std::move(key), std::nullopt);
            continue;
        }
        auto val = emulator_json_string(g->value, field + "." + key);
        if (!val) return val.error();
        out.emplace_back(std::move(key), std::move(*val));
    }
    return out;
}

/// instance/upcoming-maintenance: the emulator serves its value as the JSON it is, whatever alt.
inline constexpr std::string_view emulator_gce_upcoming_key = "instance/upcoming-maintenance";
/// Set as upcoming-maintenance's value, this body is answered with a 503 and no ETag, as the real
/// server answers before its first notification.
inline constexpr std::string_view emulator_gce_no_notifications_body =
    R"({"error": "no notifications have been received yet, try again later"})";

inline bool emulator_copy_json(const rapidjson::Value& v, json_writer& w);

/**
 * A gce_upcoming step's value as upcoming-maintenance's value (nothing: the key is deleted, so
 * the server answers 404). An object is the window as GCE sends it; the words are its odd
 * answers: "empty" ({}), "none" (the text NONE), "no_notifications" (the 503), "absent" (404).
 */
inline result<std::optional<std::string>> emulator_gce_upcoming_value(const rapidjson::Value& v, const std::string& field) {
    if (v.IsObject()) {
        json_writer w;
        if (!emulator_copy_json(v, w)) return testing::scenario_error(field, "cannot be written back as JSON");
        return std::optional<std::string>(w.str());
    }
    const std::string_view word = v.IsString() ? json_string_view(v) : std::string_view();
    if (word == "empty") return std::optional<std::string>("{}");
    if (word == "none") return std::optional<std::string>("NONE");
    if (word == "no_notifications") return std::optional<std::string>(std::string(emulator_gce_no_notifications_body));
    if (word == "absent") return std::optional<std::string>();
    return testing::scenario_error(field, "a maintenance window (object), \"empty\", \"none\", \"no_notifications\" or \"absent\"");
}

// Writes a parsed JSON value back (a scenario step's body, replayed through a control route).
inline bool emulator_copy_json(const rapidjson::Value& v, json_writer& w) {
    switch (v.GetType()) {
    case rapidjson::kNullType: return w.null();
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return w.boolean(v.GetBool());
    case rapidjson::kStringType: return w.string(json_string_view(v));
    case rapidjson::kNumberType:
        if (v.IsInt64()) return w.int64(v.GetInt64());
        if (v.IsUint64()) return w.uint64(v.GetUint64());
        return w.number(v.GetDouble());
    case rapidjson::kArrayType:
        if (!w.begin_array()) return false;
        for (const auto& item : v.GetArray())
            if (!emulator_copy_json(item, w)) return false;
        return w.end_array();
    case rapidjson::kObjectType:
        if (!w.begin_object()) return false;
        for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it)
            if (!w.key(json_string_view(it->name)) || !emulator_copy_json(it->value, w)) return false;
        return w.end_object();
    }
    return false;
}

/// The steps that play a service's control route at their time: the step's name, its kind, its
/// route ("" for aws_event_end, whose route names the event: "aws/events/ID/complete").
struct emulator_route_step {
    std::string_view name;
    testing::scenario_step::kind what;
    std::string_view route;
};

inline const emulator_route_step* emulator_find_route_step(std::string_view name) noexcept {
    using kind = testing::scenario_step::kind;
    static constexpr emulator_route_step steps[] = {
        {"aws_spot", kind::aws, "aws/spot"},           {"aws_rebalance", kind::aws, "aws/rebalance"},
        {"aws_event", kind::aws, "aws/events"},        {"aws_event_end", kind::aws, ""},
        {"aws_lifecycle", kind::aws, "aws/lifecycle"}, {"alibaba_spot", kind::alibaba, "alibaba/spot"},
        {"tencent_spot", kind::tencent, "tencent/spot"},
    };
    for (const auto& s : steps)
        if (s.name == name) return &s;
    return nullptr;
}

inline result<testing::scenario_step> emulator_parse_step(const rapidjson::Value& v, const std::string& field) {
    using testing::scenario_step;
    if (!v.IsObject()) return json_type_error(field, "object", v);
    scenario_step s;
    int actions = 0;
    auto read = emulator_each_member(v, field, [&](std::string_view name, const std::string& f,
                                                   const rapidjson::Value& m) -> result<void> {
        if (name == "at") {
            auto d = emulator_json_duration(m, f);
            if (!d) return d.error();
            s.at = *d;
            return {};
        }
        if (name == "note") return {};  // a comment
        ++actions;
        if (name == "azure_event" || name == "hardware_failure") {
            auto e = emulator_parse_event_spec(m, f);
            if (!e) return e.error();
            s.what = scenario_step::kind::azure_event;
            s.event = std::move(*e);
            if (name == "hardware_failure") {
                s.event.started = true;
                if (!m.HasMember("EventType") && !m.HasMember("type")) s.event.type = "Reboot";
            }
        } else if (name == "cancel" || name == "complete" || name == "approve") {
            auto id = emulator_json_string(m, f);
            if (!id) return id.error();
            s.id = std::move(*id);
            s.what = name == "cancel" ? scenario_step::kind::cancel
                     : name == "complete" ? scenario_step::kind::complete
                                          : scenario_step::kind::approve;
        } else if (name == "gce_set") {
            auto values = emulator_parse_gce_values(m, f);
            if (!values) return values.error();
            s.what = scenario_step::kind::gce_set;
            s.gce_values = std::move(*values);
        } else if (name == "gce_upcoming") {
            auto value = emulator_gce_upcoming_value(m, f);
            if (!value) return value.error();
            s.what = scenario_step::kind::gce_set;
            s.gce_values.emplace_back(std::string(emulator_gce_upcoming_key), std::move(*value));
        } else if (name == "fault") {
            auto fs = emulator_parse_fault(m, f);
            if (!fs) return fs.error();
            s.what = scenario_step::kind::fault;
            s.fault = std::move(*fs);
        } else if (name == "clear_faults") {
            s.what = scenario_step::kind::clear_faults;
        } else if (name == "service_reenabled") {
            s.what = scenario_step::kind::service_reenabled;
            if (m.IsObject()) {
                if (const auto* inc = json_member(m, "incarnation")) {
                    auto n = emulator_json_int(*inc, f + ".incarnation");
                    if (!n) return n.error();
                    s.incarnation = *n;
                }
            } else if (!m.IsBool()) {
                return json_type_error(f, "object or true", m);
            }
        } else if (const emulator_route_step* r = emulator_find_route_step(name)) {
            // A service's control route, played at `at` (docs/emulator.md).
            if (!m.IsObject()) return json_type_error(f, "object", m);
            s.what = r->what;
            json_writer w(true);
            if (!emulator_copy_json(m, w)) return testing::scenario_error(f, "cannot be written back as JSON");
            s.route_body = w.str();
            s.route = std::string(r->route);
            if (name == "aws_event_end") {
                const auto* id = json_member(m, "EventId");
                const auto* state = json_member(m, "State");
                if (!id || !id->IsString() || json_string_view(*id).empty())
                    return testing::scenario_error(f + ".EventId", "the EventId of the event that ends");
                if (!state || !state->IsString() ||
                    (json_string_view(*state) != "completed" && json_string_view(*state) != "canceled"))
                    return testing::scenario_error(f + ".State", "\"completed\" or \"canceled\"");
                s.route = "aws/events/" + std::string(json_string_view(*id)) +
                          (json_string_view(*state) == "completed" ? "/complete" : "/cancel");
            }
        } else {
            return testing::scenario_error(f, "unknown step (expected azure_event, hardware_failure, cancel, complete, approve, "
                                              "gce_set, gce_maintenance, gce_upcoming, fault, clear_faults, service_reenabled, aws_spot, "
                                              "aws_rebalance, aws_event, aws_event_end, aws_lifecycle, alibaba_spot or tencent_spot)");
        }
        return {};
    });
    if (!read) return read.error();
    if (actions != 1) return testing::scenario_error(field, "a step has \"at\" and exactly one action");
    return s;
}

// "gce_maintenance": {"value": "MIGRATE_ON_HOST_MAINTENANCE", "for": "60s"} expands to two gce_set steps.
inline result<void> emulator_parse_steps_into(const rapidjson::Value& v, const std::string& field,
                                              std::vector<testing::scenario_step>& out) {
    using testing::scenario_step;
    const rapidjson::Value* gm = v.IsObject() ? json_member(v, "gce_maintenance") : nullptr;
    if (!gm) {
        auto s = emulator_parse_step(v, field);
        if (!s) return s.error();
        out.push_back(std::move(*s));
        return {};
    }
    if (!gm->IsObject()) return json_type_error(field + ".gce_maintenance", "object", *gm);
    if (auto k = emulator_known_members(*gm, field + ".gce_maintenance", {"value", "for"}); !k) return k.error();
    testing::scenario_duration at{0};
    if (const auto* a = json_member(v, "at")) {
        auto d = emulator_json_duration(*a, field + ".at");
        if (!d) return d.error();
        at = *d;
    }
    std::string value = "MIGRATE_ON_HOST_MAINTENANCE";
    if (const auto* val = json_member(*gm, "value")) {
        auto s = emulator_json_string(*val, field + ".gce_maintenance.value");
        if (!s) return s.error();
        value = std::move(*s);
    }
    testing::scenario_duration lasts = std::chrono::seconds(60);
    if (const auto* fo = json_member(*gm, "for")) {
        auto d = emulator_json_duration(*fo, field + ".gce_maintenance.for");
        if (!d) return d.error();
        lasts = *d;
    }
    scenario_step begin;
    begin.at = at;
    begin.what = scenario_step::kind::gce_set;
    begin.gce_values.emplace_back("instance/maintenance-event", value);
    begin.maintenance_edge = 1;
    scenario_step end = begin;
    end.maintenance_edge = -1;
    end.at = at + lasts;
    end.gce_values.clear();
    end.gce_values.emplace_back("instance/maintenance-event", std::string("NONE"));
    out.push_back(std::move(begin));
    out.push_back(std::move(end));
    return {};
}

inline result<testing::vm_identity> emulator_parse_vm(const rapidjson::Value& v, const std::string& field, std::size_t index) {
    if (!v.IsObject()) return json_type_error(field, "object", v);
    if (auto k = emulator_known_members(v, field, {"name", "scale_set", "instance_id", "vm_id", "location", "resource_group",
                                                   "subscription_id", "vm_size", "zone", "gce_id", "hostname", "gce_zone",
                                                   "machine_type"});
        !k)
        return k.error();
    testing::vm_identity vm;
    vm.gce_id = std::to_string(4520031799277581759ull + index);
    std::string instance_id = std::to_string(index);
    bool named = false;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string name(json_string_view(it->name));
        auto s = emulator_json_string(it->value, field + "." + name);
        if (!s) return s.error();
        if (name == "name") vm.name = *s, named = true;
        else if (name == "scale_set") vm.scale_set = *s;
        else if (name == "instance_id") instance_id = *s;
        else if (name == "vm_id") vm.vm_id = *s;
        else if (name == "location") vm.location = *s;
        else if (name == "resource_group") vm.resource_group = *s;
        else if (name == "subscription_id") vm.subscription_id = *s;
        else if (name == "vm_size") vm.vm_size = *s;
        else if (name == "zone") vm.zone = *s;
        else if (name == "gce_id") vm.gce_id = *s;
        else if (name == "hostname") vm.hostname = *s;
        else if (name == "gce_zone") vm.gce_zone = *s;
        else if (name == "machine_type") vm.machine_type = *s;
    }
    if (!named) vm.name = vm.scale_set.empty() ? "vm" + std::to_string(index) : vm.scale_set + "_" + instance_id;
    return vm;
}

}  // namespace detail

namespace testing {

/// Parses a scenario file's text (format: docs/emulator.md).
inline result<scenario_config> parse_scenario(std::string_view text) {
    namespace d = forewarn::detail;
    auto doc = d::parse_json(text);
    if (!doc) return doc.error();
    const auto& root = *doc;
    if (!root.IsObject()) return d::json_type_error("", "object", root);
    if (auto k = d::emulator_known_members(root, "", {"name", "description", "speed", "wall_epoch", "seed", "rate_limit",
                                                      "enablement_delay", "initial_incarnation", "gce_warning_requires_read",
                                                      "vms", "gce", "steps"});
        !k)
        return k.error();
    scenario_config c;
    for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
        const std::string name(d::json_string_view(it->name));
        const auto& m = it->value;
        if (name == "name" || name == "description") {
            auto s = d::emulator_json_string(m, name);
            if (!s) return s.error();
            (name == "name" ? c.name : c.description) = std::move(*s);
        } else if (name == "speed") {
            if (!m.IsNumber() || !(m.GetDouble() > 0) || m.GetDouble() > 1e6)
                return scenario_error(name, "speed is a number > 0 (scenario seconds per real second)");
            c.speed = m.GetDouble();
        } else if (name == "wall_epoch") {
            auto s = d::emulator_json_string(m, name);
            if (!s) return s.error();
            auto t = d::parse_iso8601(*s);  // the library's own reader
            if (!t) return scenario_error(name, "expected an ISO-8601 time with a zone (\"2022-04-11T22:11:58Z\"): " + t.error().message);
            c.wall_epoch = *t;
        } else if (name == "seed") {
            if (!m.IsUint64()) return d::json_type_error(name, "unsigned integer", m);
            c.seed = m.GetUint64();
        } else if (name == "rate_limit") {
            if (!m.IsUint() || m.GetUint() > 1000000) return d::json_type_error(name, "unsigned integer", m);
            c.rate_limit = m.GetUint();
        } else if (name == "enablement_delay") {
            auto dur = d::emulator_json_duration(m, name);
            if (!dur) return dur.error();
            c.enablement_delay = *dur;
        } else if (name == "initial_incarnation") {
            auto n = d::emulator_json_int(m, name);
            if (!n) return n.error();
            c.initial_incarnation = *n;
        } else if (name == "gce_warning_requires_read") {
            if (!m.IsBool()) return d::json_type_error(name, "boolean", m);
            c.gce_warning_requires_read = m.GetBool();
        } else if (name == "vms") {
            if (!m.IsArray() || m.Empty()) return scenario_error(name, "vms is a non-empty array");
            c.vms.clear();
            for (rapidjson::SizeType i = 0; i < m.Size(); ++i) {
                auto vm = d::emulator_parse_vm(m[i], "vms[" + std::to_string(i) + "]", i);
                if (!vm) return vm.error();
                c.vms.push_back(std::move(*vm));
            }
        } else if (name == "gce") {
            if (!m.IsObject()) return d::json_type_error(name, "object", m);
            for (auto g = m.MemberBegin(); g != m.MemberEnd(); ++g) {
                const std::string key(d::json_string_view(g->name));
                auto s = d::emulator_json_string(g->value, "gce." + key);
                if (!s) return s.error();
                c.gce.emplace_back(key, std::move(*s));
            }
        } else if (name == "steps") {
            if (!m.IsArray()) return d::json_type_error(name, "array", m);
            for (rapidjson::SizeType i = 0; i < m.Size(); ++i)
                if (auto r = d::emulator_parse_steps_into(m[i], "steps[" + std::to_string(i) + "]", c.steps); !r)
                    return r.error();
        }
    }
    return c;
}

/// Reads and parses a scenario file.
inline result<scenario_config> load_scenario(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(errc::io_error, "cannot open scenario file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return error(errc::io_error, "cannot read scenario file " + path);
    auto c = parse_scenario(text.str());
    if (!c) {
        auto e = c.error();
        e.message = path + ": " + e.message;
        return e;
    }
    return c;
}

}  // namespace testing
FOREWARN_END_NAMESPACE
