// SPDX-License-Identifier: MIT
#pragma once

// Azure IMDS as the emulator plays it: Scheduled Events (events going Scheduled -> Started ->
// removed, DocumentIncarnation, approvals, the api-version shapes, the slow first call, the rate
// limit) and the instance metadata a client reads its own name from. Rules: docs/emulator.md.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/faults.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/scenario_file.hpp>
#include <forewarn/testing/emulator/service.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Scheduled-events api-versions, oldest first. Deliberately an independent copy of the client's
/// list (azure/parse.hpp): the emulator is the oracle the client is tested against, so it must
/// not accept a version just because the client sends it.
inline const std::vector<std::string>& emulator_azure_versions() {
    static const std::vector<std::string> v{"2017-03-01", "2017-08-01", "2017-11-01", "2019-01-01",
                                            "2019-04-01", "2019-08-01", "2020-07-01"};
    return v;
}

/// Instance-metadata api-versions accepted on /metadata/instance (a subset of IMDS's).
inline const std::vector<std::string>& emulator_instance_versions() {
    static const std::vector<std::string> v{
        "2017-03-01", "2017-04-02", "2017-08-01", "2017-12-01", "2018-02-01", "2018-04-02", "2018-10-01",
        "2019-02-01", "2019-03-11", "2019-04-30", "2019-06-01", "2019-06-04", "2019-08-01", "2019-08-15",
        "2019-11-01", "2020-06-01", "2020-07-15", "2020-09-01", "2020-10-01", "2020-12-01", "2021-01-01",
        "2021-02-01", "2021-03-01", "2021-05-01", "2021-08-01", "2021-10-01", "2021-11-01", "2021-11-15",
        "2021-12-13", "2023-07-01"};
    return v;
}

/// The emulated Azure IMDS: everything under /metadata/, its control routes under azure/.
class emulator_azure final : public emulator_service {
public:
    using duration = testing::scenario_duration;

    explicit emulator_azure(emulator_engine& engine) : engine_(engine) {}

    std::string_view name() const noexcept override { return "azure"; }
    bool serves(std::string_view path) const noexcept override {
        return path == "/metadata" || path.compare(0, 10, "/metadata/") == 0;
    }

    // ---- what tests and the control API do to it (the caller has synced the engine) ----

    /// Announces an event now and returns its EventId.
    std::string announce(testing::azure_event_spec spec) {
        std::string id = add_event(std::move(spec), engine_.timeline().now());
        bump();
        return id;
    }
    /// Azure cancels a Scheduled event (it disappears without starting). False when not Scheduled.
    bool cancel(const std::string& id) {
        auto* e = find(id);
        if (!e || e->state != phase::scheduled) return false;
        end_event(*e, engine_.timeline().now(), "cancelled");
        bump();
        return true;
    }
    /// Ends an event now (cancelled when Scheduled, completed when Started). False when gone already.
    bool remove(const std::string& id) {
        auto* e = find(id);
        if (!e || e->state == phase::removed) return false;
        end_event(*e, engine_.timeline().now(), e->state == phase::scheduled ? "cancelled" : "completed");
        bump();
        return true;
    }
    std::int64_t incarnation() const noexcept { return incarnation_; }

    // ---- emulator_service ----

    void restart() override {
        events_.clear();
        rate_window_.clear();
        incarnation_ = engine_.config().initial_incarnation;
        enabled_ = engine_.config().enablement_delay.count() == 0;
        enabled_at_ = duration(0);
        enabling_ = false;
        id_counter_ = 0;
        changed_ = false;
    }

    std::optional<duration> next_transition() const override {
        std::optional<duration> next;
        for (const auto& e : events_) {
            const std::optional<duration> t = e.state == phase::scheduled ? std::optional<duration>(e.not_before)
                                              : e.state == phase::started ? std::optional<duration>(e.removed_at)
                                                                          : std::nullopt;
            if (t && (!next || *t < *next)) next = t;
        }
        return next;
    }

