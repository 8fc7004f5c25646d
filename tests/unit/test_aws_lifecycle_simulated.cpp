// SPDX-License-Identifier: MIT
// An Auto Scaling termination approved through the public API: a poller over the AWS client with a
// lifecycle hook, against the emulated IMDS and Auto Scaling (in-process, on a manual clock). The
// heartbeats while the service prepares, exactly one CompleteLifecycleAction once it is ready
// (signed as Auto Scaling checks it), none after a declined approval, new credentials after a
// rotation, a fleet slot that keeps the heartbeats going, and the notices that can never be
// approved.
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>

#include "catch.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace test_aws_lifecycle_simulated {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::approval_handle;
using forewarn::approval_state;
using forewarn::testing::autoscaling_call;
using forewarn::testing::manual_clock;
using forewarn::testing::scenario;
using forewarn::testing::scenario_config;
using forewarn::testing::simulated_transport;
using client = forewarn::aws::basic_instance_metadata_client<simulated_transport>;
using calls = std::vector<autoscaling_call>;

namespace {

struct world {
    manual_clock clock;
    std::shared_ptr<scenario> s = std::make_shared<scenario>(scenario_config{}, clock);
    std::mutex mutex;
    std::vector<approval_handle> handles;
    std::vector<forewarn::error> errors;

    world() { s->aws_autoscaling("web-asg", "drain-hook"); }

    client make(std::string hook = "drain-hook") {
        forewarn::aws::client_options o;
        o.endpoint = "http://169.254.169.254";
        o.clock = clock;
        o.retry.initial_backoff = 1ms;
        o.retry.max_backoff = 2ms;
        o.rate_limit = false;
        o.lifecycle_hook = std::move(hook);
        o.lifecycle_heartbeat = 10s;
        o.autoscaling_endpoint = "http://169.254.169.254/autoscaling/";
        return client(o, simulated_transport(s));
    }
    forewarn::poller_handlers handlers() {
        forewarn::poller_handlers h;
        h.on_prepare = [this](const forewarn::change&, approval_handle a) {
            std::lock_guard<std::mutex> lock(mutex);
            handles.push_back(a);  // the service prepares: ready() later
        };
        h.on_error = [this](const forewarn::error& e) {
            std::lock_guard<std::mutex> lock(mutex);
            errors.push_back(e);
        };
        return h;
    }
    approval_handle handle(std::size_t i) {
        std::lock_guard<std::mutex> lock(mutex);
        return handles.at(i);
    }
    std::size_t prepared() {
        std::lock_guard<std::mutex> lock(mutex);
        return handles.size();
    }
    calls of(const std::string& action) {
        calls out;
        for (const auto& c : s->aws_autoscaling_calls())
            if (c.action == action) out.push_back(c);
        return out;
    }
};

void check_names(const autoscaling_call& c) {
    CHECK(c.instance_id == "vm0");
    CHECK(c.hook == "drain-hook");
    CHECK(c.group == "web-asg");
}

}  // namespace

