// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/result.hpp>
#include <forewarn/testing/scenario_detail.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/// Scenario time: milliseconds since the scenario started (or was reset).
using scenario_duration = std::chrono::milliseconds;

/// Who a VM is: what Azure's /metadata/instance/compute and GCE's instance/* keys report.
struct vm_identity {
    std::string name = "vm0";          ///< Azure compute.name ({scale set}_{instance id} in a scale set); GCE instance/name
    std::string scale_set;             ///< Azure vmScaleSetName; "" outside a scale set
    std::string vm_id = "02aab8a4-74ef-476e-8182-f6d2ba4166a6";
    std::string location = "westeurope";
    std::string resource_group = "forewarn-rg";
    std::string subscription_id = "8d10da13-8125-4ba9-a717-bf7490507b3d";
    std::string vm_size = "Standard_D2s_v3";
    std::string zone;                  ///< Azure availability zone ("" when none)
    std::string gce_id = "4520031799277581759";       ///< GCE instance/id
    std::string hostname;              ///< GCE instance/hostname; "" gives <name>.c.forewarn-test.internal
    std::string gce_zone = "projects/123456789012/zones/europe-west1-b";
    std::string machine_type = "projects/123456789012/machineTypes/e2-medium";
};

/// An Azure scheduled event to announce. Unset members take the type's defaults.
struct azure_event_spec {
    std::string id;                          ///< EventId; "" gives a deterministic GUID
    std::string type = "Freeze";             ///< Freeze | Reboot | Redeploy | Preempt | Terminate | anything
    std::vector<std::string> resources;      ///< "" gives the scenario's first VM
    std::string resource_type = "VirtualMachine";
    std::optional<scenario_duration> notice; ///< appearance to NotBefore; default: the type's minimum notice
    std::optional<std::string> description;  ///< default: a sentence per type
    std::string source = "Platform";         ///< EventSource: Platform | User
    std::optional<std::int64_t> duration_in_seconds;  ///< default: 5 for Freeze, -1 (unknown) otherwise
    std::optional<scenario_duration> impact; ///< Started to removed; default: DurationInSeconds when > 0, else 60 s
    bool started = false;                    ///< appears directly Started (hardware failure)
};

/// The minimum notice Azure gives for an event type (PROTOCOL.md): Freeze and Reboot 15 min,
/// Redeploy 10 min, Preempt 30 s, Terminate 5 min (the scale set's notBeforeTimeout can add up to 15).
inline scenario_duration minimum_notice(std::string_view type) {
    using namespace std::chrono;
    if (forewarn::detail::iequals(type, "Redeploy")) return minutes(10);
    if (forewarn::detail::iequals(type, "Preempt")) return seconds(30);
    if (forewarn::detail::iequals(type, "Terminate")) return minutes(5);
    return minutes(15);
}

/// A misbehaviour to inject. Each matching request consumes one unit of `count`.
struct fault_spec {
    enum class kind {
        status,          ///< answer `status` (400, 404, 410, 429, 500, 503, ...) instead
        delay,           ///< answer normally after `duration`
        stall,           ///< say nothing for `duration` (0: until the client gives up), then close
        empty_body,      ///< 200 with an empty body
        truncated_json,  ///< the real body cut to `bytes` (0: half), as a complete answer
        malformed_json,  ///< a body that is not JSON
        close_mid_body,  ///< headers and `bytes` of the body (Content-Length promises more), then close
        body,            ///< answer `status` with `body` as given
    };
    kind what = kind::status;
    std::string service = "any";  ///< "azure", "gce" or "any" (the control API is never faulted)
    std::string path;             ///< only requests whose path contains this ("" any)
    std::string method;           ///< "GET", "POST" or "" (any)
    int status = 503;
    std::int64_t count = 1;       ///< requests it applies to; -1: every one (with `fraction`, default -1)
    double fraction = 1.0;        ///< the share of matching requests hit (deterministic, seeded)
    scenario_duration duration{0};
    std::size_t bytes = 0;
    std::string body;
};

/// The name of a fault kind as scenario files spell it ("status", "close_mid_body", ...).
constexpr std::string_view to_string(fault_spec::kind k) noexcept {
    switch (k) {
    case fault_spec::kind::status: return "status";
    case fault_spec::kind::delay: return "delay";
    case fault_spec::kind::stall: return "stall";
    case fault_spec::kind::empty_body: return "empty_body";
    case fault_spec::kind::truncated_json: return "truncated_json";
    case fault_spec::kind::malformed_json: return "malformed_json";
    case fault_spec::kind::close_mid_body: return "close_mid_body";
    case fault_spec::kind::body: return "body";
    }
    return "status";
}

/// One timed step of a scenario.
struct scenario_step {
    enum class kind {
        azure_event,        ///< announce `event`
        cancel,             ///< Azure cancels event `id` (removed while Scheduled)
        complete,           ///< event `id` ends now (removed, whatever its state)
        approve,            ///< event `id` is approved (another VM's POST)
        gce_set,            ///< set GCE keys (`gce_values`; an empty optional deletes the key)
        fault,              ///< inject `fault`
        clear_faults,       ///< forget every fault
        service_reenabled,  ///< Azure re-enables the service: DocumentIncarnation starts over at `incarnation`
    };
    scenario_duration at{0};
    kind what = kind::azure_event;
    azure_event_spec event;
    std::string id;
    std::vector<std::pair<std::string, std::optional<std::string>>> gce_values;
    fault_spec fault;
    std::int64_t incarnation = 1;
    /// gce_set only: this is the start (+1) or end (-1) of a maintenance announced by
    /// "gce_maintenance", for scenario_config::gce_warning_requires_read.
    int maintenance_edge = 0;
};

/// A whole scenario: who the VMs are, the service's behaviour, and the timeline.
struct scenario_config {
    std::string name;
    std::string description;
    double speed = 1.0;  ///< the program's default --speed (scenario seconds per real second)
    /// Wall time at scenario time 0 (NotBefore = epoch + scenario time); unset: construction time.
    std::optional<std::chrono::system_clock::time_point> wall_epoch;
    std::uint64_t seed = 1;             ///< generated EventIds and fractional faults derive from it
    unsigned rate_limit = 5;            ///< Azure requests per second before 429 (0: off), IMDS's limit
    scenario_duration enablement_delay{0};  ///< the slow first Azure call (IMDS: up to 2 min)
    std::int64_t initial_incarnation = 1;
    /// GCE gives its ~60 s warning only when maintenance-event was read since the last
    /// maintenance: when set, a "gce_maintenance" nobody watched happens without the warning.
    bool gce_warning_requires_read = false;
    std::vector<vm_identity> vms{vm_identity{}};  ///< the first is the default VM
    std::vector<std::pair<std::string, std::string>> gce;  ///< initial GCE keys (override defaults)
    std::vector<scenario_step> steps;
};

/// What the engine wants a front end to do with one request: the answer plus fault directives.
struct emulated_response {
    enum class action {
        answer,          ///< send status, headers and body (after `delay`)
        close_mid_body,  ///< send headers and `close_after` bytes of `body`, then close (after `delay`)
        stall,           ///< send nothing for `delay` (max(): forever), then close
        timed_out,       ///< the request's own timeout passed while it hung (in-process only)
        cancelled,       ///< the caller's cancel flag was raised while it hung
    };
    int status = 200;
    http_headers headers;
    std::string body;
    action what = action::answer;
    scenario_duration delay{0};
    std::size_t close_after = 0;

    const std::string* header(std::string_view name) const noexcept { return find_header(headers, name); }
};

/// One request as the emulator saw it (GET /emulator/v1/requests).
struct logged_request {
    std::uint64_t seq = 0;
    scenario_duration at{0};
    http_method method = http_method::get;
    std::string target;  ///< path and query as sent
    http_headers headers;
    std::string body;
    int status = 0;
    std::string service;  ///< "azure", "gce", "control" or "other"
    std::string vm;
    std::string fault;    ///< the fault applied, "" when none
};

/// An error in a scenario file or a control request, with the member at fault.
inline error scenario_error(std::string field, std::string what) {
    return forewarn::detail::json_shape_error(std::move(field), std::move(what));
}

namespace detail {

using json_value = rapidjson::Value;

inline result<scenario_duration> json_duration(const json_value& v, const std::string& field) {
    if (v.IsNumber()) {
        const double s = v.GetDouble();
        if (!(s >= 0) || s > 1e12) return scenario_error(field, "a duration must be a non-negative number of seconds");
        return scenario_duration(static_cast<std::int64_t>(s * 1000 + 0.5));
    }
    if (v.IsString()) {
        if (auto d = parse_duration(forewarn::detail::json_string_view(v))) return *d;
        return scenario_error(field, "not a duration (\"15m\", \"30s\", \"500ms\", \"1h30m\", or seconds)");
    }
    return forewarn::detail::json_type_error(field, "duration", v);
}

inline result<std::string> json_string(const json_value& v, const std::string& field) {
    if (!v.IsString()) return forewarn::detail::json_type_error(field, "string", v);
    return std::string(forewarn::detail::json_string_view(v));
}

inline result<std::int64_t> json_int(const json_value& v, const std::string& field) {
    if (!v.IsInt64()) return forewarn::detail::json_type_error(field, "integer", v);
    return v.GetInt64();
}

// Rejects members the format does not know, so that a typo ("notcie") is an error, not a default.
inline result<void> json_known_members(const json_value& obj, const std::string& field,
                                       std::initializer_list<std::string_view> known) {
    for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
        const std::string_view name = forewarn::detail::json_string_view(it->name);
        if (std::find(known.begin(), known.end(), name) == known.end())
            return scenario_error(field.empty() ? std::string(name) : field + "." + std::string(name), "unknown member");
    }
    return {};
}