    bool apply_step(const testing::scenario_step& s, duration t) override {
        using kind = testing::scenario_step::kind;
        switch (s.what) {
        case kind::azure_event:
            add_event(s.event, t);
            changed_ = true;
            return true;
        case kind::cancel:
        case kind::complete: {
            auto* e = find(s.id);
            if (!e || e->state == phase::removed) {
                engine_.log("azure: step on unknown or ended event " + s.id + " ignored");
            } else if (s.what == kind::cancel && e->state != phase::scheduled) {
                engine_.log("azure: cannot cancel " + s.id + ": already Started");
            } else {
                end_event(*e, t, e->state == phase::scheduled ? "cancelled" : "completed");
                changed_ = true;
            }
            return true;
        }
        case kind::approve:
            if (auto* e = find(s.id); e && e->state == phase::scheduled) {
                e->approved_by = "(scenario)";
                start_event(*e, t, "approved by the scenario");
                changed_ = true;
            }
            return true;
        case kind::service_reenabled:
            // The service was disabled (24 h without a request) and comes back: the first call is
            // slow again and DocumentIncarnation starts over (this instant's change adds the one).
            incarnation_ = s.incarnation - 1;
            enabled_ = engine_.config().enablement_delay.count() == 0;
            enabling_ = false;
            engine_.log("azure: service re-enabled, DocumentIncarnation starts over at " + std::to_string(s.incarnation));
            changed_ = true;
            return true;
        default: return false;
        }
    }

    // DocumentIncarnation grows by one per instant at which the Events array changed.
    void reach(duration t) override {
        for (auto& e : events_) {
            if (e.state == phase::scheduled && e.not_before <= t) {
                start_event(e, t, "NotBefore passed");
                changed_ = true;
            } else if (e.state == phase::started && e.removed_at <= t) {
                end_event(e, t, "completed");
                changed_ = true;
            }
        }
        if (changed_) bump();
    }

    testing::emulated_response handle(emulator_request& req) override {
        const http_request& request = req.http;
        const emulator_target& t = req.target;
        if (find_header(request.headers, "X-Forwarded-For"))
            return error_response(400, "Bad request. X-Forwarded-For header is not allowed.");
        const std::string* version = t.param("api-version");
        const bool preview = version && *version == "2017-03-01" && t.path == "/metadata/scheduledevents";
        const std::string* metadata = find_header(request.headers, "Metadata");
        // 2017-08-01 enforced the header; the 2017-03-01 preview answered without it.
        if (!preview && (!metadata || !iequals(trim(*metadata), "true")))
            return error_response(400, "Bad request. Required metadata header not specified");
        if (const unsigned limit = engine_.config().rate_limit; limit > 0) {
            const auto now = engine_.timeline().limiter_now();
            // IMDS limits each VM: every VM of the scenario has its own window.
            auto& window = rate_window_[req.vm->name];
            while (!window.empty() && window.front() <= now - std::chrono::seconds(1)) window.pop_front();
            if (window.size() >= limit) {
                req.entry.fault = "rate limit";
                return error_response(429, "Too many requests");
            }
            window.push_back(now);
        }

        static constexpr const char* no_version =
            "Bad request. api-version was not specified in the request. For more information refer to aka.ms/azureimds";
        static constexpr const char* bad_version =
            "Bad request. api-version is invalid or was not specified in the request. For more information refer to aka.ms/azureimds";
        testing::emulated_response r;
        bool scheduled_events = false;
        if (t.path == "/metadata/versions") {
            if (request.method != http_method::get) return error_response(405, "Method not allowed");
            r = emulator_json_response(200, versions_document());
        } else if (t.path == "/metadata/scheduledevents" || t.path == "/metadata/scheduledevents/") {
            if (!version) return error_response(400, no_version, true);
            const int vi = version_index(*version);
            if (vi < 0) return error_response(400, bad_version, true);
            scheduled_events = true;
            if (request.method == http_method::post) r = approve(request, *req.vm, vi);
            else if (request.method == http_method::get) r = emulator_json_response(200, document(vi));
            else return error_response(405, "Method not allowed");
        } else if (t.path.compare(0, 18, "/metadata/instance") == 0) {
            if (!version) return error_response(400, no_version, true);
            const auto& iv = emulator_instance_versions();
            if (std::find(iv.begin(), iv.end(), *version) == iv.end()) return error_response(400, bad_version, true);
            if (request.method != http_method::get) return error_response(405, "Method not allowed");
            r = instance(t, *req.vm);
        } else {
            return error_response(404, "Not found");
        }
        if (r.status >= 400) return r;

        // The first scheduled-events call after (re-)enablement takes the enablement time.
        if (scheduled_events && !enabled_) {
            const duration now = engine_.timeline().now();
            if (!enabling_) {
                enabling_ = true;
                enabled_at_ = now + engine_.config().enablement_delay;
                engine_.log("azure: enabling the service (first call) until t=" + emulator_format_duration(enabled_at_));
            }
            if (now >= enabled_at_) {
                enabled_ = true;
            } else {
                r.delay = enabled_at_ - now;
                req.entry.fault = "enablement " + emulator_format_duration(r.delay);
            }
        }
        if (auto f = engine_.take_fault(req)) emulator_faults::apply(*f, r, req.entry);
        return r;
    }