TEST_CASE("AWS lifecycle hook: heartbeats while the service prepares, then one CompleteLifecycleAction, signed",
          "[aws][emulator][autoscaling]") {
    world w;
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.start());
    REQUIRE(w.clock.wait_idle());
    w.s->aws_lifecycle("Terminated");  // scaled in: the hook holds the instance in Terminating:Wait
    REQUIRE(w.clock.advance_and_wait(5s));  // target-lifecycle-state is read every poll_interval
    REQUIRE(w.prepared() == 1);
    CHECK(w.handle(0).event_id() == "autoscaling-termination");
    CHECK(w.s->aws_lifecycle_action() == "Terminating:Wait");
    const auto latest = p.latest_document();
    REQUIRE(latest.find("autoscaling-termination"));
    CHECK(latest.find("autoscaling-termination")->approvable == true);

    // Three heartbeat intervals while the prepare works.
    for (int i = 0; i < 3; ++i) REQUIRE(w.clock.advance_and_wait(10s));
    const auto beats = w.of("RecordLifecycleActionHeartbeat");
    REQUIRE(beats.size() >= 3);
    CHECK(beats.size() <= 4);  // one at the notice, one per interval
    for (std::size_t i = 0; i < beats.size(); ++i) {
        INFO("heartbeat " << i);
        CHECK(beats[i].signature_valid);
        CHECK(beats[i].status == 200);
        check_names(beats[i]);
        if (i > 0) CHECK(beats[i].at - beats[i - 1].at >= 10s);
    }
    CHECK(w.of("CompleteLifecycleAction").empty());

    w.handle(0).ready();
    REQUIRE(w.clock.wait_idle());
    const auto done = w.of("CompleteLifecycleAction");
    REQUIRE(done.size() == 1);
    CHECK(done[0].result == "CONTINUE");
    CHECK(done[0].signature_valid);
    CHECK(done[0].status == 200);
    check_names(done[0]);
    CHECK(w.s->aws_lifecycle_action() == "Terminating:Proceed");
    CHECK(w.handle(0).status().state == approval_state::approved);
    // No heartbeat after the completion.
    const auto before = w.of("RecordLifecycleActionHeartbeat").size();
    for (int i = 0; i < 3; ++i) REQUIRE(w.clock.advance_and_wait(10s));
    CHECK(w.of("RecordLifecycleActionHeartbeat").size() == before);
    CHECK(w.of("CompleteLifecycleAction").size() == 1);
    p.stop();
    CHECK(w.errors.empty());
}

TEST_CASE("AWS lifecycle hook: a declined approval completes nothing, and its heartbeats stop", "[aws][emulator][autoscaling]") {
    world w;
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.start());
    REQUIRE(w.clock.wait_idle());
    w.s->aws_lifecycle("Terminated");
    REQUIRE(w.clock.advance_and_wait(5s));
    REQUIRE(w.prepared() == 1);
    REQUIRE(w.clock.advance_and_wait(10s));
    REQUIRE_FALSE(w.of("RecordLifecycleActionHeartbeat").empty());
    w.handle(0).decline("hook prepare failed (exit 1)");  // what forewarn-watch does when its hook fails
    REQUIRE(w.clock.wait_idle());
    CHECK(w.handle(0).status().state == approval_state::not_approved);
    const auto before = w.of("RecordLifecycleActionHeartbeat").size();
    for (int i = 0; i < 5; ++i) REQUIRE(w.clock.advance_and_wait(10s));
    CHECK(w.of("RecordLifecycleActionHeartbeat").size() == before);
    CHECK(w.of("CompleteLifecycleAction").empty());
    CHECK(w.s->aws_lifecycle_action() == "Terminating:Wait");  // the group goes on at its own timeout
    p.stop();
}

TEST_CASE("AWS lifecycle hook: a scale-in withdrawn stops its heartbeats, and a new one starts them again",
          "[aws][emulator][autoscaling]") {
    world w;
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.start());
    REQUIRE(w.clock.wait_idle());
    w.s->aws_lifecycle("Terminated");
    REQUIRE(w.clock.advance_and_wait(5s));
    REQUIRE(w.clock.advance_and_wait(10s));
    REQUIRE_FALSE(w.of("RecordLifecycleActionHeartbeat").empty());
    w.s->aws_lifecycle("InService");  // the group changed its mind: a recover
    REQUIRE(w.clock.advance_and_wait(5s));
    const auto before = w.of("RecordLifecycleActionHeartbeat").size();
    for (int i = 0; i < 4; ++i) REQUIRE(w.clock.advance_and_wait(10s));
    CHECK(w.of("RecordLifecycleActionHeartbeat").size() == before);
    w.s->aws_lifecycle("Terminated");  // scaled in again: a new action, heartbeats again
    REQUIRE(w.clock.advance_and_wait(5s));
    REQUIRE(w.clock.advance_and_wait(10s));
    CHECK(w.of("RecordLifecycleActionHeartbeat").size() > before);
    CHECK(w.of("CompleteLifecycleAction").empty());
    p.stop();
}