inline result<azure_event_spec> parse_event_spec(const json_value& v, const std::string& field) {
    if (!v.IsObject()) return forewarn::detail::json_type_error(field, "object", v);
    if (auto k = json_known_members(v, field, {"EventId", "id", "EventType", "type", "Resources", "resources",
                                               "ResourceType", "notice", "Description", "description",
                                               "EventSource", "source", "DurationInSeconds", "duration_in_seconds",
                                               "impact", "started", "at"});
        !k)
        return k.error();
    azure_event_spec e;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string_view name = forewarn::detail::json_string_view(it->name);
        const std::string f = field + "." + std::string(name);
        const json_value& m = it->value;
        if (name == "EventId" || name == "id") {
            auto s = json_string(m, f);
            if (!s) return s.error();
            e.id = std::move(*s);
        } else if (name == "EventType" || name == "type") {
            auto s = json_string(m, f);
            if (!s) return s.error();
            e.type = std::move(*s);
        } else if (name == "ResourceType") {
            auto s = json_string(m, f);
            if (!s) return s.error();
            e.resource_type = std::move(*s);
        } else if (name == "Resources" || name == "resources") {
            if (!m.IsArray()) return forewarn::detail::json_type_error(f, "array", m);
            for (rapidjson::SizeType i = 0; i < m.Size(); ++i) {
                auto s = json_string(m[i], f + "[" + std::to_string(i) + "]");
                if (!s) return s.error();
                e.resources.push_back(std::move(*s));
            }
        } else if (name == "notice") {
            auto d = json_duration(m, f);
            if (!d) return d.error();
            e.notice = *d;
        } else if (name == "impact") {
            auto d = json_duration(m, f);
            if (!d) return d.error();
            e.impact = *d;
        } else if (name == "Description" || name == "description") {
            auto s = json_string(m, f);
            if (!s) return s.error();
            e.description = std::move(*s);
        } else if (name == "EventSource" || name == "source") {
            auto s = json_string(m, f);
            if (!s) return s.error();
            e.source = std::move(*s);
        } else if (name == "DurationInSeconds" || name == "duration_in_seconds") {
            auto n = json_int(m, f);
            if (!n) return n.error();
            e.duration_in_seconds = *n;
        } else if (name == "started") {
            if (!m.IsBool()) return forewarn::detail::json_type_error(f, "boolean", m);
            e.started = m.GetBool();
        }
    }
    return e;
}

inline result<fault_spec> parse_fault(const json_value& v, const std::string& field) {
    if (!v.IsObject()) return forewarn::detail::json_type_error(field, "object", v);
    if (auto k = json_known_members(v, field, {"kind", "service", "path", "method", "status", "count", "fraction",
                                               "duration", "bytes", "body", "at"});
        !k)
        return k.error();
    fault_spec f;
    bool count_given = false;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string_view name = forewarn::detail::json_string_view(it->name);
        const std::string mf = field + "." + std::string(name);
        const json_value& m = it->value;
        if (name == "kind") {
            auto s = json_string(m, mf);
            if (!s) return s.error();
            bool found = false;
            for (auto k : {fault_spec::kind::status, fault_spec::kind::delay, fault_spec::kind::stall,
                           fault_spec::kind::empty_body, fault_spec::kind::truncated_json,
                           fault_spec::kind::malformed_json, fault_spec::kind::close_mid_body, fault_spec::kind::body})
                if (*s == to_string(k)) {
                    f.what = k;
                    found = true;
                }
            if (!found) return scenario_error(mf, "unknown fault kind \"" + *s + "\"");
        } else if (name == "service") {
            auto s = json_string(m, mf);
            if (!s) return s.error();
            if (*s != "azure" && *s != "gce" && *s != "any") return scenario_error(mf, "expected \"azure\", \"gce\" or \"any\"");
            f.service = std::move(*s);
        } else if (name == "path") {
            auto s = json_string(m, mf);
            if (!s) return s.error();
            f.path = std::move(*s);
        } else if (name == "method") {
            auto s = json_string(m, mf);
            if (!s) return s.error();
            f.method = std::move(*s);
        } else if (name == "status") {
            auto n = json_int(m, mf);
            if (!n) return n.error();
            if (*n < 100 || *n > 599) return scenario_error(mf, "an HTTP status is 100 to 599");
            f.status = static_cast<int>(*n);
        } else if (name == "count") {
            auto n = json_int(m, mf);
            if (!n) return n.error();
            if (*n < -1 || *n == 0) return scenario_error(mf, "a positive count, or -1 for every request");
            f.count = *n;
            count_given = true;
        } else if (name == "fraction") {
            if (!m.IsNumber()) return forewarn::detail::json_type_error(mf, "number", m);
            f.fraction = m.GetDouble();
            if (!(f.fraction > 0 && f.fraction <= 1)) return scenario_error(mf, "a fraction is in (0, 1]");
        } else if (name == "duration") {
            auto d = json_duration(m, mf);
            if (!d) return d.error();
            f.duration = *d;
        } else if (name == "bytes") {
            auto n = json_int(m, mf);
            if (!n) return n.error();
            if (*n < 0) return scenario_error(mf, "bytes is not negative");
            f.bytes = static_cast<std::size_t>(*n);
        } else if (name == "body") {
            auto s = json_string(m, mf);
            if (!s) return s.error();
            f.body = std::move(*s);
        }
    }
    if (!count_given && f.fraction < 1) f.count = -1;
    if (f.what == fault_spec::kind::body && !v.HasMember("status")) f.status = 200;
    return f;
}

inline result<scenario_step> parse_step(const json_value& v, const std::string& field) {
    if (!v.IsObject()) return forewarn::detail::json_type_error(field, "object", v);
    scenario_step s;
    int actions = 0;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string_view name = forewarn::detail::json_string_view(it->name);
        const std::string f = field + "." + std::string(name);
        const json_value& m = it->value;
        if (name == "at") {
            auto d = json_duration(m, f);
            if (!d) return d.error();
            s.at = *d;
            continue;
        }
        if (name == "note") continue;  // a comment
        ++actions;
        if (name == "azure_event" || name == "hardware_failure") {
            auto e = parse_event_spec(m, f);
            if (!e) return e.error();
            s.what = scenario_step::kind::azure_event;
            s.event = std::move(*e);
            if (name == "hardware_failure") {
                s.event.started = true;
                if (!m.HasMember("EventType") && !m.HasMember("type")) s.event.type = "Reboot";
            }
        } else if (name == "cancel" || name == "complete" || name == "approve") {
            auto id = json_string(m, f);
            if (!id) return id.error();
            s.id = std::move(*id);
            s.what = name == "cancel" ? scenario_step::kind::cancel
                     : name == "complete" ? scenario_step::kind::complete
                                          : scenario_step::kind::approve;
        } else if (name == "gce_set") {
            if (!m.IsObject()) return forewarn::detail::json_type_error(f, "object", m);
            s.what = scenario_step::kind::gce_set;
            for (auto g = m.MemberBegin(); g != m.MemberEnd(); ++g) {
                std::string key(forewarn::detail::json_string_view(g->name));
                if (g->value.IsNull()) {
                    s.gce_values.emplace_back(std::move(key), std::nullopt);
                } else {
                    auto val = json_string(g->value, f + "." + key);
                    if (!val) return val.error();
                    s.gce_values.emplace_back(std::move(key), std::move(*val));
                }
            }
        } else if (name == "fault") {
            auto fs = parse_fault(m, f);
            if (!fs) return fs.error();
            s.what = scenario_step::kind::fault;
            s.fault = std::move(*fs);
        } else if (name == "clear_faults") {
            s.what = scenario_step::kind::clear_faults;
        } else if (name == "service_reenabled") {
            s.what = scenario_step::kind::service_reenabled;
            if (m.IsObject()) {
                if (const auto* inc = forewarn::detail::json_member(m, "incarnation")) {
                    auto n = json_int(*inc, f + ".incarnation");
                    if (!n) return n.error();
                    s.incarnation = *n;
                }
            } else if (!m.IsBool()) {
                return forewarn::detail::json_type_error(f, "object or true", m);
            }
        } else {
            return scenario_error(f, "unknown step (expected azure_event, hardware_failure, cancel, complete, approve, "
                                     "gce_set, gce_maintenance, fault, clear_faults or service_reenabled)");
        }
    }
    if (actions != 1) return scenario_error(field, "a step has \"at\" and exactly one action");
    return s;
}

