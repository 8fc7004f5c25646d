// SPDX-License-Identifier: MIT
#pragma once

// The scenario's vocabulary: who the VMs are, what happens to them and when, and what the engine
// hands a front end for one request. Plain structs, shared by every part of the emulator.

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
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

/// The minimum notice Azure gives for an event type: Freeze and Reboot 15 min, Redeploy 10 min,
/// Preempt 30 s, Terminate 5 min (the scale set's notBeforeTimeout can add up to 15).
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
    /// a service's name ("azure", "gce", "aws", "aws-autoscaling", "alibaba", "tencent") or "any" (the
    /// control API is never faulted)
    std::string service = "any";
    std::string path;             ///< only requests whose path contains this ("" any)
    std::string method;           ///< "GET", "POST", "PUT" or "" (any)
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
        aws,                ///< an AWS change: the control route `route` ("aws/spot", ...) with `route_body`
        alibaba,            ///< an Alibaba change: `route` ("alibaba/spot") with `route_body`
        tencent,            ///< a Tencent change: `route` ("tencent/spot") with `route_body`
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
    /// aws, alibaba, tencent: the service's control route the step plays ("aws/spot", "aws/events",
    /// "aws/events/ID/complete", "alibaba/spot", ...), and its JSON body.
    std::string route;
    std::string route_body;
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

/// An Azure event as the emulated service holds it now (scenario::azure_event()): what a test
/// asserts on, typed.
struct azure_event_state {
    enum class phase { scheduled, started, removed };
    std::string id;
    std::string type;                   ///< EventType as announced
    phase state = phase::scheduled;
    std::vector<std::string> resources;
    std::chrono::system_clock::time_point not_before;  ///< wall time
    std::string approved_by;            ///< the VM whose approval started it, "(scenario)", "(control)", or ""
    std::string ended;                  ///< "completed" or "cancelled" once removed, else ""
    scenario_duration appeared{0}, started_at{0}, removed_at{0};  ///< scenario time
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
    std::string service;  ///< the service's name ("azure", "gce", "aws", ...), "control" or "other"
    std::string vm;
    std::string fault;    ///< the fault applied, "" when none
};

}  // namespace testing

namespace detail {

/// A duration as scenario files write it: "15m", "30s", "500ms", "1h30m", "2d", or a bare
/// number of seconds ("1.5"). Negative or malformed text gives nothing.
inline std::optional<std::chrono::milliseconds> emulator_parse_duration(std::string_view s) {
    if (s.empty()) return std::nullopt;
    double total_ms = 0;
    std::size_t i = 0;
    bool any = false;
    while (i < s.size()) {
        double value = 0, scale = 0;
        bool digits = false;
        while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) {
            if (s[i] == '.') {
                if (scale != 0) return std::nullopt;
                scale = 1;
            } else {
                value = value * 10 + (s[i] - '0');
                if (scale != 0) scale *= 10;
                digits = true;
            }
            ++i;
        }
        if (!digits) return std::nullopt;
        if (scale != 0) value /= scale;
        std::size_t j = i;
        while (j < s.size() && s[j] >= 'a' && s[j] <= 'z') ++j;
        const std::string_view unit = s.substr(i, j - i);
        double per = 0;
        if (unit.empty()) {
            if (any || j != s.size()) return std::nullopt;  // a bare number stands alone
            per = 1000;
        } else if (unit == "ms") per = 1;
        else if (unit == "s") per = 1000;
        else if (unit == "m" || unit == "min") per = 60000;
        else if (unit == "h") per = 3600000;
        else if (unit == "d") per = 86400000;
        else return std::nullopt;
        total_ms += value * per;
        any = true;
        i = j;
    }
    if (total_ms > 1e15) return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::int64_t>(total_ms + 0.5));
}

/// "15m", "7s", "1500ms": the shortest exact spelling, for logs and the state document.
inline std::string emulator_format_duration(std::chrono::milliseconds d) {
    const auto ms = d.count();
    if (ms != 0 && ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
    if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

}  // namespace detail
FOREWARN_END_NAMESPACE
