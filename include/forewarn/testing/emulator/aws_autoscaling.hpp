// SPDX-License-Identifier: MIT
#pragma once

// What the emulator plays of AWS beyond IMDS for a lifecycle hook: the instance profile's
// credentials (served by IMDS, rotated on demand), the region and the group's tag, and Auto
// Scaling's two lifecycle calls at the path /autoscaling/ (the stand-in for
// autoscaling.REGION.amazonaws.com). Each call's SigV4 signature is checked with the credentials
// served; every call is recorded (the control API's state lists them). Rules: docs/emulator.md
// ("Auto Scaling").

#include <forewarn/aws/autoscaling.hpp>
#include <forewarn/aws/sigv4.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/service.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/time.hpp>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/// One call Auto Scaling received, as the emulator judged it.
struct autoscaling_call {
    std::string action;          ///< CompleteLifecycleAction, RecordLifecycleActionHeartbeat, or what was sent
    std::string instance_id;     ///< InstanceId
    std::string hook;            ///< LifecycleHookName
    std::string group;           ///< AutoScalingGroupName
    std::string result;          ///< LifecycleActionResult (CompleteLifecycleAction)
    std::string access_key_id;   ///< from the signature's Credential
    bool signature_valid = false;
    int status = 0;              ///< what it answered
    std::string code;            ///< the error's Code, empty on success
    scenario_duration at{0};     ///< scenario time
};

}  // namespace testing

namespace detail {

/// The instance profile, the group and the lifecycle action of the emulated instance, and Auto
/// Scaling's answers. Held by emulator_aws (IMDS serves the credentials, region and tag from it).
class emulator_aws_autoscaling_state {
public:
    using duration = testing::scenario_duration;

    explicit emulator_aws_autoscaling_state(emulator_engine& engine) : engine_(engine) {}

    // ---- the instance profile ----
    std::string role() const { return "forewarn-emulator-role"; }
    /// The credentials of generation `g` (1 is the first; each rotation adds one).
    aws::credentials credentials_of(int g) const {
        const std::string n = std::to_string(g);
        aws::credentials c;
        c.access_key_id = "ASIAFOREWARN" + std::string(8 - std::min<std::size_t>(8, n.size()), '0') + n;
        c.secret_access_key = "emulator-secret-" + n + "-wJalrXUtnFEMI/K7MDENG";
        c.session_token = "emulator-session-token-" + n;
        c.expiration = engine_.timeline().wall_at(issued_at_ + lifetime_);
        return c;
    }
    aws::credentials current() const { return credentials_of(generation_); }
    int generation() const noexcept { return generation_; }
    /// New credentials from now; the ones before are expired (ExpiredToken).
    void rotate() {
        ++generation_;
        issued_at_ = engine_.timeline().now();
        engine_.log("aws: instance profile credentials rotated (generation " + std::to_string(generation_) + ")");
    }

    // ---- the group and its hook ----
    /// The group the instance is in and the termination hook; `tags`: instance metadata tags on
    /// (the group's name is then at tags/instance/aws:autoscaling:groupName).
    void configure(std::string group, std::string hook, bool tags) {
        group_ = std::move(group);
        hook_ = std::move(hook);
        tags_ = tags;
        engine_.log("aws: Auto Scaling group " + group_ + ", hook " + hook_ + (tags ? ", tags on" : ", tags off"));
    }
    const std::string& group() const noexcept { return group_; }
    bool tags() const noexcept { return tags_; }
    /// The lifecycle state changed (IMDS's target-lifecycle-state): Terminated with a hook holds
    /// the instance in Terminating:Wait.
    void lifecycle_changed(const std::optional<std::string>& state) {
        if (state && (*state == "Terminated" || *state == "Warmed:Terminated") && !hook_.empty())
            action_ = "Terminating:Wait";
        else if (!state || (*state != "Terminated" && *state != "Warmed:Terminated"))
            action_.clear();
    }
    /// "Terminating:Wait", "Terminating:Proceed" (completed with CONTINUE), "Terminating:Abandon", or empty.
    const std::string& action_state() const noexcept { return action_; }