// "gce_maintenance": {"value": "MIGRATE_ON_HOST_MAINTENANCE", "for": "60s"} expands to two gce_set steps.
inline result<void> parse_steps_into(const json_value& v, const std::string& field, std::vector<scenario_step>& out) {
    if (v.IsObject()) {
        if (const auto* gm = forewarn::detail::json_member(v, "gce_maintenance")) {
            if (!gm->IsObject()) return forewarn::detail::json_type_error(field + ".gce_maintenance", "object", *gm);
            if (auto k = json_known_members(*gm, field + ".gce_maintenance", {"value", "for"}); !k) return k.error();
            scenario_duration at{0};
            if (const auto* a = forewarn::detail::json_member(v, "at")) {
                auto d = json_duration(*a, field + ".at");
                if (!d) return d.error();
                at = *d;
            }
            std::string value = "MIGRATE_ON_HOST_MAINTENANCE";
            if (const auto* val = forewarn::detail::json_member(*gm, "value")) {
                auto s = json_string(*val, field + ".gce_maintenance.value");
                if (!s) return s.error();
                value = std::move(*s);
            }
            scenario_duration lasts = std::chrono::seconds(60);
            if (const auto* fo = forewarn::detail::json_member(*gm, "for")) {
                auto d = json_duration(*fo, field + ".gce_maintenance.for");
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
    }
    auto s = parse_step(v, field);
    if (!s) return s.error();
    out.push_back(std::move(*s));
    return {};
}

inline result<vm_identity> parse_vm(const json_value& v, const std::string& field, std::size_t index) {
    if (!v.IsObject()) return forewarn::detail::json_type_error(field, "object", v);
    if (auto k = json_known_members(v, field, {"name", "scale_set", "instance_id", "vm_id", "location", "resource_group",
                                               "subscription_id", "vm_size", "zone", "gce_id", "hostname", "gce_zone",
                                               "machine_type"});
        !k)
        return k.error();
    vm_identity vm;
    vm.gce_id = std::to_string(4520031799277581759ull + index);
    std::string instance_id = std::to_string(index);
    bool named = false;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string name(forewarn::detail::json_string_view(it->name));
        auto s = json_string(it->value, field + "." + name);
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

/// Parses a scenario file's text (format: docs/emulator.md).
inline result<scenario_config> parse_scenario(std::string_view text) {
    auto doc = forewarn::detail::parse_json(text);
    if (!doc) return doc.error();
    const auto& root = *doc;
    if (!root.IsObject()) return forewarn::detail::json_type_error("", "object", root);
    if (auto k = detail::json_known_members(root, "", {"name", "description", "speed", "wall_epoch", "seed", "rate_limit",
                                                       "enablement_delay", "initial_incarnation", "gce_warning_requires_read",
                                                       "vms", "gce", "steps"});
        !k)
        return k.error();
    scenario_config c;
    for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
        const std::string name(forewarn::detail::json_string_view(it->name));
        const auto& m = it->value;
        if (name == "name" || name == "description") {
            auto s = detail::json_string(m, name);
            if (!s) return s.error();
            (name == "name" ? c.name : c.description) = std::move(*s);
        } else if (name == "speed") {
            if (!m.IsNumber() || !(m.GetDouble() > 0) || m.GetDouble() > 1e6)
                return scenario_error(name, "speed is a number > 0 (scenario seconds per real second)");
            c.speed = m.GetDouble();
        } else if (name == "wall_epoch") {
            auto s = detail::json_string(m, name);
            if (!s) return s.error();
            auto t = detail::parse_iso8601_utc(*s);
            if (!t) return scenario_error(name, "expected \"YYYY-MM-DDTHH:MM:SSZ\"");
            c.wall_epoch = *t;
        } else if (name == "seed") {
            if (!m.IsUint64()) return forewarn::detail::json_type_error(name, "unsigned integer", m);
            c.seed = m.GetUint64();
        } else if (name == "rate_limit") {
            if (!m.IsUint() || m.GetUint() > 1000000) return forewarn::detail::json_type_error(name, "unsigned integer", m);
            c.rate_limit = m.GetUint();
        } else if (name == "enablement_delay") {
            auto d = detail::json_duration(m, name);
            if (!d) return d.error();
            c.enablement_delay = *d;
        } else if (name == "initial_incarnation") {
            auto n = detail::json_int(m, name);
            if (!n) return n.error();
            c.initial_incarnation = *n;
        } else if (name == "gce_warning_requires_read") {
            if (!m.IsBool()) return forewarn::detail::json_type_error(name, "boolean", m);
            c.gce_warning_requires_read = m.GetBool();
        } else if (name == "vms") {
            if (!m.IsArray() || m.Empty()) return scenario_error(name, "vms is a non-empty array");
            c.vms.clear();
            for (rapidjson::SizeType i = 0; i < m.Size(); ++i) {
                auto vm = detail::parse_vm(m[i], "vms[" + std::to_string(i) + "]", i);
                if (!vm) return vm.error();
                c.vms.push_back(std::move(*vm));
            }
        } else if (name == "gce") {
            if (!m.IsObject()) return forewarn::detail::json_type_error(name, "object", m);
            for (auto g = m.MemberBegin(); g != m.MemberEnd(); ++g) {
                const std::string key(forewarn::detail::json_string_view(g->name));
                auto s = detail::json_string(g->value, "gce." + key);
                if (!s) return s.error();
                c.gce.emplace_back(key, std::move(*s));
            }
        } else if (name == "steps") {
            if (!m.IsArray()) return forewarn::detail::json_type_error(name, "array", m);
            for (rapidjson::SizeType i = 0; i < m.Size(); ++i)
                if (auto r = detail::parse_steps_into(m[i], "steps[" + std::to_string(i) + "]", c.steps); !r)
                    return r.error();
        }
    }
    return c;
}

/// Reads and parses a scenario file.
inline result<scenario_config> load_scenario(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(errc::io_error, "cannot open scenario file " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return error(errc::io_error, "cannot read scenario file " + path);
    auto c = parse_scenario(ss.str());
    if (!c) {
        auto e = c.error();
        e.message = path + ": " + e.message;
        return e;
    }
    return c;
}

/**
 * The emulated metadata services: a deterministic state machine over an injected clock, shared by
 * forewarn-emulator (HTTP) and simulated_transport (in-process). Every protocol rule lives in
 * handle(); front ends only carry bytes and apply its fault directives.
 *
 * The clock is manual by default (advance() moves it; nothing happens on its own), or real time
 * times a speed (use_real_time()). Thread-safe: a hanging GCE request waits inside handle() on a
 * condition variable that advance(), control changes, wake() and shutdown() signal.
 *
 * @code
 * forewarn::testing::scenario s;
 * s.add_azure_event({});                       // a Freeze, 15 min notice, for vm0
 * s.advance(std::chrono::minutes(15));         // NotBefore passes: the event is Started
 * @endcode
 */
class scenario {
public:
    /// Header a request may carry to be answered as one of the scenario's VMs (default: the first).
    static constexpr std::string_view vm_header = "X-Forewarn-Vm";

    /// Azure scheduled-events api-versions, oldest first.
    static const std::vector<std::string>& azure_versions() {
        static const std::vector<std::string> v{"2017-03-01", "2017-08-01", "2017-11-01", "2019-01-01",
                                                "2019-04-01", "2019-08-01", "2020-07-01"};
        return v;
    }
    /// Azure instance-metadata api-versions accepted on /metadata/instance (a subset of IMDS's).
    static const std::vector<std::string>& instance_versions() {
        static const std::vector<std::string> v{
            "2017-03-01", "2017-04-02", "2017-08-01", "2017-12-01", "2018-02-01", "2018-04-02", "2018-10-01",
            "2019-02-01", "2019-03-11", "2019-04-30", "2019-06-01", "2019-06-04", "2019-08-01", "2019-08-15",
            "2019-11-01", "2020-06-01", "2020-07-15", "2020-09-01", "2020-10-01", "2020-12-01", "2021-01-01",
            "2021-02-01", "2021-03-01", "2021-05-01", "2021-08-01", "2021-10-01", "2021-11-01", "2021-11-15",
            "2021-12-13", "2023-07-01"};
        return v;
    }

    explicit scenario(scenario_config config = {}) : config_(std::move(config)) {
        if (config_.vms.empty()) config_.vms.emplace_back();
        if (!config_.wall_epoch) {
            const auto now = std::chrono::system_clock::now();
            config_.wall_epoch = std::chrono::time_point_cast<std::chrono::seconds>(now);
        }
        restart_locked();
    }
    scenario(const scenario&) = delete;
    scenario& operator=(const scenario&) = delete;

    // --- the clock --------------------------------------------------------------------------

    /// Switches to real time × speed from now on (the program). Scenario time continues from where it is.
    void use_real_time(double speed) {
        std::lock_guard<std::mutex> lock(mutex_);
        offset_ = now_locked();
        speed_ = speed > 0 ? speed : 1.0;
        real_ = true;
        real_start_ = std::chrono::steady_clock::now();
        cv_.notify_all();
    }
    bool real_time() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return real_;
    }
    double speed() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return real_ ? speed_ : 0.0;
    }

    /// Moves scenario time forward by `d`, applying every step and transition on the way in
    /// order, and wakes hanging requests. Works on a real-time clock too (it jumps ahead).
    void advance(scenario_duration d) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (d.count() > 0) {
            if (real_) offset_ += d;
            else manual_now_ += d;
        }
        sync_locked();
        cv_.notify_all();
    }
    /// Scenario time now.
    scenario_duration now() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return now_locked();
    }
    /// Wall time now: the scenario's wall epoch plus scenario time.
    std::chrono::system_clock::time_point wall_now() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return wall_at(now_locked());
    }
    std::chrono::system_clock::time_point wall_epoch() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return *config_.wall_epoch;
    }

    // --- control ----------------------------------------------------------------------------

    /// Announces an Azure event now (at + 0) and returns its EventId.
    std::string add_azure_event(azure_event_spec spec) {
        std::lock_guard<std::mutex> lock(mutex_);
        sync_locked();
        const std::string id = add_event_locked(std::move(spec), now_locked());
        bump_locked();
        return id;
    }
    /// Azure cancels a Scheduled event (it disappears without starting). False when not Scheduled.
    bool cancel_azure_event(const std::string& id) {
        std::lock_guard<std::mutex> lock(mutex_);
        sync_locked();
        auto* e = find_locked(id);
        if (!e || e->state != phase::scheduled) return false;
        end_event_locked(*e, now_locked(), "cancelled");
        bump_locked();
        return true;
    }
    /// Ends an event now (cancelled when Scheduled, completed when Started). False when gone already.
    bool remove_azure_event(const std::string& id) {
        std::lock_guard<std::mutex> lock(mutex_);
        sync_locked();
        auto* e = find_locked(id);
        if (!e || e->state == phase::removed) return false;
        end_event_locked(*e, now_locked(), e->state == phase::scheduled ? "cancelled" : "completed");
        bump_locked();
        return true;
    }
    /// Sets a GCE key (path under computeMetadata/v1/, e.g. "instance/maintenance-event").
    void set_gce(const std::string& key, std::string value) {
        std::lock_guard<std::mutex> lock(mutex_);
        sync_locked();
        set_gce_locked(key, std::move(value));
        cv_.notify_all();
    }
    /// Injects a fault now.
    void inject_fault(fault_spec f) {
        std::lock_guard<std::mutex> lock(mutex_);
        sync_locked();
        add_fault_locked(std::move(f));
    }
    void clear_faults() {
        std::lock_guard<std::mutex> lock(mutex_);
        faults_.clear();
        log_locked("faults cleared");
    }
    /// Adds a step whose `at` counts from now; it is applied at once when due.
    void add_step(scenario_step step) {
        std::lock_guard<std::mutex> lock(mutex_);
        sync_locked();
        step.at += now_locked();
        insert_pending_locked(std::move(step));
        sync_locked();
        cv_.notify_all();
    }
    /// Back to the configured scenario at time 0: state, faults, log and clock.
    void reset() {
        std::lock_guard<std::mutex> lock(mutex_);
        restart_locked();
        cv_.notify_all();
    }
    /// Wakes every hanging request (a cancel flag was raised); nothing else changes.
    void wake() noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        cv_.notify_all();
    }
    /// Ends every hanging request and pause() and refuses to hang again: the program is stopping.
    void shutdown() noexcept {
        std::lock_guard<std::mutex> lock(mutex_);
        shutdown_ = true;
        cv_.notify_all();
    }
    /// Receives one line per request and per state change (called with the engine's lock held:
    /// the sink must not call back into the scenario).
    void set_logger(std::function<void(const std::string&)> sink) {
        std::lock_guard<std::mutex> lock(mutex_);
        logger_ = std::move(sink);
    }

    // --- observation ------------------------------------------------------------------------

    std::int64_t incarnation() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return incarnation_;
    }
    /// The current value of a GCE key, or nothing.
    std::optional<std::string> gce_value(const std::string& key, std::size_t vm = 0) const {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto leaves = gce_leaves_locked(config_.vms.at(vm));
        const auto it = leaves.find(key);
        if (it == leaves.end()) return std::nullopt;
        return it->second;
    }
    /// The ETag a GCE key (or directory, ending in '/') has now.
    std::string gce_etag(const std::string& key, std::size_t vm = 0) const {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto leaves = gce_leaves_locked(config_.vms.at(vm));
        return detail::content_etag(gce_content(leaves, key).value_or(std::string()));
    }
    /// Every request logged so far (the newest 10000).
    std::vector<logged_request> requests() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return {log_.begin(), log_.end()};
    }
    void clear_requests() {
        std::lock_guard<std::mutex> lock(mutex_);
        log_.clear();
    }
    const scenario_config& config() const noexcept { return config_; }
    /// The state as JSON (what GET /emulator/v1/state answers).
    std::string state_json() {
        std::lock_guard<std::mutex> lock(mutex_);
        sync_locked();
        return state_json_locked();
    }

    /// Requests hanging in handle() right now (GCE wait_for_change).
    std::size_t hanging() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return hanging_;
    }
    /// Blocks until at least `n` requests hang in handle(), or `real_timeout` passes: a test
    /// calls it before advance() so that the advance is known to reach a waiting poller thread.
    bool wait_until_hanging(std::size_t n, std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, real_timeout, [&] { return hanging_ >= n; });
    }

    /// Waits `d` of scenario time (real time / speed, or until advance() passes it); false when
    /// shutdown() or `cancelled` interrupted it. Front ends use it to carry out delays.
    bool pause(scenario_duration d, const std::atomic<bool>* cancelled = nullptr) {
        std::unique_lock<std::mutex> lock(mutex_);
        const bool forever = d == (scenario_duration::max)();
        const scenario_duration until = forever ? d : now_locked() + d;
        for (;;) {
            if (shutdown_ || (cancelled && cancelled->load())) return false;
            sync_locked();
            if (!forever && now_locked() >= until) return true;
            wait_locked(lock, forever ? std::nullopt : std::optional<scenario_duration>(until));
        }
    }

    // --- the protocol -----------------------------------------------------------------------

    /**
     * Answers one request (absolute URL or origin-form target) as the emulated services would.
     * Hanging GCE requests (wait_for_change) block here until the value changes, timeout_sec or
     * the request's own timeout passes in scenario time, `cancelled` is raised (then wake()), or
     * shutdown(). Never throws on bad input: a malformed request gets the status the real service
     * would give.
     */
    emulated_response handle(const http_request& request, const std::atomic<bool>* cancelled = nullptr) {
        std::unique_lock<std::mutex> lock(mutex_);
        sync_locked();
        const detail::parsed_target target = detail::parse_target(request.url);
        logged_request entry;
        entry.at = now_locked();
        entry.method = request.method;
        entry.target = target_text(request.url);
        entry.headers = request.headers;
        entry.body = request.body.substr(0, 4096);

        emulated_response r;
        const vm_identity* vm = &config_.vms.front();
        if (const auto* want = find_header(request.headers, vm_header)) {
            vm = nullptr;
            for (const auto& v : config_.vms)
                if (v.name == *want) vm = &v;
        }
        entry.vm = vm ? vm->name : std::string();
        const std::string& path = target.path;
        if (path.compare(0, 13, "/emulator/v1/") == 0 || path == "/emulator/v1") {
            entry.service = "control";
            r = control_locked(request, target);
        } else if (!vm) {
            entry.service = "other";
            r = text_response(400, "unknown VM in " + std::string(vm_header));
        } else if (path == "/metadata" || path.compare(0, 10, "/metadata/") == 0) {
            entry.service = "azure";
            r = azure_locked(request, target, *vm, entry);
        } else if (path.compare(0, 16, "/computeMetadata") == 0) {
            entry.service = "gce";
            r = gce_locked(request, target, *vm, entry, lock, cancelled);
        } else {
            entry.service = "other";
            r = text_response(404, "not found");
        }
        entry.status = r.status;
        std::string verb = request.method == http_method::post ? "POST" : "GET";
        if (const auto* m = find_header(request.headers, "X-Http-Method")) verb = *m;
        std::string line = verb + " " + entry.target + " -> ";
        switch (r.what) {
        case emulated_response::action::answer: line += std::to_string(r.status); break;
        case emulated_response::action::close_mid_body: line += std::to_string(r.status) + " (closed mid-body)"; break;
        case emulated_response::action::stall: line += "stall"; break;
        case emulated_response::action::timed_out: line += "timed out"; break;
        case emulated_response::action::cancelled: line += "cancelled"; break;
        }
        if (!entry.fault.empty()) line += " [fault: " + entry.fault + "]";
        if (entry.service != "control") {
            entry.seq = ++seq_;
            log_.push_back(std::move(entry));
            while (log_.size() > 10000) log_.pop_front();
        }
        log_locked(line);
        return r;
    }

