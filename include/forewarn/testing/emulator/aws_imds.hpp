// SPDX-License-Identifier: MIT
#pragma once

// AWS EC2's instance metadata service (IMDSv2) as the emulator plays it: session tokens, the Spot
// instance-action, the rebalance recommendation, scheduled events that go from active to
// completed or canceled, and the identity paths. Rules: docs/emulator.md ("AWS instance
// metadata"). The times it writes use time.hpp's formatters, the JSON detail/json.hpp's writer.

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
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/// A scheduled event as the emulated AWS service holds it (scenario::aws_events()).
struct aws_event_state {
    std::string id;           ///< EventId
    std::string code;         ///< Code, e.g. "system-reboot"
    std::string state;        ///< "active", "completed" or "canceled"
    std::string description;
    scenario_duration not_before{0};                 ///< scenario time
    std::optional<scenario_duration> not_after;      ///< scenario time
};

}  // namespace testing

namespace detail {

/// The emulated AWS instance metadata: everything under /latest/, its control routes "aws/...".
class emulator_aws final : public emulator_service {
public:
    using duration = testing::scenario_duration;

    explicit emulator_aws(emulator_engine& engine) : engine_(engine) {}

    std::string_view name() const noexcept override { return "aws"; }
    bool serves(std::string_view path) const noexcept override { return collapse_slashes(path).compare(0, 8, "/latest/") == 0; }

    /// "//latest//meta-data" -> "/latest/meta-data": IMDS merges repeated slashes (the AWS SDK for
    /// JavaScript sends "//latest/..." when its endpoint ends in '/', as its default does).
    static std::string collapse_slashes(std::string_view path) {
        std::string out;
        out.reserve(path.size());
        for (const char c : path)
            if (c != '/' || out.empty() || out.back() != '/') out += c;
        return out;
    }

    // ---- what tests and the control API do to it ----

    /// A Spot interruption notice: `action` (terminate, stop, hibernate) at `in` from now.
    void spot(std::string action, duration in) {
        spot_ = spot_notice{std::move(action), engine_.timeline().now() + in};
        engine_.log("aws: spot instance-action " + spot_->action + " in " +
                    emulator_format_duration(std::chrono::duration_cast<std::chrono::milliseconds>(in)));
    }
    void clear_spot() { spot_.reset(); }
    /// A rebalance recommendation, given now.
    void rebalance() {
        rebalance_ = engine_.timeline().now();
        engine_.log("aws: rebalance recommendation");
    }
    void clear_rebalance() { rebalance_.reset(); }
    /// A scheduled event starting `in` from now (NotBefore) for `window` (NotAfter); its id.
    std::string schedule(std::string code, duration in, std::optional<duration> window, std::string id = {},
                         std::string description = {}) {
        testing::aws_event_state e;
        if (id.empty()) {
            const std::string n = std::to_string(++made_);  // instance-event- and 17 digits, as AWS's ids
            e.id = "instance-event-" + std::string(17 - std::min<std::size_t>(17, n.size()), '0') + n;
        } else {
            e.id = std::move(id);
        }
        e.code = std::move(code);
        e.state = "active";
        e.description = description.empty() ? "scheduled " + e.code : std::move(description);
        e.not_before = engine_.timeline().now() + in;
        if (window) e.not_after = e.not_before + *window;
        engine_.log("aws: scheduled event " + e.id + " (" + e.code + ")");
        events_.push_back(e);
        return e.id;
    }
    /// Ends a scheduled event as `state` ("completed" or "canceled"); false when there is none active.
    bool finish(const std::string& id, const std::string& state) {
        for (auto& e : events_)
            if (e.id == id && e.state == "active") {
                e.state = state;
                e.description = (state == "completed" ? "[Completed] " : "[Canceled] ") + e.description;
                engine_.log("aws: scheduled event " + id + " " + state);
                return true;
            }
        return false;
    }
    /// Forgets every token issued: the next request with one is a 401 (an instance stop and start).
    void expire_tokens() {
        tokens_.clear();
        engine_.log("aws: every session token expired");
    }
    const std::vector<testing::aws_event_state>& events() const noexcept { return events_; }
    std::size_t tokens_issued() const noexcept { return issued_; }

    // ---- emulator_service ----

    void restart() override {
        tokens_.clear();
        spot_.reset();
        rebalance_.reset();
        events_.clear();
        issued_ = 0;
        made_ = 0;
    }

    testing::emulated_response handle(emulator_request& req) override {
        const http_request& request = req.http;
        const std::string path = collapse_slashes(req.target.path);
        if (find_header(request.headers, "X-Forwarded-For")) return emulator_text_response(403, "Forbidden\n");
        const duration now = engine_.timeline().now();
        std::optional<testing::fault_spec> fault = engine_.take_fault(req);
        testing::emulated_response r = answer(req, path, now);
        if (fault) emulator_faults::apply(*fault, r, req.entry);
        return r;
    }

