// SPDX-License-Identifier: MIT
// aws::basic_autoscaling_client over testing::fake_transport: the two lifecycle calls as they go on
// the wire (form, signature), the API's XML errors, retries, the credentials' refresh after
// ExpiredToken, and cancel(). The emulator's end of the same calls is tested with the AWS client.
#include <forewarn/aws/autoscaling.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/time.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace test_aws_autoscaling {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::errc;
using forewarn::error;
using forewarn::find_header;
using forewarn::result;
using forewarn::aws::credentials;
using forewarn::aws::lifecycle_action;
using forewarn::testing::fake_transport;
using autoscaling_client = forewarn::aws::basic_autoscaling_client<fake_transport>;

namespace {

forewarn::aws::autoscaling_options options() {
    forewarn::aws::autoscaling_options o;
    o.region = "eu-west-1";
    o.initial_backoff = 1ms;
    return o;
}

lifecycle_action action() { return {"web-asg", "drain-hook", "i-0123456789abcdef0"}; }

// Credentials that note each ask, and whether it was for a refresh.
struct counting_credentials {
    std::vector<bool> asked;
    forewarn::aws::credentials_source source() {
        return [this](bool refresh) -> result<credentials> {
            asked.push_back(refresh);
            return credentials{refresh ? "AKIDNEW" : "AKIDOLD", "secret", "token-" + std::to_string(asked.size()), std::nullopt};
        };
    }
};

std::string error_xml(const std::string& code, const std::string& message) {
    return "<ErrorResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\"><Error><Type>Sender</Type><Code>" + code +
           "</Code><Message>" + message + "</Message></Error><RequestId>1d3e7d2a-0000</RequestId></ErrorResponse>";
}

// "20150830T123600Z" as a time point.
std::chrono::system_clock::time_point amz_time(const std::string& t) {
    const std::string iso = t.substr(0, 4) + "-" + t.substr(4, 2) + "-" + t.substr(6, 2) + "T" + t.substr(9, 2) + ":" +
                            t.substr(11, 2) + ":" + t.substr(13, 2) + "Z";
    auto p = forewarn::parse_time(iso);
    REQUIRE(p);
    REQUIRE(p->has_value());
    return **p;
}

}  // namespace

TEST_CASE("autoscaling: CompleteLifecycleAction is one signed form POST to the region's endpoint", "[aws][autoscaling]") {
    fake_transport t;
    t.respond(200, "<CompleteLifecycleActionResponse/>");
    counting_credentials creds;
    autoscaling_client c(options(), creds.source(), t);
    REQUIRE(c.complete_lifecycle_action(action()));
    REQUIRE(t.request_count() == 1);
    const auto req = t.requests()[0];
    CHECK(req.method == forewarn::http_method::post);
    CHECK(req.url == "https://autoscaling.eu-west-1.amazonaws.com/");
    CHECK(req.body ==
          "Action=CompleteLifecycleAction&Version=2011-01-01&AutoScalingGroupName=web-asg&InstanceId=i-0123456789abcdef0"
          "&LifecycleActionResult=CONTINUE&LifecycleHookName=drain-hook");
    CHECK(*find_header(req.headers, "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8");
    const auto* auth = find_header(req.headers, "Authorization");
    REQUIRE(auth);
    CHECK(auth->rfind("AWS4-HMAC-SHA256 Credential=AKIDOLD/", 0) == 0);
    CHECK(auth->find("/eu-west-1/autoscaling/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,") !=
          std::string::npos);
    CHECK(*find_header(req.headers, "X-Amz-Security-Token") == "token-1");
    // The signature is the one sign_v4 gives for that request at its X-Amz-Date.
    forewarn::http_request again = req;
    again.headers.resize(1);  // Content-Type only
    forewarn::aws::sigv4_options so;
    so.region = "eu-west-1";
    so.service = "autoscaling";
    const auto s = forewarn::aws::sign_v4(again, {"AKIDOLD", "secret", "token-1", std::nullopt}, so,
                                          amz_time(*find_header(req.headers, "X-Amz-Date")));
    REQUIRE(s);
    CHECK(s->authorization == *auth);
    CHECK(creds.asked == std::vector<bool>{false});
}

TEST_CASE("autoscaling: RecordLifecycleActionHeartbeat names the group, hook and instance, and no result",
          "[aws][autoscaling]") {
    fake_transport t;
    t.respond(200, "<RecordLifecycleActionHeartbeatResponse/>");
    counting_credentials creds;
    auto o = options();
    o.endpoint = "http://127.0.0.1:9/autoscaling/";  // a VPC endpoint, or a test's server
    autoscaling_client c(o, creds.source(), t);
    REQUIRE(c.record_lifecycle_action_heartbeat({"my group", "hook/1", "i-1"}));
    const auto req = t.requests().at(0);
    CHECK(req.url == "http://127.0.0.1:9/autoscaling/");
    CHECK(req.body == "Action=RecordLifecycleActionHeartbeat&Version=2011-01-01&AutoScalingGroupName=my%20group"
                      "&InstanceId=i-1&LifecycleHookName=hook%2F1");
    CHECK(*find_header(req.headers, "Host") == "127.0.0.1:9");
}

TEST_CASE("autoscaling: an ErrorResponse becomes an error with AWS's code and words, not retried", "[aws][autoscaling]") {
    fake_transport t;
    t.respond(403, error_xml("AccessDenied", "User: arn:aws:sts::1:assumed-role/r/i-1 is not authorized to perform: "
                                             "autoscaling:CompleteLifecycleAction on resource: &quot;web-asg&quot;"));
    counting_credentials creds;
    autoscaling_client c(options(), creds.source(), t);
    const auto r = c.complete_lifecycle_action(action());
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::http_status);
    CHECK(r.error().http_status == 403);
    CHECK(r.error().message ==
          "Auto Scaling CompleteLifecycleAction: 403 AccessDenied: User: arn:aws:sts::1:assumed-role/r/i-1 is not authorized to "
          "perform: autoscaling:CompleteLifecycleAction on resource: \"web-asg\"");
    CHECK(t.request_count() == 1);

    fake_transport v;
    v.respond(400, error_xml("ValidationError", "No active Lifecycle Action found with instance ID i-1"));
    autoscaling_client cv(options(), creds.source(), v);
    const auto rv = cv.complete_lifecycle_action(action());
    REQUIRE_FALSE(rv);
    CHECK(rv.error().message.find("ValidationError: No active Lifecycle Action found") != std::string::npos);
    CHECK(v.request_count() == 1);
}