    /// The next `times` calls answer `code` (Throttling 400, AccessDenied 403, ServiceUnavailable 503).
    void fault(std::string code, int times) {
        for (int i = 0; i < times; ++i) faults_.push_back(code);
    }
    const std::vector<testing::autoscaling_call>& calls() const noexcept { return calls_; }

    void restart() {
        generation_ = 1;
        issued_at_ = duration(0);
        group_.clear();
        hook_.clear();
        tags_ = false;
        action_.clear();
        faults_.clear();
        calls_.clear();
    }

    // ---- Auto Scaling's Query API ----
    testing::emulated_response answer(emulator_request& req, const testing::vm_identity& vm, duration now) {
        testing::autoscaling_call call;
        call.at = now;
        auto done = [&](int status, std::string code, std::string message) {
            call.status = status;
            call.code = code;
            calls_.push_back(call);
            engine_.log("aws: Auto Scaling " + (call.action.empty() ? std::string("?") : call.action) + " -> " +
                        std::to_string(status) + (code.empty() ? "" : " " + code));
            if (status == 200) {
                const std::string body = "<" + call.action + "Response xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\"><" +
                                         call.action + "Result/><ResponseMetadata><RequestId>emulator-" +
                                         std::to_string(calls_.size()) + "</RequestId></ResponseMetadata></" + call.action +
                                         "Response>";
                return emulator_text_response(200, body, "text/xml");
            }
            return emulator_text_response(status,
                                          "<ErrorResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\"><Error><Type>" +
                                              std::string(status >= 500 ? "Receiver" : "Sender") + "</Type><Code>" + code +
                                              "</Code><Message>" + xml_escaped(message) +
                                              "</Message></Error><RequestId>emulator-" + std::to_string(calls_.size() + 1) +
                                              "</RequestId></ErrorResponse>",
                                          "text/xml");
        };
        const http_request& http = req.http;
        const auto form = form_of(http.body);
        call.action = value(form, "Action");
        call.instance_id = value(form, "InstanceId");
        call.hook = value(form, "LifecycleHookName");
        call.group = value(form, "AutoScalingGroupName");
        call.result = value(form, "LifecycleActionResult");
        if (http.method != http_method::post) return done(400, "InvalidAction", "the Query API takes POST here");

        // The signature, with the credentials served.
        const auto* auth = find_header(http.headers, "Authorization");
        if (!auth) return done(403, "MissingAuthenticationToken", "Request is missing Authentication Token");
        const auto cred_at = auth->find("Credential=");
        const auto slash = cred_at == std::string::npos ? std::string::npos : auth->find('/', cred_at);
        if (slash == std::string::npos) return done(400, "IncompleteSignature", "Authorization header lacks a Credential");
        call.access_key_id = auth->substr(cred_at + 11, slash - cred_at - 11);
        int generation = 0;
        for (int g = 1; g <= generation_; ++g)
            if (credentials_of(g).access_key_id == call.access_key_id) generation = g;
        if (generation == 0) return done(403, "InvalidClientTokenId", "The security token included in the request is invalid.");
        const auto creds = credentials_of(generation);
        const auto* token = find_header(http.headers, "X-Amz-Security-Token");
        if (!token || *token != creds.session_token)
            return done(403, "InvalidClientTokenId", "The security token included in the request is invalid.");
        const auto* date = find_header(http.headers, "X-Amz-Date");
        const auto when = date ? amz_time(*date) : std::nullopt;
        if (!when) return done(400, "IncompleteSignature", "X-Amz-Date is missing or malformed");
        http_request copy;
        copy.method = http.method;
        copy.url = http.url;
        if (copy.url.rfind("http", 0) != 0) {  // origin-form, as the HTTP front end hands it on: the Host names the server
            const auto* host = find_header(http.headers, "Host");
            copy.url = "http://" + (host ? *host : std::string("localhost")) + copy.url;
        }
        copy.body = http.body;
        for (const auto& h : http.headers)
            if (!forewarn::detail::iequals(h.name, "authorization") && !forewarn::detail::iequals(h.name, "x-amz-date") &&
                !forewarn::detail::iequals(h.name, "x-amz-security-token") && signed_header(*auth, h.name))
                copy.headers.push_back(h);
        aws::sigv4_options so;
        so.region = region_of(vm);
        so.service = "autoscaling";
        const auto expected = aws::sign_v4(copy, creds, so, *when);
        call.signature_valid = expected && expected->authorization == *auth;
        if (!call.signature_valid)
            return done(403, "SignatureDoesNotMatch",
                        "The request signature we calculated does not match the signature you provided.");
        const auto skew = engine_.timeline().wall_at(now) - *when;
        if (skew > std::chrono::minutes(15) || skew < -std::chrono::minutes(15))
            return done(403, "SignatureDoesNotMatch", "Signature expired: the X-Amz-Date is more than 15 minutes off");
        if (generation != generation_) return done(400, "ExpiredToken", "The security token included in the request is expired");

        if (!faults_.empty()) {
            const std::string code = faults_.front();
            faults_.pop_front();
            if (code == "AccessDenied")
                return done(403, code, "User: arn:aws:sts::123456789012:assumed-role/" + role() + "/" + vm.name +
                                           " is not authorized to perform: autoscaling:" + call.action +
                                           " on resource: arn:aws:autoscaling:" + so.region + ":123456789012:autoScalingGroup:*:"
                                           "autoScalingGroupName/" + group_ + " because no identity-based policy allows it");
            if (code == "ServiceUnavailable") return done(503, code, "Service is unavailable");
            return done(400, code, "Rate exceeded");
        }
        if (value(form, "Version") != "2011-01-01") return done(400, "InvalidParameterValue", "Version must be 2011-01-01");
        if (call.action != "CompleteLifecycleAction" && call.action != "RecordLifecycleActionHeartbeat")
            return done(400, "InvalidAction", "The action " + call.action + " is not valid for this web service.");
        if (call.group.empty() || call.group != group_)
            return done(400, "ValidationError", "Group " + call.group + " not found");
        if (call.hook != hook_) return done(400, "ValidationError", "No Lifecycle Hook found named " + call.hook);
        if (call.instance_id != vm.name || action_ != "Terminating:Wait")
            return done(400, "ValidationError", "No active Lifecycle Action found with instance ID " + call.instance_id);
        if (call.action == "CompleteLifecycleAction") {
            if (call.result != "CONTINUE" && call.result != "ABANDON")
                return done(400, "ValidationError", "LifecycleActionResult must be CONTINUE or ABANDON");
            action_ = call.result == "CONTINUE" ? "Terminating:Proceed" : "Terminating:Abandon";
        }
        return done(200, {}, {});
    }