TEST_CASE("AWS lifecycle hook: credentials rotated during the run - the next call uses the new ones",
          "[aws][emulator][autoscaling]") {
    world w;
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.start());
    REQUIRE(w.clock.wait_idle());
    w.s->aws_lifecycle("Terminated");
    REQUIRE(w.clock.advance_and_wait(5s));
    REQUIRE(w.clock.advance_and_wait(10s));
    const auto first = w.of("RecordLifecycleActionHeartbeat");
    REQUIRE_FALSE(first.empty());
    const std::string old_key = first.back().access_key_id;
    w.s->rotate_aws_credentials();
    REQUIRE(w.clock.advance_and_wait(10s));
    w.handle(0).ready();
    REQUIRE(w.clock.wait_idle());
    const auto all = w.s->aws_autoscaling_calls();
    // The first call after the rotation is refused as expired, read again, and sent with the new key.
    bool expired_seen = false;
    for (const auto& c : all)
        if (c.code == "ExpiredToken") {
            expired_seen = true;
            CHECK(c.access_key_id == old_key);
        }
    CHECK(expired_seen);
    REQUIRE(all.back().action == "CompleteLifecycleAction");
    CHECK(all.back().status == 200);
    CHECK(all.back().access_key_id != old_key);
    CHECK(w.s->aws_lifecycle_action() == "Terminating:Proceed");
    p.stop();
}

namespace {

// A fleet budget that is full until told otherwise; counts admit() per event.
struct gate : forewarn::approval_coordinator {
    std::mutex m;
    bool open = false;
    std::vector<std::string> admitted;
    forewarn::result<void> start(const forewarn::coordinator_context&) override { return {}; }
    void stop() noexcept override {}
    void observe(const std::vector<forewarn::local_event>&) override {}
    forewarn::result<bool> admit(const forewarn::event& e) override {
        std::lock_guard<std::mutex> lock(m);
        admitted.push_back(e.id);
        return open;
    }
    std::vector<std::string> asked() {
        std::lock_guard<std::mutex> lock(m);
        return admitted;
    }
};

}  // namespace

TEST_CASE("AWS lifecycle hook: under a full fleet budget the termination waits for its slot and keeps its heartbeats - "
          "Spot, rebalance and scheduled events never ask for one",
          "[aws][emulator][autoscaling][coordinator]") {
    world w;
    auto budget = std::make_shared<gate>();
    forewarn::poller_options o;
    o.coordinator = budget;
    forewarn::poller_handlers h = w.handlers();
    h.on_prepare = [&](const forewarn::change&, approval_handle a) { a.ready(); };  // ready at once
    forewarn::poller<client> p(w.make(), h, o);
    REQUIRE(p.start());
    REQUIRE(w.clock.wait_idle());
    w.s->aws_spot("terminate", 2min);
    w.s->aws_rebalance();
    w.s->add_aws_event("system-reboot", 24h, std::nullopt, "instance-event-reboot");
    w.s->aws_lifecycle("Terminated");
    REQUIRE(w.clock.advance_and_wait(5s));
    for (int i = 0; i < 3; ++i) REQUIRE(w.clock.advance_and_wait(10s));
    auto asked = budget->asked();
    REQUIRE_FALSE(asked.empty());
    for (const auto& id : asked) CHECK(id == "autoscaling-termination");
    CHECK(w.of("RecordLifecycleActionHeartbeat").size() >= 3);
    CHECK(w.of("CompleteLifecycleAction").empty());
    CHECK(p.approval("spot-instance-action").status().state == approval_state::not_approved);
    CHECK(p.approval("autoscaling-termination").status().why == "waiting for a fleet slot");
    {
        std::lock_guard<std::mutex> lock(budget->m);
        budget->open = true;
    }
    REQUIRE(w.clock.advance_and_wait(10s));  // the next look at the budget
    CHECK(w.of("CompleteLifecycleAction").size() == 1);
    for (const auto& id : budget->asked()) CHECK(id == "autoscaling-termination");
    p.stop();
}

