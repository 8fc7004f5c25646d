// SPDX-License-Identifier: MIT
#pragma once

// The control API (/emulator/v1/): the engine-wide routes (state, the request log, faults, steps,
// advance, reset); every other route goes to the service whose control() takes it (azure/...,
// gce). JSON in and out; errors are {"error": "...", "field": "..."} with 400/404/409.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/scenario_file.hpp>
#include <forewarn/testing/emulator/service.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The control API, a part of the router like a service, but asked first and never logged.
class emulator_control_api final : public emulator_service {
public:
    static constexpr std::string_view prefix = "/emulator/v1/";

    explicit emulator_control_api(emulator_engine& engine) : engine_(engine) {}

    std::string_view name() const noexcept override { return "control"; }
    bool serves(std::string_view path) const noexcept override {
        return path.compare(0, prefix.size(), prefix) == 0 || path == prefix.substr(0, prefix.size() - 1);
    }
    void restart() override {}

    testing::emulated_response handle(emulator_request& req) override {
        const std::string& path = req.target.path;
        const std::string route = path.size() > prefix.size() ? path.substr(prefix.size()) : std::string();
        const std::string method = emulator_method_name(req.http);
        const bool get = method == "GET", del = method == "DELETE";

        if (route == "state" && get) return emulator_json_response(200, state_json());
        if (route == "requests") {
            if (del) {
                engine_.clear_requests();
                return emulator_control_ok();
            }
            if (!get) return emulator_control_error(405, "GET or DELETE");
            std::uint64_t since = 0;
            if (const auto* s = req.target.param("since")) since = std::strtoull(s->c_str(), nullptr, 10);
            return emulator_json_response(200, requests_json(since));
        }
        if (!get) {
            if (route == "reset") {
                engine_.restart();
                return emulator_control_ok();
            }
            if (route == "advance") return advance(req);
            if (route == "faults") return faults(req, del);
            if (route == "steps") return steps(req);
        }
        for (auto* s : engine_.services())
            if (auto r = s->control(route, method, req)) return std::move(*r);
        return emulator_control_error(404, "unknown control route " + path);
    }

    /// GET /emulator/v1/state: time, every service's state, the faults, what is pending.
    std::string state_json() const {
        const emulator_timeline& time = engine_.timeline();
        json_writer w(true);
        w.begin_object();
        w.key("name");
        w.string(engine_.config().name);
        w.key("time_ms");
        w.int64(time.now().count());
        w.key("wall_time");
        w.string(format_iso8601(time.wall_at(time.now())));
        w.key("speed");
        w.number(time.speed());
        w.key("hanging");
        w.int64(static_cast<std::int64_t>(engine_.hanging()));
        for (const auto* s : engine_.services()) s->write_state(w);
        engine_.faults().write_state(w);
        w.key("pending_steps");
        w.uint64(time.pending());
        w.key("requests");
        w.uint64(engine_.request_count());
        w.end_object();
        return w.str();
    }

    /// GET /emulator/v1/requests?since=N: the request log from sequence number N.
    std::string requests_json(std::uint64_t since) const {
        // Targets, header values and bodies come from the wire and may not be UTF-8: each byte
        // that is not part of well-formed UTF-8 is written as '?'.
        auto text = [](std::string_view s) { return replace_invalid_utf8(s, "?"); };
        json_writer w;
        w.begin_object();
        w.key("next");
        w.uint64(engine_.request_count() + 1);
        w.key("requests");
        w.begin_array();
        for (const auto& r : engine_.requests()) {
            if (r.seq < since) continue;
            w.begin_object();
            w.key("seq");
            w.uint64(r.seq);
            w.key("time_ms");
            w.int64(r.at.count());
            w.key("method");
            w.string(to_string(r.method));
            w.key("target");
            w.string(text(r.target));
            w.key("service");
            w.string(r.service);
            w.key("vm");
            w.string(text(r.vm));
            w.key("status");
            w.int64(r.status);
            w.key("fault");
            w.string(r.fault);
            w.key("headers");
            w.begin_array();
            for (const auto& h : r.headers) {
                w.begin_array();
                w.string(text(h.name));
                w.string(text(h.value));
                w.end_array();
            }
            w.end_array();
            w.key("body");
            w.string(text(r.body));
            w.end_object();
        }
        w.end_array();
        w.end_object();
        return w.str();
    }

private:
    static result<rapidjson::Document> body_json(const emulator_request& req) {
        return parse_json(req.http.body.empty() ? std::string_view("{}") : std::string_view(req.http.body));
    }

    // POST advance {"by": "15m"}: jumps scenario time ahead (a real-time clock keeps running).
    testing::emulated_response advance(const emulator_request& req) {
        auto doc = body_json(req);
        if (!doc) return emulator_control_error(400, doc.error().describe());
        const auto* by = doc->IsObject() ? json_member(*doc, "by") : nullptr;
        if (!by) return emulator_control_error(400, "expected {\"by\": \"15m\"}", "by");
        auto d = emulator_json_duration(*by, "by");
        if (!d) return emulator_control_error(400, d.error().describe(), "by");
        engine_.advance(*d);
        return emulator_json_response(200, "{\"time_ms\":" + std::to_string(engine_.timeline().now().count()) + "}");
    }

    // POST faults (a fault as in a `fault` step), DELETE faults.
    testing::emulated_response faults(const emulator_request& req, bool del) {
        if (del) {
            engine_.clear_faults();
            return emulator_control_ok();
        }
        auto doc = body_json(req);
        if (!doc) return emulator_control_error(400, doc.error().describe());
        auto f = emulator_parse_fault(*doc, "fault");
        if (!f) return emulator_control_error(400, f.error().describe(), f.error().field);
        engine_.add_fault(std::move(*f));
        return emulator_control_ok();
    }

    // POST steps: one step or an array, `at` counted from now.
    testing::emulated_response steps(const emulator_request& req) {
        auto doc = body_json(req);
        if (!doc) return emulator_control_error(400, doc.error().describe());
        std::vector<testing::scenario_step> steps;
        if (doc->IsArray()) {
            for (rapidjson::SizeType i = 0; i < doc->Size(); ++i)
                if (auto r = emulator_parse_steps_into((*doc)[i], "steps[" + std::to_string(i) + "]", steps); !r)
                    return emulator_control_error(400, r.error().describe(), r.error().field);
        } else if (auto r = emulator_parse_steps_into(*doc, "step", steps); !r) {
            return emulator_control_error(400, r.error().describe(), r.error().field);
        }
        engine_.schedule_from_now(std::move(steps));
        return emulator_control_ok();
    }

    emulator_engine& engine_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