    std::optional<testing::emulated_response> control(const std::string& route, const std::string& method,
                                                      const emulator_request& req) override {
        if (route.compare(0, 3, "aws") != 0 || (route.size() > 3 && route[3] != '/')) return std::nullopt;
        if (method == "GET") return std::nullopt;
        return control_body(route, method, req.http.body);
    }

    /// A scenario file's aws_* step: its control route, played now (a refusal is logged).
    bool apply_step(const testing::scenario_step& s, duration) override {
        if (s.what != testing::scenario_step::kind::aws) return false;
        const auto r = control_body(s.aws_route, "POST", s.aws_body);
        if (r.status != 200) engine_.log("aws: the scenario's " + s.aws_route + " step was refused: " + r.body);
        return true;
    }

private:
    testing::emulated_response control_body(const std::string& route, const std::string& method, const std::string& json) {
        auto doc = parse_json(json.empty() ? std::string_view("{}") : std::string_view(json));
        if (!doc) return emulator_control_error(400, doc.error().describe());
        if (!doc->IsObject()) return emulator_control_error(400, "expected a JSON object");
        const rapidjson::Value& body = *doc;
        auto in = [&](const char* member, duration fallback) -> result<duration> {
            const auto* v = json_member(body, member);
            if (!v) return fallback;
            return emulator_json_duration(*v, member);
        };
        auto text = [&](const char* member, std::string fallback) -> result<std::string> {
            const auto* v = json_member(body, member);
            if (!v) return fallback;
            return emulator_json_string(*v, member);
        };
        if (route == "aws/spot") {
            if (method == "DELETE") {
                clear_spot();
                return emulator_control_ok();
            }
            auto action = text("action", "terminate");
            if (!action) return emulator_control_error(400, action.error().describe(), "action");
            if (*action != "terminate" && *action != "stop" && *action != "hibernate")
                return emulator_control_error(400, "action must be terminate, stop or hibernate", "action");
            auto when = in("in", std::chrono::minutes(2));
            if (!when) return emulator_control_error(400, when.error().describe(), "in");
            spot(*action, *when);
            return emulator_control_ok();
        }
        if (route == "aws/rebalance") {
            if (method == "DELETE")
                clear_rebalance();
            else
                rebalance();
            return emulator_control_ok();
        }
        if (route == "aws/tokens" && method == "DELETE") {
            expire_tokens();
            return emulator_control_ok();
        }
        if (route == "aws/events") {
            auto code = text("Code", "system-reboot");
            if (!code) return emulator_control_error(400, code.error().describe(), "Code");
            auto id = text("EventId", "");
            if (!id) return emulator_control_error(400, id.error().describe(), "EventId");
            auto description = text("Description", "");
            if (!description) return emulator_control_error(400, description.error().describe(), "Description");
            auto when = in("in", std::chrono::hours(24));
            if (!when) return emulator_control_error(400, when.error().describe(), "in");
            std::optional<duration> window;
            if (json_member(body, "window")) {
                auto w = in("window", duration(0));
                if (!w) return emulator_control_error(400, w.error().describe(), "window");
                window = *w;
            }
            for (const auto& e : events_)
                if (e.id == *id) return emulator_control_error(409, "an event with this EventId exists", "EventId");
            const std::string made = schedule(*code, *when, window, *id, *description);
            json_writer w(true);
            w.begin_object();
            w.key("EventId");
            w.string(made);
            w.end_object();
            return emulator_json_response(200, w.str());
        }
        const std::string prefix = "aws/events/";
        if (route.compare(0, prefix.size(), prefix) == 0) {
            const auto rest = route.substr(prefix.size());
            const auto slash = rest.find('/');
            if (slash == std::string::npos) return emulator_control_error(404, "no such route");
            const auto id = rest.substr(0, slash), verb = rest.substr(slash + 1);
            if (verb != "complete" && verb != "cancel") return emulator_control_error(404, "no such route");
            if (!finish(id, verb == "complete" ? "completed" : "canceled"))
                return emulator_control_error(404, "no active scheduled event " + id);
            return emulator_control_ok();
        }
        return emulator_control_error(404, "no such route");
    }

public:
    void write_state(json_writer& w) const override {
        w.key("aws");
        w.begin_object();
        w.key("tokens_issued");
        w.int64(static_cast<std::int64_t>(issued_));
        w.key("spot");
        if (spot_) {
            w.begin_object();
            w.key("action");
            w.string(spot_->action);
            w.key("time");
            w.string(format_iso8601(engine_.timeline().wall_at(spot_->at)));
            w.end_object();
        } else {
            w.null();
        }
        w.key("rebalance");
        if (rebalance_)
            w.string(format_iso8601(engine_.timeline().wall_at(*rebalance_)));
        else
            w.null();
        w.key("events");
        write_events(w);
        w.end_object();
    }

private:
    struct spot_notice {
        std::string action;
        duration at{0};
    };