TEST_CASE("AWS lifecycle hook: AccessDenied is a clear error on the event - no hook named, nothing is sent",
          "[aws][emulator][autoscaling]") {
    world w;
    forewarn::poller<client> p(w.make(), w.handlers());
    w.s->aws_lifecycle("Terminated");
    REQUIRE(p.poll_once());  // the notice
    REQUIRE(w.prepared() == 1);
    w.s->aws_autoscaling_fault("AccessDenied", 1);
    w.handle(0).ready();
    p.approve_due();  // the completion is refused
    const auto st = p.approval("autoscaling-termination").status();
    CHECK(st.state == approval_state::failed);
    CHECK(st.error.http_status == 403);
    CHECK(st.error.message ==
          "Auto Scaling CompleteLifecycleAction: 403 AccessDenied: User: arn:aws:sts::123456789012:assumed-role/"
          "forewarn-emulator-role/vm0 is not authorized to perform: autoscaling:CompleteLifecycleAction on resource: "
          "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:*:autoScalingGroupName/web-asg because no "
          "identity-based policy allows it");
    REQUIRE_FALSE(w.errors.empty());
    CHECK(w.errors.back().message == st.error.message);
    REQUIRE(p.poll_once());  // tried again at the next document: the permission is there now
    CHECK(p.approval("autoscaling-termination").status().state == approval_state::approved);
    CHECK(w.s->aws_lifecycle_action() == "Terminating:Proceed");

    world quiet;
    forewarn::poller<client> q(quiet.make(""), quiet.handlers());
    quiet.s->aws_lifecycle("Terminated");
    REQUIRE(q.poll_once());
    REQUIRE(q.poll_once());
    CHECK(quiet.s->aws_autoscaling_calls().empty());
    REQUIRE(quiet.prepared() == 1);
    quiet.handle(0).ready();
    CHECK(quiet.handle(0).status().state == approval_state::not_approved);
}

TEST_CASE("emulated Auto Scaling: it refuses a tampered, unsigned, expired or misaddressed call as AWS does",
          "[aws][emulator][autoscaling]") {
    world w;
    w.s->aws_lifecycle("Terminated");
    forewarn::aws::credentials creds{"ASIAFOREWARN00000001", "emulator-secret-1-wJalrXUtnFEMI/K7MDENG",
                                     "emulator-session-token-1", std::nullopt};
    auto call = [&](const std::string& body, const forewarn::aws::credentials& c, bool tamper = false) {
        forewarn::http_request r;
        r.method = forewarn::http_method::post;
        r.url = "http://169.254.169.254/autoscaling/";
        r.headers.push_back({"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"});
        r.body = body;
        forewarn::aws::sigv4_options so;
        so.region = "us-east-1";
        so.service = "autoscaling";
        REQUIRE(forewarn::aws::sign_v4(r, c, so, w.clock.wall_now()));
        if (tamper) r.body += "&x=1";
        return w.s->handle(r);
    };
    const std::string beat = forewarn::aws::query_body(
        "RecordLifecycleActionHeartbeat", {{"AutoScalingGroupName", "web-asg"}, {"InstanceId", "vm0"}, {"LifecycleHookName", "drain-hook"}});
    CHECK(call(beat, creds).status == 200);
    const auto tampered = call(beat, creds, true);
    CHECK(tampered.status == 403);
    CHECK(tampered.body.find("<Code>SignatureDoesNotMatch</Code>") != std::string::npos);
    auto stranger = creds;
    stranger.access_key_id = "AKIDSTRANGER";
    CHECK(call(beat, stranger).body.find("<Code>InvalidClientTokenId</Code>") != std::string::npos);
    const auto other = forewarn::aws::query_body(
        "RecordLifecycleActionHeartbeat", {{"AutoScalingGroupName", "web-asg"}, {"InstanceId", "i-other"}, {"LifecycleHookName", "drain-hook"}});
    CHECK(call(other, creds).body.find("No active Lifecycle Action found with instance ID i-other") != std::string::npos);
    w.s->rotate_aws_credentials();
    const auto expired = call(beat, creds);
    CHECK(expired.status == 400);
    CHECK(expired.body.find("<Code>ExpiredToken</Code>") != std::string::npos);
    forewarn::http_request unsigned_call;
    unsigned_call.method = forewarn::http_method::post;
    unsigned_call.url = "http://169.254.169.254/autoscaling/";
    unsigned_call.body = beat;
    CHECK(w.s->handle(unsigned_call).body.find("<Code>MissingAuthenticationToken</Code>") != std::string::npos);
    const auto log = w.s->aws_autoscaling_calls();
    REQUIRE(log.size() == 6);
    CHECK(log[0].signature_valid);
    CHECK_FALSE(log[1].signature_valid);
}