private:
    enum class phase { scheduled, started, removed };
    struct event_record {
        azure_event_spec spec;
        phase state = phase::scheduled;
        scenario_duration appeared{0};
        scenario_duration not_before{0};
        scenario_duration started_at{0};
        scenario_duration removed_at{0};
        std::string approved_by;
        std::string ended;  // "completed" | "cancelled"
    };
    struct fault_record {
        fault_spec spec;
        std::int64_t remaining = 1;
        std::uint64_t hits = 0;
    };

    // ---- time ----
    scenario_duration now_locked() const {
        if (!real_) return manual_now_;
        const std::chrono::duration<double, std::milli> real = std::chrono::steady_clock::now() - real_start_;
        return offset_ + scenario_duration(static_cast<std::int64_t>(real.count() * speed_));
    }
    // IMDS's 5 requests/s is a property of the real service seen by a real client: counted in
    // real time for the program (whatever the speed), in scenario time in-process.
    std::chrono::milliseconds limiter_now_locked() const {
        if (!real_) return manual_now_;
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - real_start_);
    }
    std::chrono::system_clock::time_point wall_at(scenario_duration t) const {
        return *config_.wall_epoch + std::chrono::duration_cast<std::chrono::system_clock::duration>(t);
    }

    // Waits for a notification, or (real time) until scenario time `until` or the next
    // transition, whichever is first; polls at least every 100 ms as a safety net.
    void wait_locked(std::unique_lock<std::mutex>& lock, std::optional<scenario_duration> until) {
        if (!real_) {
            cv_.wait(lock);
            return;
        }
        std::optional<scenario_duration> next = next_transition_locked();
        if (until && (!next || *until < *next)) next = until;
        std::chrono::milliseconds real_wait(100);
        if (next) {
            const auto ahead = (*next - now_locked()).count();
            const auto ms = static_cast<std::int64_t>(static_cast<double>(ahead > 0 ? ahead : 0) / speed_) + 1;
            if (ms < real_wait.count()) real_wait = std::chrono::milliseconds(ms);
        }
        cv_.wait_for(lock, real_wait);
    }

    // ---- the state machine ----
    void restart_locked() {
        manual_now_ = scenario_duration(0);
        offset_ = scenario_duration(0);
        real_start_ = std::chrono::steady_clock::now();
        speed_ = real_ ? speed_ : 1.0;
        events_.clear();
        faults_.clear();
        pending_.clear();
        log_.clear();
        rate_window_.clear();
        incarnation_ = config_.initial_incarnation;
        enabled_ = config_.enablement_delay.count() == 0;
        enabled_at_ = scenario_duration(0);
        enabling_ = false;
        id_counter_ = 0;
        rng_ = detail::splitmix64{config_.seed};
        gce_maintenance_read_ = false;
        skipped_warning_ = false;
        gce_.clear();
        gce_["instance/maintenance-event"] = "NONE";
        gce_["instance/preempted"] = "FALSE";
        gce_["instance/scheduling/preemptible"] = "FALSE";
        gce_["instance/scheduling/on-host-maintenance"] = "MIGRATE";
        gce_["instance/scheduling/automatic-restart"] = "TRUE";
        gce_["project/project-id"] = "forewarn-test";
        gce_["project/numeric-project-id"] = "123456789012";
        for (const auto& kv : config_.gce) gce_[kv.first] = kv.second;
        for (const auto& s : config_.steps) insert_pending_locked(s);
        sync_locked();
    }

    void insert_pending_locked(scenario_step step) {
        const auto pos = std::upper_bound(pending_.begin(), pending_.end(), step.at,
                                          [](scenario_duration t, const scenario_step& s) { return t < s.at; });
        pending_.insert(pos, std::move(step));
    }

    std::optional<scenario_duration> next_transition_locked() const {
        std::optional<scenario_duration> next;
        auto consider = [&](scenario_duration t) {
            if (!next || t < *next) next = t;
        };
        if (!pending_.empty()) consider(pending_.front().at);
        for (const auto& e : events_) {
            if (e.state == phase::scheduled) consider(e.not_before);
            else if (e.state == phase::started) consider(e.removed_at);
        }
        return next;
    }

    // Applies everything due up to now, in time order; DocumentIncarnation grows by one per
    // instant at which the Events array changed.
    void sync_locked() {
        const scenario_duration now = now_locked();
        for (int guard = 0; guard < 1000000; ++guard) {
            const auto next = next_transition_locked();
            if (!next || *next > now) break;
            const scenario_duration t = *next;
            bool changed = false;
            while (!pending_.empty() && pending_.front().at <= t) {
                scenario_step s = std::move(pending_.front());
                pending_.pop_front();
                changed = apply_step_locked(s, t) || changed;
            }
            for (auto& e : events_) {
                if (e.state == phase::scheduled && e.not_before <= t) {
                    start_event_locked(e, t, "NotBefore passed");
                    changed = true;
                } else if (e.state == phase::started && e.removed_at <= t) {
                    end_event_locked(e, t, "completed");
                    changed = true;
                }
            }
            if (changed) bump_locked();
            cv_.notify_all();
        }
    }

    void bump_locked() {
        ++incarnation_;
        log_locked("azure: DocumentIncarnation " + std::to_string(incarnation_));
        cv_.notify_all();
    }

    bool apply_step_locked(const scenario_step& s, scenario_duration t) {
        switch (s.what) {
        case scenario_step::kind::azure_event: add_event_locked(s.event, t); return true;
        case scenario_step::kind::cancel:
        case scenario_step::kind::complete: {
            auto* e = find_locked(s.id);
            if (!e || e->state == phase::removed) {
                log_locked("azure: step on unknown or ended event " + s.id + " ignored");
                return false;
            }
            if (s.what == scenario_step::kind::cancel && e->state != phase::scheduled) {
                log_locked("azure: cannot cancel " + s.id + ": already Started");
                return false;
            }
            end_event_locked(*e, t, e->state == phase::scheduled ? "cancelled" : "completed");
            return true;
        }
        case scenario_step::kind::approve: {
            auto* e = find_locked(s.id);
            if (!e || e->state != phase::scheduled) return false;
            e->approved_by = "(scenario)";
            start_event_locked(*e, t, "approved by the scenario");
            return true;
        }
        case scenario_step::kind::gce_set:
            if (s.maintenance_edge > 0 && config_.gce_warning_requires_read && !gce_maintenance_read_) {
                log_locked("gce: maintenance-event not read since the last maintenance: no warning is given");
                skipped_warning_ = true;
                return false;
            }
            if (s.maintenance_edge < 0) {
                gce_maintenance_read_ = false;  // a new maintenance needs a new read
                if (skipped_warning_) {
                    skipped_warning_ = false;
                    log_locked("gce: the unannounced maintenance is over");
                    return false;
                }
            }
            for (const auto& kv : s.gce_values) {
                if (kv.second) set_gce_locked(kv.first, *kv.second);
                else if (gce_.erase(kv.first)) log_locked("gce: " + kv.first + " deleted");
            }
            return false;
        case scenario_step::kind::fault: add_fault_locked(s.fault); return false;
        case scenario_step::kind::clear_faults:
            faults_.clear();
            log_locked("faults cleared");
            return false;
        case scenario_step::kind::service_reenabled:
            // the service was disabled (24 h without a request) and comes back: the first call is
            // slow again and DocumentIncarnation starts over (bump_locked adds the one change).
            incarnation_ = s.incarnation - 1;
            enabled_ = config_.enablement_delay.count() == 0;
            enabling_ = false;
            log_locked("azure: service re-enabled, DocumentIncarnation starts over at " + std::to_string(s.incarnation));
            return true;
        }
        return false;
    }

    std::string next_event_id_locked() {
        detail::splitmix64 g{config_.seed * 0x9E3779B97F4A7C15ull + ++id_counter_};
        const std::uint64_t a = g.next(), b = g.next();
        static constexpr char hex[] = "0123456789ABCDEF";
        std::string id;
        auto put = [&](std::uint64_t v, int digits) {
            for (int i = digits - 1; i >= 0; --i) id += hex[(v >> (4 * i)) & 0xF];
        };
        put(a >> 32, 8);
        id += '-';
        put((a >> 16) & 0xFFFF, 4);
        id += "-4";
        put(a & 0xFFF, 3);
        id += '-';
        put(0x8 | ((b >> 62) & 0x3), 1);
        put((b >> 48) & 0xFFF, 3);
        id += '-';
        put(b & 0xFFFFFFFFFFFFull, 12);
        return id;
    }

    std::string add_event_locked(azure_event_spec spec, scenario_duration t) {
        event_record e;
        if (spec.id.empty() || find_locked(spec.id)) {
            if (!spec.id.empty()) log_locked("azure: EventId " + spec.id + " is taken; a new one is generated");
            spec.id = next_event_id_locked();
        }
        if (spec.resources.empty()) spec.resources.push_back(config_.vms.front().name);
        if (!spec.duration_in_seconds)
            spec.duration_in_seconds = forewarn::detail::iequals(spec.type, "Freeze") ? 5 : -1;
        if (!spec.description) spec.description = default_description(spec.type, spec.source);
        if (!spec.impact)
            spec.impact = *spec.duration_in_seconds > 0 ? scenario_duration(std::chrono::seconds(*spec.duration_in_seconds))
                                                        : scenario_duration(std::chrono::seconds(60));
        const scenario_duration notice = spec.notice ? *spec.notice : minimum_notice(spec.type);
        e.appeared = t;
        e.not_before = t + notice;
        e.spec = std::move(spec);
        const std::string id = e.spec.id;
        events_.push_back(std::move(e));
        auto& rec = events_.back();
        log_locked("azure: " + id + " " + rec.spec.type + " Scheduled for [" + join(rec.spec.resources) +
                   "], NotBefore " + detail::format_rfc1123(wall_at(rec.not_before)));
        if (rec.spec.started) start_event_locked(rec, t, "hardware failure");
        return id;
    }

    void start_event_locked(event_record& e, scenario_duration t, const std::string& why) {
        e.state = phase::started;
        e.started_at = t;
        e.removed_at = t + *e.spec.impact;
        log_locked("azure: " + e.spec.id + " Scheduled -> Started (" + why + ")");
    }

    void end_event_locked(event_record& e, scenario_duration t, const std::string& how) {
        e.state = phase::removed;
        e.removed_at = t;
        e.ended = how;
        log_locked("azure: " + e.spec.id + " removed (" + how + ")");
    }

    event_record* find_locked(const std::string& id) {
        for (auto& e : events_)
            if (e.spec.id == id) return &e;
        return nullptr;
    }

    void set_gce_locked(const std::string& key, std::string value) {
        auto& slot = gce_[key];
        if (slot == value) return;
        log_locked("gce: " + key + " " + (slot.empty() ? std::string("(none)") : slot) + " -> " + value);
        slot = std::move(value);
        cv_.notify_all();
    }

    void add_fault_locked(fault_spec f) {
        fault_record r;
        r.remaining = f.count;
        log_locked("fault: " + std::string(to_string(f.what)) +
                   (f.what == fault_spec::kind::status || f.what == fault_spec::kind::body ? " " + std::to_string(f.status) : "") +
                   " on " + f.service + (f.path.empty() ? "" : " " + f.path) + " for " +
                   (f.count < 0 ? std::string("every") : std::to_string(f.count)) + " request(s)" +
                   (f.fraction < 1 ? " at fraction " + std::to_string(f.fraction) : ""));
        r.spec = std::move(f);
        faults_.push_back(std::move(r));
    }

    void log_locked(const std::string& line) {
        if (!logger_) return;
        const auto ms = now_locked().count();
        std::string t = std::to_string(ms / 1000) + ".";
        const auto frac = ms % 1000;
        t += static_cast<char>('0' + frac / 100);
        t += static_cast<char>('0' + frac / 10 % 10);
        t += static_cast<char>('0' + frac % 10);
        logger_("[t=" + t + "s] " + line);
    }

    static std::string join(const std::vector<std::string>& v) {
        std::string out;
        for (const auto& s : v) {
            if (!out.empty()) out += ", ";
            out += s;
        }
        return out;
    }

    static std::string default_description(std::string_view type, std::string_view source) {
        using forewarn::detail::iequals;
        const bool user = iequals(source, "User");
        if (iequals(type, "Freeze")) return "Virtual machine is being paused because of a memory-preserving Live Migration operation.";
        if (iequals(type, "Reboot"))
            return user ? "Virtual machine is going to be restarted as requested by authorized user."
                        : "Virtual machine is going to be restarted because of host maintenance.";
        if (iequals(type, "Redeploy"))
            return user ? "Virtual machine is going to be redeployed as requested by authorized user."
                        : "Virtual machine is going to be moved to another host because of host maintenance.";
        if (iequals(type, "Preempt")) return "Virtual machine is going to be evicted because it is a Spot virtual machine.";
        if (iequals(type, "Terminate")) return "Virtual machine is being deleted by its scale set.";
        return "Virtual machine is going to be affected by maintenance.";
    }

    static std::string target_text(std::string_view url) {
        const auto scheme = url.find("://");
        if (scheme != std::string_view::npos && scheme < url.find_first_of("/?")) {
            url.remove_prefix(scheme + 3);
            const auto slash = url.find_first_of("/?");
            url = slash == std::string_view::npos ? std::string_view("/") : url.substr(slash);
        }
        return std::string(url);
    }

    // ---- responses ----
    static emulated_response text_response(int status, std::string body, std::string type = "text/plain; charset=utf-8") {
        emulated_response r;
        r.status = status;
        r.body = std::move(body);
        r.headers.push_back({"Content-Type", std::move(type)});
        return r;
    }
    static emulated_response json_response(int status, std::string body) {
        return text_response(status, std::move(body), "application/json; charset=utf-8");
    }
    static emulated_response azure_error(int status, std::string_view message, bool with_versions = false) {
        forewarn::detail::json_writer w;
        w.begin_object();
        w.key("error");
        w.string(message);
        if (with_versions) {
            w.key("newest-versions");
            w.begin_array();
            const auto& v = azure_versions();
            for (auto it = v.rbegin(); it != v.rend() && it != v.rbegin() + 3; ++it) w.string(*it);
            w.end_array();
        }
        w.end_object();
        return json_response(status, w.str());
    }

    // Looks for a fault matching this request, consumes one unit of it, and says which it is.
    std::optional<fault_spec> take_fault_locked(const http_request& request, const std::string& path, std::string_view service) {
        for (auto it = faults_.begin(); it != faults_.end(); ++it) {
            const fault_spec& f = it->spec;
            if (f.service != "any" && f.service != service) continue;
            if (!f.path.empty() && path.find(f.path) == std::string::npos) continue;
            if (!f.method.empty() && !forewarn::detail::iequals(f.method, request.method == http_method::post ? "POST" : "GET")) continue;
            if (f.fraction < 1 && !(rng_.unit() < f.fraction)) continue;
            fault_spec hit = f;
            ++it->hits;
            if (it->remaining > 0 && --it->remaining == 0) faults_.erase(it);
            return hit;
        }
        return std::nullopt;
    }

    // Turns a fault into the directive, around the answer the service would have given.
    static void apply_fault(const fault_spec& f, emulated_response& r, logged_request& entry) {
        entry.fault = std::string(to_string(f.what));
        switch (f.what) {
        case fault_spec::kind::status:
            entry.fault += " " + std::to_string(f.status);
            r.status = f.status;
            if (r.header("Metadata-Flavor")) {
                r.body = std::to_string(f.status) + " emulated fault\n";
            } else {
                forewarn::detail::json_writer w;
                w.begin_object();
                w.key("error");
                w.string("emulated fault " + std::to_string(f.status));
                w.end_object();
                r.body = w.str();
            }
            break;
        case fault_spec::kind::delay: r.delay = f.duration; break;
        case fault_spec::kind::stall:
            r.what = emulated_response::action::stall;
            r.delay = f.duration.count() > 0 ? f.duration : (scenario_duration::max)();
            r.body.clear();
            break;
        case fault_spec::kind::empty_body:
            r.status = 200;
            r.body.clear();
            break;
        case fault_spec::kind::truncated_json:
            r.body.resize(f.bytes > 0 ? (std::min)(f.bytes, r.body.size()) : r.body.size() / 2);
            break;
        case fault_spec::kind::malformed_json:
            r.status = 200;
            r.body = "{\"DocumentIncarnation\": 7, \"Events\": [{\"EventId\": \"oops\", }";
            break;
        case fault_spec::kind::close_mid_body:
            r.what = emulated_response::action::close_mid_body;
            r.close_after = f.bytes > 0 ? (std::min)(f.bytes, r.body.size() > 0 ? r.body.size() - 1 : 0) : r.body.size() / 2;
            break;
        case fault_spec::kind::body:
            r.status = f.status;
            r.body = f.body;
            break;
        }
    }

    // ---- Azure ----
    static int version_index(const std::string& v) {
        const auto& all = azure_versions();
        for (std::size_t i = 0; i < all.size(); ++i)
            if (all[i] == v) return static_cast<int>(i);
        return -1;
    }

    emulated_response azure_locked(const http_request& request, const detail::parsed_target& t, const vm_identity& vm,
                                   logged_request& entry) {
        if (find_header(request.headers, "X-Forwarded-For"))
            return azure_error(400, "Bad request. X-Forwarded-For header is not allowed.");
        const std::string* version = t.param("api-version");
        const bool preview = version && *version == "2017-03-01" && t.path == "/metadata/scheduledevents";
        const std::string* metadata = find_header(request.headers, "Metadata");
        // 2017-08-01 enforced the header; the 2017-03-01 preview answered without it.
        if (!preview && (!metadata || !forewarn::detail::iequals(forewarn::detail::trim(*metadata), "true")))
            return azure_error(400, "Bad request. Required metadata header not specified");
        if (config_.rate_limit > 0) {
            const auto now = limiter_now_locked();
            while (!rate_window_.empty() && rate_window_.front() <= now - std::chrono::seconds(1)) rate_window_.pop_front();
            if (rate_window_.size() >= config_.rate_limit) {
                entry.fault = "rate limit";
                return azure_error(429, "Too many requests");
            }
            rate_window_.push_back(now);
        }

        emulated_response r;
        bool scheduled_events = false;
        if (t.path == "/metadata/versions") {
            if (request.method != http_method::get) return azure_error(405, "Method not allowed");
            forewarn::detail::json_writer w;
            w.begin_object();
            w.key("apiVersions");
            w.begin_array();
            std::vector<std::string> all = instance_versions();
            all.insert(all.end(), azure_versions().begin(), azure_versions().end());
            std::sort(all.begin(), all.end());
            all.erase(std::unique(all.begin(), all.end()), all.end());
            for (const auto& v : all) w.string(v);
            w.end_array();
            w.end_object();
            r = json_response(200, w.str());
        } else if (t.path == "/metadata/scheduledevents" || t.path == "/metadata/scheduledevents/") {
            if (!version) return azure_error(400, "Bad request. api-version was not specified in the request. For more information refer to aka.ms/azureimds", true);
            const int vi = version_index(*version);
            if (vi < 0) return azure_error(400, "Bad request. api-version is invalid or was not specified in the request. For more information refer to aka.ms/azureimds", true);
            scheduled_events = true;
            if (request.method == http_method::post) r = approve_locked(request, vm, vi);
            else r = json_response(200, azure_document_locked(vi));
        } else if (t.path == "/metadata/instance" || t.path.compare(0, 18, "/metadata/instance") == 0) {
            if (!version) return azure_error(400, "Bad request. api-version was not specified in the request. For more information refer to aka.ms/azureimds", true);
            const auto& iv = instance_versions();
            if (std::find(iv.begin(), iv.end(), *version) == iv.end())
                return azure_error(400, "Bad request. api-version is invalid or was not specified in the request. For more information refer to aka.ms/azureimds", true);
            if (request.method != http_method::get) return azure_error(405, "Method not allowed");
            r = instance_locked(t, vm);
        } else {
            return azure_error(404, "Not found");
        }
        if (r.status >= 400) return r;

        // The first scheduled-events call after (re-)enablement takes the enablement time.
        if (scheduled_events && !enabled_) {
            const scenario_duration now = now_locked();
            if (!enabling_) {
                enabling_ = true;
                enabled_at_ = now + config_.enablement_delay;
                log_locked("azure: enabling the service (first call) until t=" + detail::format_duration(enabled_at_));
            }
            if (now >= enabled_at_) {
                enabled_ = true;
            } else {
                r.delay = enabled_at_ - now;
                entry.fault = "enablement " + detail::format_duration(r.delay);
            }
        }
        if (auto f = take_fault_locked(request, t.path, "azure")) apply_fault(*f, r, entry);
        return r;
    }

    std::string azure_document_locked(int vi) const {
        const bool iso = vi == 0;                 // 2017-03-01: ISO-8601 NotBefore, "_" before IaaS names
        const bool has_preempt = vi >= 2;         // 2017-11-01
        const bool has_terminate = vi >= 3;       // 2019-01-01
        const bool has_description = vi >= 4;     // 2019-04-01
        const bool has_source = vi >= 5;          // 2019-08-01
        const bool has_duration = vi >= 6;       // 2020-07-01
        forewarn::detail::json_writer w;
        w.begin_object();
        w.key("DocumentIncarnation");
        w.int64(incarnation_);
        w.key("Events");
        w.begin_array();
        for (const auto& e : events_) {
            if (e.state == phase::removed) continue;
            if (!has_preempt && forewarn::detail::iequals(e.spec.type, "Preempt")) continue;
            if (!has_terminate && forewarn::detail::iequals(e.spec.type, "Terminate")) continue;
            w.begin_object();
            w.key("EventId");
            w.string(e.spec.id);
            w.key("EventStatus");
            w.string(e.state == phase::started ? "Started" : "Scheduled");
            w.key("EventType");
            w.string(e.spec.type);
            w.key("ResourceType");
            w.string(e.spec.resource_type);
            w.key("Resources");
            w.begin_array();
            for (const auto& res : e.spec.resources) w.string(iso ? "_" + res : res);
            w.end_array();
            w.key("NotBefore");
            if (e.state == phase::started) w.string("");
            else w.string(iso ? detail::format_iso8601_utc(wall_at(e.not_before)) : detail::format_rfc1123(wall_at(e.not_before)));
            if (has_description) {
                w.key("Description");
                w.string(*e.spec.description);
            }
            if (has_source) {
                w.key("EventSource");
                w.string(e.spec.source);
            }
            if (has_duration) {
                w.key("DurationInSeconds");
                w.int64(*e.spec.duration_in_seconds);
            }
            w.end_object();
        }
        w.end_array();
        w.end_object();
        return w.str();
    }

    emulated_response approve_locked(const http_request& request, const vm_identity& vm, int vi) {
        auto doc = forewarn::detail::parse_json(request.body);
        if (!doc) return azure_error(400, "Bad request. The request body is not valid JSON.");
        const auto& root = *doc;
        if (!root.IsObject()) return azure_error(400, "Bad request. The request body is not a JSON object.");
        const auto* starts = forewarn::detail::json_member(root, "StartRequests");
        if (!starts || !starts->IsArray() || starts->Empty())
            return azure_error(400, "Bad request. StartRequests must be a non-empty array.");
        for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
            const auto name = forewarn::detail::json_string_view(it->name);
            if (name == "StartRequests") continue;
            // the 2017-03-01 preview carried the incarnation beside the requests
            if (name == "DocumentIncarnation" && vi == 0 && (it->value.IsString() || it->value.IsInt64())) continue;
            return azure_error(400, "Bad request. Unexpected member " + std::string(name) + ".");
        }
        std::vector<std::string> ids;
        for (rapidjson::SizeType i = 0; i < starts->Size(); ++i) {
            const auto& item = (*starts)[i];
            const auto* id = item.IsObject() ? forewarn::detail::json_member(item, "EventId") : nullptr;
            if (!id || !id->IsString() || id->GetStringLength() == 0)
                return azure_error(400, "Bad request. Each StartRequest needs an EventId string.");
            std::string s(forewarn::detail::json_string_view(*id));
            if (!find_locked(s)) return azure_error(400, "Bad request. Unknown EventId " + s + ".");
            ids.push_back(std::move(s));
        }
        bool changed = false;
        for (const auto& id : ids) {
            auto* e = find_locked(id);
            if (e->state != phase::scheduled) continue;  // approving twice, or another VM did: still 200
            e->approved_by = vm.name;
            start_event_locked(*e, now_locked(), "approved by " + vm.name);
            changed = true;
        }
        if (changed) bump_locked();
        emulated_response r;
        r.status = 200;
        return r;
    }

    emulated_response instance_locked(const detail::parsed_target& t, const vm_identity& vm) const {
        std::vector<std::pair<std::string, std::string>> compute{
            {"azEnvironment", "AzurePublicCloud"},
            {"location", vm.location},
            {"name", vm.name},
            {"osType", "Linux"},
            {"resourceGroupName", vm.resource_group},
            {"resourceId", "/subscriptions/" + vm.subscription_id + "/resourceGroups/" + vm.resource_group +
                               "/providers/Microsoft.Compute/" +
                               (vm.scale_set.empty() ? "virtualMachines/" + vm.name
                                                     : "virtualMachineScaleSets/" + vm.scale_set + "/virtualMachines/" +
                                                           vm.name.substr(vm.name.rfind('_') == std::string::npos ? 0 : vm.name.rfind('_') + 1))},
            {"subscriptionId", vm.subscription_id},
            {"vmId", vm.vm_id},
            {"vmScaleSetName", vm.scale_set},
            {"vmSize", vm.vm_size},
            {"zone", vm.zone},
        };
        const std::string* format = t.param("format");
        const bool text = format && *format == "text";
        if (format && *format != "text" && *format != "json") return azure_error(400, "Bad request. Unknown format.");
        auto write_compute = [&](forewarn::detail::json_writer& w) {
            w.begin_object();
            for (const auto& kv : compute) {
                w.key(kv.first);
                w.string(kv.second);
            }
            w.end_object();
        };
        std::string rest = t.path.substr(std::string("/metadata/instance").size());
        while (!rest.empty() && rest.back() == '/') rest.pop_back();
        forewarn::detail::json_writer w;
        if (rest.empty()) {
            if (text) return azure_error(400, "Bad request. format=text is only for leaf nodes.");
            w.begin_object();
            w.key("compute");
            write_compute(w);
            w.key("network");
            w.begin_object();
            w.key("interface");
            w.begin_array();
            w.end_array();
            w.end_object();
            w.end_object();
        } else if (rest == "/compute") {
            if (text) return azure_error(400, "Bad request. format=text is only for leaf nodes.");
            write_compute(w);
        } else if (rest.compare(0, 9, "/compute/") == 0) {
            const std::string key = rest.substr(9);
            for (const auto& kv : compute)
                if (kv.first == key) {
                    if (text) return text_response(200, kv.second);
                    w.string(kv.second);
                    return json_response(200, w.str());
                }
            return azure_error(404, "Not found");
        } else {
            return azure_error(404, "Not found");
        }
        return json_response(200, w.str());
    }

    // ---- GCE ----
    std::map<std::string, std::string> gce_leaves_locked(const vm_identity& vm) const {
        std::map<std::string, std::string> leaves;
        leaves["instance/name"] = vm.name;
        leaves["instance/id"] = vm.gce_id;
        leaves["instance/hostname"] = vm.hostname.empty() ? vm.name + ".c.forewarn-test.internal" : vm.hostname;
        leaves["instance/zone"] = vm.gce_zone;
        leaves["instance/machine-type"] = vm.machine_type;
        for (const auto& kv : gce_) leaves[kv.first] = kv.second;
        return leaves;
    }

    static bool is_directory(const std::map<std::string, std::string>& leaves, const std::string& prefix) {
        if (prefix.empty()) return true;
        const auto it = leaves.lower_bound(prefix);
        return it != leaves.end() && it->first.compare(0, prefix.size(), prefix) == 0;
    }

    // The directory as GCE's recursive JSON: nested objects, camelCase keys.
    static void write_directory(forewarn::detail::json_writer& w, const std::map<std::string, std::string>& leaves,
                                const std::string& prefix) {
        w.begin_object();
        std::string last_dir;
        for (auto it = leaves.lower_bound(prefix); it != leaves.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
            const std::string rest = it->first.substr(prefix.size());
            const auto slash = rest.find('/');
            if (slash == std::string::npos) {
                w.key(detail::camel_case(rest));
                w.string(it->second);
            } else {
                const std::string dir = rest.substr(0, slash);
                if (dir == last_dir) continue;
                last_dir = dir;
                w.key(detail::camel_case(dir));
                write_directory(w, leaves, prefix + dir + "/");
            }
        }
        w.end_object();
    }

    // What an ETag covers: a leaf's value, or a directory's recursive JSON.
    static std::optional<std::string> gce_content(const std::map<std::string, std::string>& leaves, const std::string& key) {
        if (key.empty() || key.back() == '/') {
            if (!is_directory(leaves, key)) return std::nullopt;
            forewarn::detail::json_writer w;
            write_directory(w, leaves, key);
            return w.str();
        }
        const auto it = leaves.find(key);
        if (it == leaves.end()) return std::nullopt;
        return it->second;
    }

    emulated_response gce_error(int status, std::string body) const {
        auto r = text_response(status, std::move(body));
        r.headers.push_back({"Metadata-Flavor", "Google"});
        return r;
    }

    emulated_response gce_locked(const http_request& request, const detail::parsed_target& t, const vm_identity& vm,
                                 logged_request& entry, std::unique_lock<std::mutex>& lock, const std::atomic<bool>* cancelled) {
        if (find_header(request.headers, "X-Forwarded-For")) return gce_error(403, "Request had an X-Forwarded-For header.\n");
        const std::string* flavor = find_header(request.headers, "Metadata-Flavor");
        if (!flavor || forewarn::detail::trim(*flavor) != "Google") return gce_error(403, "Missing Metadata-Flavor:Google header.\n");
        if (request.method != http_method::get) return gce_error(405, "Method not allowed.\n");

        std::string key;
        if (t.path == "/computeMetadata/v1" || t.path == "/computeMetadata/v1/") key.clear();
        else if (t.path.compare(0, 20, "/computeMetadata/v1/") == 0) key = t.path.substr(20);
        else if (t.path == "/computeMetadata" || t.path == "/computeMetadata/") return gce_listing_response("v1/\n");
        else return gce_error(404, "Not found.\n");

        auto flag = [&](const char* name, bool& out) -> bool {
            const std::string* v = t.param(name);
            if (!v) return true;
            if (*v == "true" || *v == "True" || *v == "1") out = true;
            else if (*v == "false" || *v == "False" || *v == "0" || v->empty()) out = false;
            else return false;
            return true;
        };
        bool recursive = false, wait = false;
        if (!flag("recursive", recursive) || !flag("wait_for_change", wait)) return gce_error(400, "Invalid request.\n");
        std::string alt;
        if (const auto* a = t.param("alt")) {
            if (*a != "json" && *a != "text") return gce_error(400, "Invalid alt parameter.\n");
            alt = *a;
        }
        std::optional<std::int64_t> timeout_sec;
        if (const auto* ts = t.param("timeout_sec")) {
            std::int64_t v = 0;
            if (ts->empty() || ts->size() > 9) return gce_error(400, "Invalid timeout_sec: an integer number of seconds.\n");
            for (const char c : *ts) {
                if (c < '0' || c > '9') return gce_error(400, "Invalid timeout_sec: an integer number of seconds.\n");
                v = v * 10 + (c - '0');
            }
            timeout_sec = v;
        }
        const std::string* last_etag = t.param("last_etag");

        auto leaves = gce_leaves_locked(vm);
        if (!key.empty() && key.back() != '/' && !leaves.count(key) && is_directory(leaves, key + "/")) {
            // a directory named without its slash: the real server redirects
            emulated_response r = gce_error(301, "");
            std::string location = t.path + "/";
            const std::string full = target_text(request.url);
            const auto q = full.find('?');
            if (q != std::string::npos) location += full.substr(q);
            r.headers.push_back({"Location", location});
            return r;
        }
        auto content = gce_content(leaves, key);
        if (!content) return gce_error(404, "Not found.\n");
        if (key == "instance/maintenance-event" || ((key.empty() || key == "instance/") && recursive))
            gce_maintenance_read_ = true;

        // Faults come before the hang: a 503 answers at once, as the real server's would.
        std::optional<fault_spec> fault = take_fault_locked(request, t.path, "gce");
        if (wait && (!fault || fault->what == fault_spec::kind::delay)) {
            const std::string base = last_etag ? *last_etag : detail::content_etag(*content);
            const scenario_duration start = now_locked();
            std::optional<scenario_duration> deadline;
            if (timeout_sec) deadline = start + std::chrono::seconds(*timeout_sec);
            std::optional<scenario_duration> request_deadline;
            if (request.timeout.count() > 0 && request.timeout < std::chrono::hours(24 * 365))
                request_deadline = start + request.timeout;
            struct hanging_guard {
                scenario& self;
                explicit hanging_guard(scenario& s) : self(s) {
                    ++self.hanging_;
                    self.cv_.notify_all();
                }
                ~hanging_guard() { --self.hanging_; }
                hanging_guard(const hanging_guard&) = delete;
                hanging_guard& operator=(const hanging_guard&) = delete;
            } guard(*this);
            for (;;) {
                if (detail::content_etag(*content) != base) break;
                if (cancelled && cancelled->load()) {
                    emulated_response r;
                    r.what = emulated_response::action::cancelled;
                    return r;
                }
                if (shutdown_) return gce_error(503, "Server shutting down.\n");
                const scenario_duration now = now_locked();
                if (deadline && now >= *deadline) break;
                if (request_deadline && now >= *request_deadline) {
                    emulated_response r;
                    r.what = emulated_response::action::timed_out;
                    return r;
                }
                std::optional<scenario_duration> until = deadline;
                if (request_deadline && (!until || *request_deadline < *until)) until = request_deadline;
                wait_locked(lock, until);
                sync_locked();
                leaves = gce_leaves_locked(vm);
                content = gce_content(leaves, key);
                if (!content) return gce_error(404, "Not found.\n");  // deleted while waiting
            }
        }

        emulated_response r;
        const std::string etag = detail::content_etag(*content);
        const bool directory = key.empty() || key.back() == '/';
        if (!directory) {
            if (alt == "json") {
                forewarn::detail::json_writer w;
                w.string(*content);
                r = text_response(200, w.str(), "application/json");
            } else {
                r = text_response(200, *content, "application/text");
            }
        } else if (recursive) {
            if (alt == "text") {
                std::string body;
                for (auto it = leaves.lower_bound(key); it != leaves.end() && it->first.compare(0, key.size(), key) == 0; ++it)
                    body += it->first.substr(key.size()) + " " + it->second + "\n";
                r = text_response(200, std::move(body), "application/text");
            } else {
                r = text_response(200, *content, "application/json");
            }
        } else {
            std::vector<std::string> children;
            for (auto it = leaves.lower_bound(key); it != leaves.end() && it->first.compare(0, key.size(), key) == 0; ++it) {
                const std::string rest = it->first.substr(key.size());
                const auto slash = rest.find('/');
                std::string child = slash == std::string::npos ? rest : rest.substr(0, slash + 1);
                if (children.empty() || children.back() != child) children.push_back(std::move(child));
            }
            if (alt == "json") {
                forewarn::detail::json_writer w;
                w.begin_array();
                for (const auto& c : children) w.string(c);
                w.end_array();
                r = text_response(200, w.str(), "application/json");
            } else {
                std::string body;
                for (const auto& c : children) body += c + "\n";
                r = text_response(200, std::move(body), "application/text");
            }
        }
        r.headers.push_back({"Metadata-Flavor", "Google"});
        r.headers.push_back({"ETag", etag});
        r.headers.push_back({"Server", "Metadata Server for VM"});
        if (fault) apply_fault(*fault, r, entry);
        return r;
    }

    emulated_response gce_listing_response(std::string body) const {
        auto r = text_response(200, std::move(body), "application/text");
        r.headers.push_back({"Metadata-Flavor", "Google"});
        return r;
    }

    // ---- control API (/emulator/v1/...) ----
    emulated_response control_error(int status, const std::string& message, const std::string& field = {}) const {
        forewarn::detail::json_writer w;
        w.begin_object();
        w.key("error");
        w.string(message);
        if (!field.empty()) {
            w.key("field");
            w.string(field);
        }
        w.end_object();
        return json_response(status, w.str());
    }
    emulated_response control_ok() const { return json_response(200, "{\"ok\":true}"); }

    emulated_response control_locked(const http_request& request, const detail::parsed_target& t) {
        const std::string route = t.path.size() > 13 ? t.path.substr(13) : std::string();
        const bool get = request.method == http_method::get;
        std::string method_name = get ? "GET" : "POST";
        if (const auto* m = find_header(request.headers, "X-Http-Method")) method_name = *m;  // DELETE through the transport
        const bool del = method_name == "DELETE";

        auto body_json = [&]() { return forewarn::detail::parse_json(request.body.empty() ? std::string_view("{}") : std::string_view(request.body)); };

        if (route == "state" && get) return json_response(200, state_json_locked());
        if (route == "requests") {
            if (del) {
                log_.clear();
                return control_ok();
            }
            if (!get) return control_error(405, "GET or DELETE");
            std::uint64_t since = 0;
            if (const auto* s = t.param("since")) since = std::strtoull(s->c_str(), nullptr, 10);
            return json_response(200, requests_json_locked(since));
        }
        if (get) return control_error(404, "unknown control route " + t.path);
        if (route == "reset") {
            restart_locked();
            cv_.notify_all();
            return control_ok();
        }
        if (route == "advance") {
            auto doc = body_json();
            if (!doc) return control_error(400, doc.error().describe());
            const auto* by = doc->IsObject() ? forewarn::detail::json_member(*doc, "by") : nullptr;
            if (!by) return control_error(400, "expected {\"by\": \"15m\"}", "by");
            auto d = detail::json_duration(*by, "by");
            if (!d) return control_error(400, d.error().describe(), "by");
            if (real_) offset_ += *d;
            else manual_now_ += *d;
            sync_locked();
            cv_.notify_all();
            return json_response(200, "{\"time_ms\":" + std::to_string(now_locked().count()) + "}");
        }
        if (route == "faults") {
            if (del) {
                faults_.clear();
                log_locked("faults cleared");
                return control_ok();
            }
            auto doc = body_json();
            if (!doc) return control_error(400, doc.error().describe());
            auto f = detail::parse_fault(*doc, "fault");
            if (!f) return control_error(400, f.error().describe(), f.error().field);
            add_fault_locked(std::move(*f));
            return control_ok();
        }
        if (route == "azure/events" && !del) {
            auto doc = body_json();
            if (!doc) return control_error(400, doc.error().describe());
            auto e = detail::parse_event_spec(*doc, "event");
            if (!e) return control_error(400, e.error().describe(), e.error().field);
            scenario_duration at{0};
            if (const auto* a = forewarn::detail::json_member(*doc, "at")) {
                auto d = detail::json_duration(*a, "at");
                if (!d) return control_error(400, d.error().describe(), "at");
                at = *d;
            }
            std::string id;
            if (at.count() == 0) {
                id = add_event_locked(std::move(*e), now_locked());
                bump_locked();
            } else {
                if (e->id.empty()) e->id = next_event_id_locked();
                id = e->id;
                scenario_step s;
                s.at = now_locked() + at;
                s.what = scenario_step::kind::azure_event;
                s.event = std::move(*e);
                insert_pending_locked(std::move(s));
            }
            forewarn::detail::json_writer w;
            w.begin_object();
            w.key("EventId");
            w.string(id);
            w.end_object();
            return json_response(200, w.str());
        }
        if (route.compare(0, 13, "azure/events/") == 0) {
            std::string id = route.substr(13);
            std::string action = del ? "remove" : "";
            const auto slash = id.find('/');
            if (slash != std::string::npos) {
                action = id.substr(slash + 1);
                id.erase(slash);
            }
            auto* e = find_locked(id);
            if (!e) return control_error(404, "no event " + id);
            if (action == "cancel") {
                if (e->state != phase::scheduled) return control_error(409, "event " + id + " is not Scheduled");
                end_event_locked(*e, now_locked(), "cancelled");
            } else if (action == "remove" || action == "complete") {
                if (e->state == phase::removed) return control_error(409, "event " + id + " has ended already");
                end_event_locked(*e, now_locked(), e->state == phase::scheduled ? "cancelled" : "completed");
            } else if (action == "start") {
                if (e->state != phase::scheduled) return control_error(409, "event " + id + " is not Scheduled");
                e->approved_by = "(control)";
                start_event_locked(*e, now_locked(), "started through the control API");
            } else {
                return control_error(404, "unknown action " + action + " (cancel, complete, start)");
            }
            bump_locked();
            return control_ok();
        }
        if (route == "gce") {
            auto doc = body_json();
            if (!doc) return control_error(400, doc.error().describe());
            if (!doc->IsObject()) return control_error(400, "expected an object of key: value");
            scenario_step s;
            s.what = scenario_step::kind::gce_set;
            const rapidjson::Value& obj = *doc;
            for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
                std::string key(forewarn::detail::json_string_view(it->name));
                if (it->value.IsNull()) s.gce_values.emplace_back(std::move(key), std::nullopt);
                else if (it->value.IsString()) s.gce_values.emplace_back(std::move(key), std::string(forewarn::detail::json_string_view(it->value)));
                else return control_error(400, "values are strings (or null to delete)", key);
            }
            apply_step_locked(s, now_locked());
            cv_.notify_all();
            return control_ok();
        }
        if (route == "steps") {
            auto doc = body_json();
            if (!doc) return control_error(400, doc.error().describe());
            std::vector<scenario_step> steps;
            if (doc->IsArray()) {
                for (rapidjson::SizeType i = 0; i < doc->Size(); ++i)
                    if (auto r = detail::parse_steps_into((*doc)[i], "steps[" + std::to_string(i) + "]", steps); !r)
                        return control_error(400, r.error().describe(), r.error().field);
            } else if (auto r = detail::parse_steps_into(*doc, "step", steps); !r) {
                return control_error(400, r.error().describe(), r.error().field);
            }
            const scenario_duration now = now_locked();
            for (auto& s : steps) {
                s.at += now;
                insert_pending_locked(std::move(s));
            }
            sync_locked();
            cv_.notify_all();
            return control_ok();
        }
        return control_error(404, "unknown control route " + t.path);
    }

    std::string state_json_locked() const {
        forewarn::detail::json_writer w;
        w.begin_object();
        w.key("name");
        w.string(config_.name);
        w.key("time_ms");
        w.int64(now_locked().count());
        w.key("wall_time");
        w.string(detail::format_iso8601_utc(wall_at(now_locked())));
        w.key("speed");
        w.number(real_ ? speed_ : 0.0);
        w.key("DocumentIncarnation");
        w.int64(incarnation_);
        w.key("enabled");
        w.boolean(enabled_);
        w.key("hanging");
        w.int64(static_cast<std::int64_t>(hanging_));
        w.key("events");
        w.begin_array();
        for (const auto& e : events_) {
            w.begin_object();
            w.key("EventId");
            w.string(e.spec.id);
            w.key("EventType");
            w.string(e.spec.type);
            w.key("state");
            w.string(e.state == phase::scheduled ? "Scheduled" : e.state == phase::started ? "Started" : "Removed");
            w.key("Resources");
            w.begin_array();
            for (const auto& r : e.spec.resources) w.string(r);
            w.end_array();
            w.key("NotBefore");
            w.string(detail::format_rfc1123(wall_at(e.not_before)));
            w.key("appeared_ms");
            w.int64(e.appeared.count());
            if (e.state != phase::scheduled) {
                w.key("started_ms");
                w.int64(e.started_at.count());
            }
            if (e.state == phase::removed) {
                w.key("removed_ms");
                w.int64(e.removed_at.count());
                w.key("ended");
                w.string(e.ended);
            }
            w.key("approved_by");
            w.string(e.approved_by);
            w.end_object();
        }
        w.end_array();
        w.key("gce");
        w.begin_object();
        const auto leaves = gce_leaves_locked(config_.vms.front());
        for (const auto& kv : leaves) {
            w.key(kv.first);
            w.begin_object();
            w.key("value");
            w.string(kv.second);
            w.key("etag");
            w.string(detail::content_etag(kv.second));
            w.end_object();
        }
        w.end_object();
        w.key("faults");
        w.begin_array();
        for (const auto& f : faults_) {
            w.begin_object();
            w.key("kind");
            w.string(to_string(f.spec.what));
            w.key("service");
            w.string(f.spec.service);
            w.key("remaining");
            w.int64(f.remaining);
            w.key("hits");
            w.uint64(f.hits);
            w.end_object();
        }
        w.end_array();
        w.key("pending_steps");
        w.uint64(pending_.size());
        w.key("requests");
        w.uint64(seq_);
        w.end_object();
        return w.str();
    }

    std::string requests_json_locked(std::uint64_t since) const {
        forewarn::detail::json_writer w;
        w.begin_object();
        w.key("next");
        w.uint64(seq_ + 1);
        w.key("requests");
        w.begin_array();
        for (const auto& r : log_) {
            if (r.seq < since) continue;
            w.begin_object();
            w.key("seq");
            w.uint64(r.seq);
            w.key("time_ms");
            w.int64(r.at.count());
            w.key("method");
            w.string(r.method == http_method::post ? "POST" : "GET");
            w.key("target");
            w.string(detail::sanitize_utf8(r.target));
            w.key("service");
            w.string(r.service);
            w.key("vm");
            w.string(detail::sanitize_utf8(r.vm));
            w.key("status");
            w.int64(r.status);
            w.key("fault");
            w.string(r.fault);
            w.key("headers");
            w.begin_array();
            for (const auto& h : r.headers) {
                w.begin_array();
                w.string(detail::sanitize_utf8(h.name));
                w.string(detail::sanitize_utf8(h.value));
                w.end_array();
            }
            w.end_array();
            w.key("body");
            w.string(detail::sanitize_utf8(r.body));
            w.end_object();
        }
        w.end_array();
        w.end_object();
        // bodies and header values from the wire may not be valid UTF-8; the writer refuses them
        if (!w.complete()) return "{\"next\":" + std::to_string(seq_ + 1) + ",\"requests\":[],\"error\":\"a logged request is not valid UTF-8\"}";
        return w.str();
    }

    scenario_config config_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    bool real_ = false;
    double speed_ = 1.0;
    scenario_duration manual_now_{0};
    scenario_duration offset_{0};
    std::chrono::steady_clock::time_point real_start_{};
    std::vector<event_record> events_;
    std::deque<scenario_step> pending_;
    std::map<std::string, std::string> gce_;
    std::vector<fault_record> faults_;
    std::deque<logged_request> log_;
    std::deque<std::chrono::milliseconds> rate_window_;
    std::uint64_t seq_ = 0;
    std::int64_t incarnation_ = 1;
    bool enabled_ = true;
    bool enabling_ = false;
    scenario_duration enabled_at_{0};
    std::uint64_t id_counter_ = 0;
    detail::splitmix64 rng_{1};
    bool shutdown_ = false;
    bool gce_maintenance_read_ = false;
    bool skipped_warning_ = false;
    std::size_t hanging_ = 0;
    std::function<void(const std::string&)> logger_;
};

}  // namespace testing
FOREWARN_END_NAMESPACE