    /// us-east-1a's region, us-east-1.
    static std::string region_of(const testing::vm_identity& vm) {
        const std::string zone = vm.zone.empty() ? "us-east-1a" : vm.zone;
        return zone.size() > 1 ? zone.substr(0, zone.size() - 1) : zone;
    }

    void write_state(json_writer& w) const {
        w.key("autoscaling");
        w.begin_object();
        w.key("group");
        w.string(group_);
        w.key("hook");
        w.string(hook_);
        w.key("tags");
        w.boolean(tags_);
        w.key("action");
        w.string(action_);
        w.key("credentials_generation");
        w.int64(generation_);
        w.key("calls");
        w.begin_array();
        for (const auto& c : calls_) {
            w.begin_object();
            for (const auto& [k, v] : {std::pair<const char*, const std::string*>{"action", &c.action}, {"instance_id", &c.instance_id},
                                       {"hook", &c.hook}, {"group", &c.group}, {"result", &c.result},
                                       {"access_key_id", &c.access_key_id}, {"code", &c.code}}) {
                w.key(k);
                w.string(*v);
            }
            w.key("signature_valid");
            w.boolean(c.signature_valid);
            w.key("status");
            w.int64(c.status);
            w.key("at_ms");
            w.int64(std::chrono::duration_cast<std::chrono::milliseconds>(c.at).count());
            w.end_object();
        }
        w.end_array();
        w.end_object();
    }

private:
    static std::vector<std::pair<std::string, std::string>> form_of(std::string_view body) {
        std::vector<std::pair<std::string, std::string>> out;
        std::size_t i = 0;
        while (i < body.size() && out.size() < 64) {
            auto j = body.find('&', i);
            if (j == std::string_view::npos) j = body.size();
            const auto part = body.substr(i, j - i);
            const auto eq = part.find('=');
            out.emplace_back(decoded(part.substr(0, eq)), eq == std::string_view::npos ? std::string() : decoded(part.substr(eq + 1)));
            i = j + 1;
        }
        return out;
    }
    static std::string decoded(std::string_view s) {
        auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
        std::string out;
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
                out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
                i += 2;
            } else {
                out += s[i] == '+' ? ' ' : s[i];
            }
        }
        return out;
    }
    static std::string value(const std::vector<std::pair<std::string, std::string>>& form, std::string_view name) {
        for (const auto& [k, v] : form)
            if (k == name) return v;
        return {};
    }
    static bool signed_header(const std::string& auth, const std::string& name) {
        const auto at = auth.find("SignedHeaders=");
        if (at == std::string::npos) return false;
        const auto end = auth.find(',', at);
        const std::string list = ";" + auth.substr(at + 14, end == std::string::npos ? std::string::npos : end - at - 14) + ";";
        std::string lower;
        for (char c : name) lower += forewarn::detail::ascii_lower(c);
        return list.find(";" + lower + ";") != std::string::npos;
    }
    static std::optional<std::chrono::system_clock::time_point> amz_time(const std::string& t) {
        if (t.size() != 16 || t[8] != 'T' || t[15] != 'Z') return std::nullopt;
        auto p = parse_time(t.substr(0, 4) + "-" + t.substr(4, 2) + "-" + t.substr(6, 2) + "T" + t.substr(9, 2) + ":" +
                            t.substr(11, 2) + ":" + t.substr(13, 2) + "Z");
        if (!p || !*p) return std::nullopt;
        return **p;
    }
    static std::string xml_escaped(std::string_view s) {
        std::string out;
        for (char c : s) {
            if (c == '<') out += "&lt;";
            else if (c == '>') out += "&gt;";
            else if (c == '&') out += "&amp;";
            else out += c;
        }
        return out;
    }

    emulator_engine& engine_;
    int generation_ = 1;
    duration issued_at_{0};
    duration lifetime_{std::chrono::hours(6)};
    std::string group_, hook_;
    bool tags_ = false;
    std::string action_;
    std::deque<std::string> faults_;
    std::vector<testing::autoscaling_call> calls_;
};

/// Auto Scaling's endpoint in the emulator: POST /autoscaling/ (any path below it).
class emulator_aws_autoscaling final : public emulator_service {
public:
    explicit emulator_aws_autoscaling(emulator_aws_autoscaling_state& state, emulator_engine& engine)
        : state_(state), engine_(engine) {}
    std::string_view name() const noexcept override { return "aws-autoscaling"; }
    bool serves(std::string_view path) const noexcept override {
        return path == "/autoscaling" || path.substr(0, 13) == "/autoscaling/";
    }
    testing::emulated_response handle(emulator_request& req) override {
        auto r = state_.answer(req, *req.vm, engine_.timeline().now());
        // The faults of every service (service "aws-autoscaling", or "any"): a stall or a delay
        // of Auto Scaling itself, on top of the error codes it scripts.
        if (auto f = engine_.take_fault(req)) emulator_faults::apply(*f, r, req.entry);
        return r;
    }
    void restart() override {}  // the state is emulator_aws's, restarted with it

private:
    emulator_aws_autoscaling_state& state_;
    emulator_engine& engine_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