TEST_CASE("AWS lifecycle hook: a heartbeat shorter than the poll interval is kept, and a hanging Auto Scaling never "
          "holds up the Spot notice's reads",
          "[aws][emulator][autoscaling][heartbeat]") {
    world w;
    forewarn::aws::client_options o;
    REQUIRE(o.poll_interval == 5s);  // the defaults, kept: a 5 s poll interval, the Spot key every second
    REQUIRE(o.spot_interval == 1s);
    o.endpoint = "http://169.254.169.254";
    o.clock = w.clock;
    o.retry.initial_backoff = 1ms;
    o.retry.max_backoff = 2ms;
    o.rate_limit = false;
    o.lifecycle_hook = "drain-hook";
    o.lifecycle_heartbeat = 1s;
    o.autoscaling_endpoint = "http://169.254.169.254/autoscaling/";
    forewarn::poller<client> p(client(o, simulated_transport(w.s)), w.handlers());
    REQUIRE(p.start());
    REQUIRE(w.clock.wait_idle());
    w.s->aws_lifecycle("Terminated");
    REQUIRE(w.clock.advance_and_wait(5s));
    REQUIRE(w.prepared() == 1);  // the service prepares: heartbeats meanwhile
    const auto before = w.of("RecordLifecycleActionHeartbeat").size();
    for (int i = 0; i < 10; ++i) REQUIRE(w.clock.advance_and_wait(1s));
    const auto beats = w.of("RecordLifecycleActionHeartbeat").size() - before;
    INFO(beats << " heartbeats in 10 s");
    CHECK(beats >= 9);  // one a second, not one a poll interval (5 s)

    // Auto Scaling stops answering: each heartbeat gives up within half the Spot key's period,
    // and the Spot notice is still read every second.
    forewarn::testing::fault_spec hang;
    hang.what = forewarn::testing::fault_spec::kind::stall;
    hang.service = "aws-autoscaling";
    hang.count = -1;
    w.s->inject_fault(hang);
    w.s->clear_requests();
    for (int i = 0; i < 10; ++i) REQUIRE(w.clock.advance_and_wait(1s));
    std::size_t spot_reads = 0, stalled = 0;
    for (const auto& r : w.s->requests()) {
        if (r.target == "/latest/meta-data/spot/instance-action") ++spot_reads;
        if (r.service == "aws-autoscaling" && r.fault == "stall") ++stalled;
    }
    CHECK(stalled >= 5);  // Auto Scaling was asked, and hung, all along
    INFO(spot_reads << " Spot reads in 10 s with Auto Scaling hanging");
    CHECK(spot_reads >= 9);
    p.stop();
}

}  // namespace test_aws_lifecycle_simulated