    std::optional<testing::emulated_response> control(const std::string& route, const std::string& method,
                                                      const emulator_request& req) override {
        if (route == "azure/events" && method != "GET" && method != "DELETE") return add_from_control(req);
        if (route.compare(0, 13, "azure/events/") == 0 && method != "GET") return act_from_control(route.substr(13), method);
        return std::nullopt;
    }

    void write_state(json_writer& w) const override {
        const emulator_timeline& time = engine_.timeline();
        w.key("DocumentIncarnation");
        w.int64(incarnation_);
        w.key("enabled");
        w.boolean(enabled_);
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
            w.string(format_rfc1123(time.wall_at(e.not_before)));
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
    }

    /// Every event announced so far, typed (the same facts as write_state).
    std::vector<testing::azure_event_state> events() const {
        std::vector<testing::azure_event_state> out;
        out.reserve(events_.size());
        for (const auto& e : events_) {
            testing::azure_event_state st;
            st.id = e.spec.id;
            st.type = e.spec.type;
            st.state = e.state == phase::scheduled ? testing::azure_event_state::phase::scheduled
                       : e.state == phase::started ? testing::azure_event_state::phase::started
                                                   : testing::azure_event_state::phase::removed;
            st.resources = e.spec.resources;
            st.not_before = engine_.timeline().wall_at(e.not_before);
            st.approved_by = e.approved_by;
            st.ended = e.ended;
            st.appeared = e.appeared;
            st.started_at = e.started_at;
            st.removed_at = e.removed_at;
            out.push_back(std::move(st));
        }
        return out;
    }

private:
    enum class phase { scheduled, started, removed };
    struct event_record {
        testing::azure_event_spec spec;
        phase state = phase::scheduled;
        duration appeared{0};
        duration not_before{0};
        duration started_at{0};
        duration removed_at{0};
        std::string approved_by;
        std::string ended;  // "completed" | "cancelled"
    };

    // ---- the state machine ----

    void bump() {
        ++incarnation_;
        changed_ = false;
        engine_.log("azure: DocumentIncarnation " + std::to_string(incarnation_));
        engine_.notify();
    }

    event_record* find(const std::string& id) {
        for (auto& e : events_)
            if (e.spec.id == id) return &e;
        return nullptr;
    }

