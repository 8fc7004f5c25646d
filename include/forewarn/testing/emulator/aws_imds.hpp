// SPDX-License-Identifier: MIT
#pragma once

// AWS EC2's instance metadata service (IMDSv2) as the emulator plays it: session tokens, the Spot
// instance-action, the rebalance recommendation, scheduled events that go from active to
// completed or canceled, the Auto Scaling target lifecycle state, and the identity paths. Rules:
// docs/emulator.md ("AWS instance metadata"). What it shares with the other /latest/ services
// (tokens, slashes, faults, steps) is latest_metadata.hpp's. The times it writes use time.hpp's
// formatters, the JSON detail/json.hpp's writer.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/testing/emulator/aws_autoscaling.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/latest_metadata.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/scenario_file.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
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

/// The Auto Scaling target lifecycle states IMDS reports (autoscaling/target-lifecycle-state).
inline bool emulator_aws_lifecycle_state(std::string_view s) noexcept {
    for (const std::string_view known : {"InService", "Pending", "Terminated", "Detached", "Standby", "Warmed:Pending",
                                         "Warmed:Running", "Warmed:Stopped", "Warmed:Hibernated", "Warmed:Terminated"})
        if (s == known) return true;
    return false;
}

/// The emulated AWS instance metadata: everything under /latest/, its control routes "aws/...".
class emulator_aws final : public emulator_latest_service {
public:
    explicit emulator_aws(emulator_engine& engine)
        : emulator_latest_service(engine, "aws", "", testing::scenario_step::kind::aws),
          tokens_(engine, "aws", "X-aws-ec2-metadata-token-ttl-seconds", "X-aws-ec2-metadata-token", true), asg_(engine) {}

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
    /// The Auto Scaling target lifecycle state (InService, Terminated, Warmed:Terminated, ...):
    /// what autoscaling/target-lifecycle-state answers from now on. Not checked against AWS's list.
    void lifecycle(std::string state) {
        engine_.log("aws: target lifecycle state " + state);
        lifecycle_ = std::move(state);
        asg_.lifecycle_changed(lifecycle_);
    }
    /// No lifecycle state: the instance is outside any Auto Scaling group (the path is a 404).
    void clear_lifecycle() {
        lifecycle_.reset();
        asg_.lifecycle_changed(lifecycle_);
    }
    /// The instance profile, the group, its hook and Auto Scaling's answers (aws_autoscaling.hpp).
    emulator_aws_autoscaling_state& autoscaling() noexcept { return asg_; }
    /// The group and its termination hook (a Terminated state now waits for the hook).
    void configure_autoscaling(std::string group, std::string hook, bool tags) {
        asg_.configure(std::move(group), std::move(hook), tags);
        asg_.lifecycle_changed(lifecycle_);
    }
    /// Forgets every token issued: the next request with one is a 401 (an instance stop and start).
    void expire_tokens() { tokens_.expire_all(); }
    const std::vector<testing::aws_event_state>& events() const noexcept { return events_; }
    std::size_t tokens_issued() const noexcept { return tokens_.issued(); }

    // ---- emulator_service ----