TEST_CASE("autoscaling: Throttling and 5xx are tried again with backoff, up to max_attempts", "[aws][autoscaling]") {
    fake_transport t;
    t.respond(400, error_xml("Throttling", "Rate exceeded")).respond(503, "").respond(200, "");
    counting_credentials creds;
    autoscaling_client c(options(), creds.source(), t);
    REQUIRE(c.record_lifecycle_action_heartbeat(action()));
    CHECK(t.request_count() == 3);

    fake_transport down;
    for (int i = 0; i < 6; ++i) down.respond(500, "<html>oops</html>");
    autoscaling_client cd(options(), creds.source(), down);
    const auto r = cd.record_lifecycle_action_heartbeat(action());
    REQUIRE_FALSE(r);
    CHECK(r.error().http_status == 500);
    CHECK(r.error().message == "Auto Scaling RecordLifecycleActionHeartbeat: 500 (no ErrorResponse)");
    CHECK(down.request_count() == 4);  // autoscaling_options::max_attempts

    // Auto Scaling's other throttling codes, a 429 and a failed connection are tried again too.
    fake_transport busy;
    busy.respond(400, error_xml("ThrottlingException", "slow down"))
        .respond(400, error_xml("RequestLimitExceeded", "slow down"))
        .respond(429, "")
        .respond(200, "");
    autoscaling_client cb(options(), creds.source(), busy);
    REQUIRE(cb.record_lifecycle_action_heartbeat(action()));
    CHECK(busy.request_count() == 4);
    fake_transport reset;
    reset.fail(error(errc::transport, "connection reset", forewarn::network_failure::reset)).respond(200, "");
    autoscaling_client cr(options(), creds.source(), reset);
    REQUIRE(cr.record_lifecycle_action_heartbeat(action()));
    CHECK(reset.request_count() == 2);
}

TEST_CASE("autoscaling: ExpiredToken reads the credentials again and tries once more at once", "[aws][autoscaling]") {
    fake_transport t;
    t.respond(400, error_xml("ExpiredToken", "The security token included in the request is expired")).respond(200, "");
    counting_credentials creds;
    autoscaling_client c(options(), creds.source(), t);
    REQUIRE(c.complete_lifecycle_action(action()));
    CHECK(creds.asked == std::vector<bool>{false, true});
    REQUIRE(t.request_count() == 2);
    CHECK(find_header(t.requests()[1].headers, "Authorization")->find("Credential=AKIDNEW/") != std::string::npos);

    // Expired again after the refresh: that is the error, without a loop.
    fake_transport twice;
    for (int i = 0; i < 3; ++i) twice.respond(400, error_xml("ExpiredToken", "expired"));
    counting_credentials c2;
    autoscaling_client ct(options(), c2.source(), twice);
    const auto r = ct.complete_lifecycle_action(action());
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("ExpiredToken") != std::string::npos);
    CHECK(c2.asked == std::vector<bool>{false, true});
    CHECK(twice.request_count() == 2);

    // The send after the refresh is within the same try: four tries of 500 follow it.
    fake_transport then_down;
    then_down.respond(400, error_xml("ExpiredToken", "expired"));
    for (int i = 0; i < 6; ++i) then_down.respond(500, "");
    counting_credentials c3;
    autoscaling_client cd(options(), c3.source(), then_down);
    CHECK(cd.complete_lifecycle_action(action()).error().http_status == 500);
    CHECK(then_down.request_count() == 5);

    // A refresh that fails (the metadata's 503) is the credentials' failure, not Auto Scaling's
    // answer: said as it is, and not tried again.
    fake_transport once;
    once.respond(400, error_xml("ExpiredToken", "expired"));
    std::vector<bool> asked;
    autoscaling_client cf(options(), [&](bool refresh) -> result<credentials> {
        asked.push_back(refresh);
        if (refresh) return error(errc::http_status, "iam/security-credentials/r: 503", 503);
        return credentials{"AKIDOLD", "secret", "token", std::nullopt};
    }, once);
    const auto failed = cf.complete_lifecycle_action(action());
    REQUIRE_FALSE(failed);
    CHECK(failed.error().http_status == 503);
    CHECK(failed.error().message == "Auto Scaling CompleteLifecycleAction: no credentials: iam/security-credentials/r: 503");
    CHECK(asked == std::vector<bool>{false, true});
    CHECK(once.request_count() == 1);
}