    testing::emulated_response answer(emulator_request& req, const std::string& path, duration now) {
        const http_request& request = req.http;
        if (path == "/latest/api/token") {
            if (request.method != http_method::put) return emulator_text_response(405, "Method Not Allowed\n");
            const std::string* ttl_text = find_header(request.headers, "X-aws-ec2-metadata-token-ttl-seconds");
            long long ttl = 0;
            if (ttl_text) {
                char* end = nullptr;
                ttl = std::strtoll(ttl_text->c_str(), &end, 10);
                if (end == ttl_text->c_str() || *end != '\0') ttl = 0;
            }
            if (ttl < 1 || ttl > 21600) return emulator_text_response(400, "Bad Request\n");
            ++issued_;
            std::string token = "AQAEA" + emulator_etag_like(issued_) + "==";
            tokens_[token] = now + std::chrono::seconds(ttl);
            engine_.log("aws: session token issued for " + std::to_string(ttl) + " s");
            testing::emulated_response r = emulator_text_response(200, token, "text/plain");
            r.headers.push_back({"X-aws-ec2-metadata-token-ttl-seconds", std::to_string(ttl)});
            return r;
        }
        if (request.method != http_method::get) return emulator_text_response(405, "Method Not Allowed\n");
        const std::string* token = find_header(request.headers, "X-aws-ec2-metadata-token");
        const auto it = token ? tokens_.find(*token) : tokens_.end();
        if (it == tokens_.end() || now >= it->second) return emulator_text_response(401, "Unauthorized\n");

        const testing::vm_identity& vm = *req.vm;
        if (path == "/latest/meta-data/instance-id") return emulator_text_response(200, vm.name, "text/plain");
        if (path == "/latest/meta-data/instance-type") return emulator_text_response(200, "m5.large", "text/plain");
        if (path == "/latest/meta-data/placement/availability-zone")
            return emulator_text_response(200, vm.zone.empty() ? "us-east-1a" : vm.zone, "text/plain");
        if (path == "/latest/meta-data/instance-life-cycle")
            return emulator_text_response(200, spot_ || rebalance_ ? "spot" : "on-demand", "text/plain");
        if (path == "/latest/meta-data/spot/instance-action") {
            if (!spot_) return not_found();
            json_writer w(true);
            w.begin_object();
            w.key("action");
            w.string(spot_->action);
            w.key("time");
            w.string(format_iso8601(engine_.timeline().wall_at(spot_->at)));
            w.end_object();
            return emulator_text_response(200, w.str(), "text/plain");
        }
        if (path == "/latest/meta-data/events/recommendations/rebalance") {
            if (!rebalance_) return not_found();
            json_writer w(true);
            w.begin_object();
            w.key("noticeTime");
            w.string(format_iso8601(engine_.timeline().wall_at(*rebalance_)));
            w.end_object();
            return emulator_text_response(200, w.str(), "text/plain");
        }
        if (path == "/latest/meta-data/events/maintenance/scheduled") {
            json_writer w(true);
            write_events(w);
            return emulator_text_response(200, w.str(), "text/plain");
        }
        return not_found();
    }

    void write_events(json_writer& w) const {
        w.begin_array();
        for (const auto& e : events_) {
            w.begin_object();
            w.key("NotBefore");
            w.string(format_aws_time(engine_.timeline().wall_at(e.not_before)));
            w.key("Code");
            w.string(e.code);
            w.key("Description");
            w.string(e.description);
            w.key("EventId");
            w.string(e.id);
            if (e.not_after) {
                w.key("NotAfter");
                w.string(format_aws_time(engine_.timeline().wall_at(*e.not_after)));
            }
            w.key("State");
            w.string(e.state);
            w.end_object();
        }
        w.end_array();
    }

    static testing::emulated_response not_found() {
        return emulator_text_response(404, "<?xml version=\"1.0\" encoding=\"iso-8859-1\"?>\n<html><body>404 - Not Found</body></html>\n",
                                      "text/html");
    }
    // A token body: printable, unique per issue, not guessable from the count alone in a test.
    static std::string emulator_etag_like(std::size_t n) {
        static constexpr char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        std::uint64_t h = 1469598103934665603ull ^ (n * 0x9E3779B97F4A7C15ull);
        std::string out;
        for (int i = 0; i < 40; ++i) {
            out += digits[h % 62];
            h = h * 6364136223846793005ull + 1442695040888963407ull;
        }
        return out;
    }

    emulator_engine& engine_;
    std::map<std::string, duration> tokens_;  // token -> expiry (scenario time)
    std::optional<spot_notice> spot_;
    std::optional<duration> rebalance_;
    std::vector<testing::aws_event_state> events_;
    std::size_t issued_ = 0;
    std::size_t made_ = 0;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