    void restart() override {
        tokens_.restart();
        spot_.reset();
        rebalance_.reset();
        lifecycle_.reset();
        events_.clear();
        made_ = 0;
        asg_.restart();
    }

private:
    // AWS's routes count from the clock's now, whatever `from` says (a step played late in-process
    // counts from when it is played).
    testing::emulated_response control_body(const std::string& route, const std::string& method, const std::string& json,
                                            duration /*from*/) override {
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
        if (route == "aws/lifecycle") {
            if (method == "DELETE") {
                clear_lifecycle();
                return emulator_control_ok();
            }
            auto state = text("state", "");
            if (!state) return emulator_control_error(400, state.error().describe(), "state");
            if (!emulator_aws_lifecycle_state(*state))
                return emulator_control_error(400, "state must be one of InService, Pending, Terminated, Detached, Standby, "
                                                   "Warmed:Pending, Warmed:Running, Warmed:Stopped, Warmed:Hibernated or "
                                                   "Warmed:Terminated", "state");
            lifecycle(*state);
            return emulator_control_ok();
        }
        if (route == "aws/autoscaling") {
            auto group = text("group", "forewarn-asg");
            if (!group) return emulator_control_error(400, group.error().describe(), "group");
            auto hook = text("hook", "forewarn-drain");
            if (!hook) return emulator_control_error(400, hook.error().describe(), "hook");
            bool tags = true;
            if (const auto* t = json_member(body, "tags")) {
                if (!t->IsBool()) return emulator_control_error(400, "tags must be true or false", "tags");
                tags = t->GetBool();
            }
            configure_autoscaling(*group, *hook, tags);
            return emulator_control_ok();
        }
        if (route == "aws/autoscaling/fault") {
            auto code = text("code", "Throttling");
            if (!code) return emulator_control_error(400, code.error().describe(), "code");
            if (*code != "Throttling" && *code != "AccessDenied" && *code != "ServiceUnavailable")
                return emulator_control_error(400, "code must be Throttling, AccessDenied or ServiceUnavailable", "code");
            int times = 1;
            if (const auto* t = json_member(body, "times")) {
                if (!t->IsInt() || t->GetInt() < 1 || t->GetInt() > 100)
                    return emulator_control_error(400, "times must be an integer 1..100", "times");
                times = t->GetInt();
            }
            asg_.fault(*code, times);
            return emulator_control_ok();
        }
        if (route == "aws/credentials/rotate") {
            asg_.rotate();
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
        w.int64(static_cast<std::int64_t>(tokens_.issued()));
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
        w.key("lifecycle");
        if (lifecycle_)
            w.string(*lifecycle_);
        else
            w.null();
        w.key("events");
        write_events(w);
        asg_.write_state(w);
        w.end_object();
    }

private:
    struct spot_notice {
        std::string action;
        duration at{0};
    };

    testing::emulated_response answer(emulator_request& req, const std::string& path, duration now) override {
        if (path == "/latest/api/token") return tokens_.issue(req.http, now);
        if (auto refused = tokens_.refuse(req.http, now)) return std::move(*refused);

        const testing::vm_identity& vm = *req.vm;
        if (path == "/latest/meta-data/instance-id") return emulator_text_response(200, vm.name, "text/plain");
        if (path == "/latest/meta-data/instance-type") return emulator_text_response(200, "m5.large", "text/plain");
        if (path == "/latest/meta-data/placement/availability-zone")
            return emulator_text_response(200, vm.zone.empty() ? "us-east-1a" : vm.zone, "text/plain");
        if (path == "/latest/meta-data/instance-life-cycle")
            return emulator_text_response(200, spot_ || rebalance_ ? "spot" : "on-demand", "text/plain");
        if (path == "/latest/meta-data/iam/security-credentials/" || path == "/latest/meta-data/iam/security-credentials")
            return emulator_text_response(200, asg_.role(), "text/plain");
        if (path == "/latest/meta-data/iam/security-credentials/" + asg_.role()) {
            const auto c = asg_.current();
            json_writer w(true);
            w.begin_object();
            w.key("Code");
            w.string("Success");
            w.key("LastUpdated");
            w.string(format_iso8601(engine_.timeline().wall_at(now)));
            w.key("Type");
            w.string("AWS-HMAC");
            w.key("AccessKeyId");
            w.string(c.access_key_id);
            w.key("SecretAccessKey");
            w.string(c.secret_access_key);
            w.key("Token");
            w.string(c.session_token);
            w.key("Expiration");
            w.string(format_iso8601(*c.expiration));
            w.end_object();
            return emulator_text_response(200, w.str(), "text/plain");
        }
        if (path == "/latest/meta-data/placement/region")
            return emulator_text_response(200, emulator_aws_autoscaling_state::region_of(vm), "text/plain");
        if (path == "/latest/meta-data/tags/instance/aws:autoscaling:groupName") {
            if (!asg_.tags() || asg_.group().empty()) return emulator_latest_not_found();
            return emulator_text_response(200, asg_.group(), "text/plain");
        }
        if (path == "/latest/meta-data/autoscaling/target-lifecycle-state") {
            if (!lifecycle_) return emulator_latest_not_found();
            return emulator_text_response(200, *lifecycle_, "text/plain");
        }
        if (path == "/latest/meta-data/spot/instance-action") {
            if (!spot_) return emulator_latest_not_found();
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
            if (!rebalance_) return emulator_latest_not_found();
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
        return emulator_latest_not_found();
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

    emulator_session_tokens tokens_;
    std::optional<spot_notice> spot_;
    std::optional<duration> rebalance_;
    std::optional<std::string> lifecycle_;  // the Auto Scaling target lifecycle state; none outside a group
    std::vector<testing::aws_event_state> events_;
    std::size_t made_ = 0;
    emulator_aws_autoscaling_state asg_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