    // GUID-shaped, version 4 layout, derived from the seed and a counter: the same scenario gives
    // the same ids.
    std::string next_event_id() {
        emulator_splitmix64 g{engine_.config().seed * 0x9E3779B97F4A7C15ull + ++id_counter_};
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

    std::string add_event(testing::azure_event_spec spec, duration t) {
        if (spec.id.empty() || find(spec.id)) {
            if (!spec.id.empty()) engine_.log("azure: EventId " + spec.id + " is taken; a new one is generated");
            spec.id = next_event_id();
        }
        if (spec.resources.empty()) spec.resources.push_back(engine_.config().vms.front().name);
        if (!spec.duration_in_seconds) spec.duration_in_seconds = iequals(spec.type, "Freeze") ? 5 : -1;
        if (!spec.description) spec.description = default_description(spec.type, spec.source);
        if (!spec.impact)
            spec.impact = *spec.duration_in_seconds > 0 ? duration(std::chrono::seconds(*spec.duration_in_seconds))
                                                        : duration(std::chrono::seconds(60));
        event_record e;
        e.appeared = t;
        e.not_before = t + (spec.notice ? *spec.notice : testing::minimum_notice(spec.type));
        e.spec = std::move(spec);
        events_.push_back(std::move(e));
        auto& rec = events_.back();
        std::string resources;
        for (const auto& r : rec.spec.resources) resources += (resources.empty() ? "" : ", ") + r;
        engine_.log("azure: " + rec.spec.id + " " + rec.spec.type + " Scheduled for [" + resources + "], NotBefore " +
                    format_rfc1123(engine_.timeline().wall_at(rec.not_before)));
        if (rec.spec.started) start_event(rec, t, "hardware failure");
        return rec.spec.id;
    }

    void start_event(event_record& e, duration t, const std::string& why) {
        e.state = phase::started;
        e.started_at = t;
        e.removed_at = t + *e.spec.impact;
        engine_.log("azure: " + e.spec.id + " Scheduled -> Started (" + why + ")");
    }

    void end_event(event_record& e, duration t, const std::string& how) {
        e.state = phase::removed;
        e.removed_at = t;
        e.ended = how;
        engine_.log("azure: " + e.spec.id + " removed (" + how + ")");
    }

    static std::string default_description(std::string_view type, std::string_view source) {
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

    // ---- the wire ----

    static testing::emulated_response error_response(int status, std::string_view message, bool with_versions = false) {
        json_writer w;
        w.begin_object();
        w.key("error");
        w.string(message);
        if (with_versions) {
            w.key("newest-versions");
            w.begin_array();
            const auto& v = emulator_azure_versions();
            for (auto it = v.rbegin(); it != v.rend() && it != v.rbegin() + 3; ++it) w.string(*it);
            w.end_array();
        }
        w.end_object();
        return emulator_json_response(status, w.str());
    }

    static int version_index(const std::string& v) {
        const auto& all = emulator_azure_versions();
        const auto it = std::find(all.begin(), all.end(), v);
        return it == all.end() ? -1 : static_cast<int>(it - all.begin());
    }

    static std::string versions_document() {
        std::vector<std::string> all = emulator_instance_versions();
        all.insert(all.end(), emulator_azure_versions().begin(), emulator_azure_versions().end());
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        json_writer w;
        w.begin_object();
        w.key("apiVersions");
        w.begin_array();
        for (const auto& v : all) w.string(v);
        w.end_array();
        w.end_object();
        return w.str();
    }

    std::string document(int vi) const {
        const bool iso = vi == 0;              // 2017-03-01: ISO-8601 NotBefore, "_" before IaaS names
        const bool has_preempt = vi >= 2;      // 2017-11-01
        const bool has_terminate = vi >= 3;    // 2019-01-01
        const bool has_description = vi >= 4;  // 2019-04-01
        const bool has_source = vi >= 5;       // 2019-08-01
        const bool has_duration = vi >= 6;     // 2020-07-01
        const emulator_timeline& time = engine_.timeline();
        json_writer w;
        w.begin_object();
        w.key("DocumentIncarnation");
        w.int64(incarnation_);
        w.key("Events");
        w.begin_array();
        for (const auto& e : events_) {
            if (e.state == phase::removed) continue;
            if (!has_preempt && iequals(e.spec.type, "Preempt")) continue;
            if (!has_terminate && iequals(e.spec.type, "Terminate")) continue;
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
            else w.string(iso ? format_iso8601(time.wall_at(e.not_before)) : format_rfc1123(time.wall_at(e.not_before)));
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

    testing::emulated_response approve(const http_request& request, const testing::vm_identity& vm, int vi) {
        auto doc = parse_json(request.body);
        if (!doc) return error_response(400, "Bad request. The request body is not valid JSON.");
        const auto& root = *doc;
        if (!root.IsObject()) return error_response(400, "Bad request. The request body is not a JSON object.");
        const auto* starts = json_member(root, "StartRequests");
        if (!starts || !starts->IsArray() || starts->Empty())
            return error_response(400, "Bad request. StartRequests must be a non-empty array.");
        for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
            const auto name = json_string_view(it->name);
            if (name == "StartRequests") continue;
            // the 2017-03-01 preview carried the incarnation beside the requests
            if (name == "DocumentIncarnation" && vi == 0 && (it->value.IsString() || it->value.IsInt64())) continue;
            return error_response(400, "Bad request. Unexpected member " + std::string(name) + ".");
        }
        std::vector<event_record*> events;
        for (rapidjson::SizeType i = 0; i < starts->Size(); ++i) {
            const auto& item = (*starts)[i];
            const auto* id = item.IsObject() ? json_member(item, "EventId") : nullptr;
            if (!id || !id->IsString() || id->GetStringLength() == 0)
                return error_response(400, "Bad request. Each StartRequest needs an EventId string.");
            const std::string s(json_string_view(*id));
            auto* e = find(s);
            if (!e) return error_response(400, "Bad request. Unknown EventId " + s + ".");
            events.push_back(e);
        }
        bool changed = false;
        for (auto* e : events) {
            if (e->state != phase::scheduled) continue;  // approving twice, or another VM did: still 200
            e->approved_by = vm.name;
            start_event(*e, engine_.timeline().now(), "approved by " + vm.name);
            changed = true;
        }
        if (changed) bump();
        testing::emulated_response r;
        r.status = 200;
        return r;
    }

    static testing::emulated_response instance(const emulator_target& t, const testing::vm_identity& vm) {
        const auto underscore = vm.name.rfind('_');
        const std::vector<std::pair<std::string, std::string>> compute{
            {"azEnvironment", "AzurePublicCloud"},
            {"location", vm.location},
            {"name", vm.name},
            {"osType", "Linux"},
            {"resourceGroupName", vm.resource_group},
            {"resourceId", "/subscriptions/" + vm.subscription_id + "/resourceGroups/" + vm.resource_group +
                               "/providers/Microsoft.Compute/" +
                               (vm.scale_set.empty() ? "virtualMachines/" + vm.name
                                                     : "virtualMachineScaleSets/" + vm.scale_set + "/virtualMachines/" +
                                                           vm.name.substr(underscore == std::string::npos ? 0 : underscore + 1))},
            {"subscriptionId", vm.subscription_id},
            {"vmId", vm.vm_id},
            {"vmScaleSetName", vm.scale_set},
            {"vmSize", vm.vm_size},
            {"zone", vm.zone},
        };
        const std::string* format = t.param("format");
        const bool text = format && *format == "text";
        if (format && *format != "text" && *format != "json") return error_response(400, "Bad request. Unknown format.");
        auto write_compute = [&](json_writer& w) {
            w.begin_object();
            for (const auto& kv : compute) {
                w.key(kv.first);
                w.string(kv.second);
            }
            w.end_object();
        };
        std::string rest = t.path.substr(std::string_view("/metadata/instance").size());
        while (!rest.empty() && rest.back() == '/') rest.pop_back();
        json_writer w;
        if (rest.empty() || rest == "/compute") {
            if (text) return error_response(400, "Bad request. format=text is only for leaf nodes.");
            if (rest.empty()) {
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
            } else {
                write_compute(w);
            }
            return emulator_json_response(200, w.str());
        }
        if (rest.compare(0, 9, "/compute/") == 0) {
            const std::string key = rest.substr(9);
            for (const auto& kv : compute)
                if (kv.first == key) {
                    if (text) return emulator_text_response(200, kv.second);
                    w.string(kv.second);
                    return emulator_json_response(200, w.str());
                }
        }
        return error_response(404, "Not found");
    }

    // ---- control routes ----

    // POST azure/events: an event now, or `"at"` from now.
    testing::emulated_response add_from_control(const emulator_request& req) {
        auto doc = parse_json(req.http.body.empty() ? std::string_view("{}") : std::string_view(req.http.body));
        if (!doc) return emulator_control_error(400, doc.error().describe());
        auto e = emulator_parse_event_spec(*doc, "event");
        if (!e) return emulator_control_error(400, e.error().describe(), e.error().field);
        duration at{0};
        if (const auto* a = json_member(*doc, "at")) {
            auto d = emulator_json_duration(*a, "at");
            if (!d) return emulator_control_error(400, d.error().describe(), "at");
            at = *d;
        }
        std::string id;
        if (at.count() == 0) {
            id = announce(std::move(*e));
        } else {
            if (e->id.empty()) e->id = next_event_id();
            id = e->id;
            testing::scenario_step s;
            s.at = at;
            s.what = testing::scenario_step::kind::azure_event;
            s.event = std::move(*e);
            engine_.schedule_from_now({std::move(s)});
        }
        json_writer w;
        w.begin_object();
        w.key("EventId");
        w.string(id);
        w.end_object();
        return emulator_json_response(200, w.str());
    }

    // POST azure/events/ID/{cancel,start,complete}, DELETE azure/events/ID.
    testing::emulated_response act_from_control(std::string id, const std::string& method) {
        std::string action = method == "DELETE" ? "remove" : "";
        const auto slash = id.find('/');
        if (slash != std::string::npos) {
            action = id.substr(slash + 1);
            id.erase(slash);
        }
        auto* e = find(id);
        if (!e) return emulator_control_error(404, "no event " + id);
        const duration now = engine_.timeline().now();
        if (action == "cancel") {
            if (e->state != phase::scheduled) return emulator_control_error(409, "event " + id + " is not Scheduled");
            end_event(*e, now, "cancelled");
        } else if (action == "remove" || action == "complete") {
            if (e->state == phase::removed) return emulator_control_error(409, "event " + id + " has ended already");
            end_event(*e, now, e->state == phase::scheduled ? "cancelled" : "completed");
        } else if (action == "start") {
            if (e->state != phase::scheduled) return emulator_control_error(409, "event " + id + " is not Scheduled");
            e->approved_by = "(control)";
            start_event(*e, now, "started through the control API");
        } else {
            return emulator_control_error(404, "unknown action " + action + " (cancel, complete, start)");
        }
        bump();
        return emulator_control_ok();
    }

    emulator_engine& engine_;
    std::vector<event_record> events_;
    std::map<std::string, std::deque<std::chrono::milliseconds>> rate_window_;
    std::int64_t incarnation_ = 1;
    bool enabled_ = true;
    bool enabling_ = false;
    duration enabled_at_{0};
    std::uint64_t id_counter_ = 0;
    bool changed_ = false;  // Events changed at the instant being played (see reach)
};

}  // namespace detail
FOREWARN_END_NAMESPACE