TEST_CASE("autoscaling: no credentials, no region: a clear error and nothing sent", "[aws][autoscaling]") {
    fake_transport t;
    autoscaling_client none(options(), [](bool) -> result<credentials> {
        return error(errc::http_status, "iam/security-credentials/: 404 Not Found (no instance profile?)", 404);
    }, t);
    const auto r = none.complete_lifecycle_action(action());
    REQUIRE_FALSE(r);
    CHECK(r.error().message ==
          "Auto Scaling CompleteLifecycleAction: no credentials: iam/security-credentials/: 404 Not Found (no instance profile?)");
    // Credentials that failed with a 503 (the metadata's) are not Auto Scaling's answer: not tried again.
    int asked = 0;
    autoscaling_client busy(options(), [&](bool) -> result<credentials> {
        ++asked;
        return error(errc::http_status, "iam/security-credentials/: 503", 503);
    }, t);
    const auto r503 = busy.complete_lifecycle_action(action());
    REQUIRE_FALSE(r503);
    CHECK(r503.error().http_status == 503);
    CHECK(asked == 1);
    auto o = options();
    o.region.clear();
    autoscaling_client no_region(o, counting_credentials{}.source(), t);
    CHECK(no_region.complete_lifecycle_action(action()).error().code == errc::invalid_argument);
    CHECK(t.request_count() == 0);
}

TEST_CASE("autoscaling: cancel() ends a call waiting to retry", "[aws][autoscaling]") {
    fake_transport t;
    t.otherwise([](const forewarn::http_request&) -> result<forewarn::http_response> {
        forewarn::http_response r;
        r.status = 503;
        return r;
    });
    auto o = options();
    o.initial_backoff = 60s;  // the retry would wait a minute
    counting_credentials creds;
    autoscaling_client c(o, creds.source(), t);
    std::thread stopper([&] {
        while (t.request_count() == 0) std::this_thread::sleep_for(1ms);  // bounded: the call sends at once
        c.cancel();
    });
    const auto r = c.record_lifecycle_action_heartbeat(action());
    stopper.join();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::cancelled);
    CHECK(r.error().message == "Auto Scaling RecordLifecycleActionHeartbeat: cancelled while waiting to retry");
}

TEST_CASE("parse_error_response: AWS's XML, its entities, and what is not one", "[aws][autoscaling]") {
    auto e = forewarn::aws::parse_error_response(error_xml("AccessDenied", "a &lt;b&gt; &amp; &#65;&#x42; &bogus; &#1;"));
    REQUIRE(e);
    CHECK(e->code == "AccessDenied");
    CHECK(e->type == "Sender");
    CHECK(e->request_id == "1d3e7d2a-0000");
    CHECK(e->message == "a <b> & AB &bogus; ?");
    CHECK_FALSE(forewarn::aws::parse_error_response("<html>503</html>"));
    CHECK_FALSE(forewarn::aws::parse_error_response(""));
    CHECK_FALSE(forewarn::aws::parse_error_response("<ErrorResponse><Error><Code>unclosed"));
    // Bounded: a huge message is cut, a code past the first 64 KiB is not looked for.
    auto big = forewarn::aws::parse_error_response(error_xml("Throttling", std::string(100000, 'x')));
    REQUIRE(big);  // the code is read; the message, unclosed within the first 64 KiB, is not
    CHECK(big->code == "Throttling");
    CHECK(big->message.empty());
    auto cut = forewarn::aws::parse_error_response("<ErrorResponse><Error><Code>Throttling</Code><Message>" +
                                                   std::string(5000, 'y') + "</Message></Error></ErrorResponse>");
    REQUIRE(cut);
    CHECK(cut->message.size() == 1024);
    CHECK(forewarn::aws::autoscaling_endpoint("us-east-1") == "https://autoscaling.us-east-1.amazonaws.com/");
    CHECK(forewarn::aws::autoscaling_endpoint("cn-north-1") == "https://autoscaling.cn-north-1.amazonaws.com.cn/");
}

}  // namespace test_aws_autoscaling
