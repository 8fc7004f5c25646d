// SPDX-License-Identifier: MIT
// Pollers over the real Azure and GCE clients and the emulator's engine in-process, in a
// testing::harness: one manual clock for the services, the clients and the pollers' threads.
// The protocol's scenarios, faults between polls, two VMs electing a leader, restarts. Nothing
// sleeps: harness::advance() returns once every poller waits again.
#include <forewarn/state_file.hpp>
#include <forewarn/testing/harness.hpp>

#include "catch.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace test_poller_simulated {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::approval_handle;
using forewarn::approval_scope;
using forewarn::change;
using forewarn::poller_handlers;
using forewarn::poller_options;
using forewarn::testing::azure_event_spec;
using forewarn::testing::azure_event_state;
using forewarn::testing::fault_spec;
using forewarn::testing::harness;
using forewarn::testing::scenario_config;
using namespace std::chrono_literals;
using strings = std::vector<std::string>;

namespace {

scenario_config two_vms() {
    scenario_config c;
    c.vms[0].name = "WestNO_0";
    c.vms.push_back({});
    c.vms[1].name = "WestNO_1";
    return c;
}

/// Records "kind:id[:reason]" per callback, approvals and errors; thread-safe. Read it on the
/// test's thread after harness::advance().
struct recorder {
    std::mutex mutex;
    strings calls;
    std::vector<forewarn::error> errors;
    std::vector<strings> approvals;

    poller_handlers handlers(bool ready = true) {
        poller_handlers h;
        h.on_prepare = [this, ready](const change& c, approval_handle a) {
            add("prepare:" + c.event.id);
            if (ready) a.ready();
        };
        h.on_started = [this](const change& c) { add("started:" + c.event.id); };
        h.on_recover = [this](const change& c) {
            add("recover:" + c.event.id + ":" + std::string(forewarn::to_string(c.reason)));
        };
        h.on_updated = [this](const change& c) { add("updated:" + c.event.id); };
        h.on_error = [this](const forewarn::error& e) {
            std::lock_guard<std::mutex> lock(mutex);
            errors.push_back(e);
        };
        h.on_approved = [this](const strings& ids) {
            std::lock_guard<std::mutex> lock(mutex);
            approvals.push_back(ids);
        };
        return h;
    }
    void add(std::string s) {
        std::lock_guard<std::mutex> lock(mutex);
        calls.push_back(std::move(s));
    }
    strings snapshot() {
        std::lock_guard<std::mutex> lock(mutex);
        return calls;
    }
    std::vector<forewarn::error> errs() {
        std::lock_guard<std::mutex> lock(mutex);
        return errors;
    }
};

/// Each event's callbacks, in order, must read: (prepare | started) [updated | started]* recover,
/// with at most one prepare and one started, and nothing after the recover.
void check_life_cycles(const strings& calls) {
    std::map<std::string, strings> per_event;
    for (const auto& c : calls) {
        const auto colon = c.find(':');
        const auto kind = c.substr(0, colon);
        auto id = c.substr(colon + 1);
        if (kind == "recover") id = id.substr(0, id.rfind(':'));
        per_event[id].push_back(kind);
    }
    for (const auto& [id, kinds] : per_event) {
        INFO("event " << id);
        REQUIRE_FALSE(kinds.empty());
        CHECK((kinds.front() == "prepare" || kinds.front() == "started"));
        CHECK(std::count(kinds.begin(), kinds.end(), "prepare") <= 1);
        CHECK(std::count(kinds.begin(), kinds.end(), "started") <= 1);
        CHECK(std::count(kinds.begin(), kinds.end(), "recover") <= 1);
        const auto rec = std::find(kinds.begin(), kinds.end(), "recover");
        if (rec != kinds.end()) CHECK(rec + 1 == kinds.end());
    }
}

std::size_t count_prefix(const strings& calls, const std::string& prefix) {
    return static_cast<std::size_t>(
        std::count_if(calls.begin(), calls.end(), [&](const std::string& c) { return c.rfind(prefix, 0) == 0; }));
}

/// Approval POSTs in the scenario's log, as "vm:body".
strings approval_posts(forewarn::testing::scenario& s) {
    strings out;
    for (const auto& r : s.requests())
        if (r.service == "azure" && r.method == forewarn::http_method::post) out.push_back(r.vm + ":" + r.body);
    return out;
}

poller_options scope(approval_scope s) {
    poller_options o;
    o.approval.scope = s;
    return o;
}

}  // namespace

TEST_CASE("simulated: a platform Freeze, approved when ready, started, completed", "[poller][simulated]") {
    harness h(two_vms());
    recorder r;
    auto& p = h.add_azure_poller("WestNO_0", r.handlers(), scope(approval_scope::own));
    REQUIRE(h.start());
    azure_event_spec spec;
    spec.id = "FREEZE-1";
    spec.resources = {"WestNO_0", "WestNO_1"};
    h.scenario().add_azure_event(spec);
    REQUIRE(h.advance(1s));  // a poll: prepare, ready, approved
    CHECK(p.self() == "WestNO_0");
    CHECK(approval_posts(h.scenario()) == strings{"WestNO_0:{\"StartRequests\":[{\"EventId\":\"FREEZE-1\"}]}"});
    const auto state = h.scenario().azure_event("FREEZE-1");
    REQUIRE(state);
    CHECK(state->state == azure_event_state::phase::started);
    CHECK(state->approved_by == "WestNO_0");
    REQUIRE(h.run_for(10s));
    CHECK(r.snapshot() == strings{"prepare:FREEZE-1", "started:FREEZE-1", "recover:FREEZE-1:completed"});
    CHECK(h.scenario().azure_event("FREEZE-1")->ended == "completed");
    CHECK(r.errs().empty());
}

TEST_CASE("simulated: dry run decides as configured, sends nothing, and never counts it as approved",
          "[poller][simulated][dry_run]") {
    harness h(two_vms());
    recorder r;
    strings would;
    std::mutex would_mutex;
    std::optional<forewarn::approval_status> final_status;
    auto handlers = r.handlers(false);
    handlers.on_prepare = [&](const change& c, approval_handle a) {
        r.add("prepare:" + c.event.id);
        a.ready([&](const forewarn::approval_status& st) {
            std::lock_guard<std::mutex> lock(would_mutex);
            final_status = st;
        });
    };
    handlers.on_would_approve = [&](const strings& ids) {
        std::lock_guard<std::mutex> lock(would_mutex);
        would.insert(would.end(), ids.begin(), ids.end());
    };
    auto o = scope(approval_scope::own);
    o.approval.dry_run = true;
    auto& p = h.add_azure_poller("WestNO_0", handlers, o);
    REQUIRE(h.start());
    azure_event_spec mine;
    mine.id = "FREEZE-MINE";
    mine.resources = {"WestNO_0"};
    h.scenario().add_azure_event(mine);
    azure_event_spec theirs;
    theirs.id = "FREEZE-THEIRS";
    theirs.resources = {"WestNO_1"};
    h.scenario().add_azure_event(theirs);
    REQUIRE(h.run_for(5s));  // several polls: reported once, never sent
    {
        std::lock_guard<std::mutex> lock(would_mutex);
        CHECK(would == strings{"FREEZE-MINE"});  // own scope: not the other VM's event
        REQUIRE(final_status);
        CHECK(final_status->state == forewarn::approval_state::not_approved);
        CHECK(final_status->why.find("dry run") != std::string::npos);
    }
    CHECK(approval_posts(h.scenario()).empty());
    CHECK(h.scenario().azure_event("FREEZE-MINE")->state == azure_event_state::phase::scheduled);
    CHECK(p.health().approvals == 0);
    const auto awaiting = p.health().awaiting_approval;
    CHECK(std::find(awaiting.begin(), awaiting.end(), "FREEZE-MINE") == awaiting.end());  // decided, not waiting
    // Not approved, so not taken for started by approval: it is cancelled before its NotBefore
    // while watched, and the reason says cancelled (an approved event would read completed).
    REQUIRE(h.scenario().cancel_azure_event("FREEZE-MINE"));
    REQUIRE(h.run_for(3s));
    const auto calls = r.snapshot();
    CHECK(std::count(calls.begin(), calls.end(), "recover:FREEZE-MINE:cancelled") == 1);
    CHECK(r.errs().empty());
}

TEST_CASE("simulated: the protocol's scenarios, event by event", "[poller][simulated]") {
    harness h(two_vms());
    recorder r;
    h.add_azure_poller("WestNO_0", r.handlers(), scope(approval_scope::never));  // events run to NotBefore
    REQUIRE(h.start());

    SECTION("user Reboot: prepare, started at NotBefore, completed") {
        azure_event_spec spec;
        spec.id = "REBOOT";
        spec.type = "Reboot";
        spec.source = "User";
        spec.impact = std::chrono::minutes(2);
        h.scenario().add_azure_event(spec);
        REQUIRE(h.run_for(18min));
        CHECK(r.snapshot() == strings{"prepare:REBOOT", "started:REBOOT", "recover:REBOOT:completed"});
    }
    SECTION("cancelled Redeploy, watched all along: prepare, then recover cancelled, never started") {
        azure_event_spec spec;
        spec.id = "REDEPLOY";
        spec.type = "Redeploy";
        h.scenario().add_azure_event(spec);
        REQUIRE(h.run_for(5s));
        REQUIRE(h.scenario().cancel_azure_event("REDEPLOY"));
        REQUIRE(h.run_for(2s));
        CHECK(r.snapshot() == strings{"prepare:REDEPLOY", "recover:REDEPLOY:cancelled"});
    }
    SECTION("a Reboot whose Started phase falls between two polls: completed, by the service's clock") {
        azure_event_spec spec;
        spec.id = "SHORT";
        spec.type = "Reboot";
        spec.notice = 10s;
        spec.impact = 200ms;
        h.scenario().add_azure_event(spec);
        REQUIRE(h.advance(1s));
        REQUIRE(h.advance(9s + 500ms));   // NotBefore at 10 s: started at 10 s, removed at 10.2 s
        REQUIRE(h.advance(1s));
        CHECK(r.snapshot() == strings{"prepare:SHORT", "recover:SHORT:completed"});
    }
    SECTION("hardware failure: appears Started, then completed") {
        azure_event_spec spec;
        spec.id = "HW";
        spec.type = "Reboot";
        spec.started = true;
        spec.impact = std::chrono::minutes(1);
        h.scenario().add_azure_event(spec);
        REQUIRE(h.run_for(62s));
        CHECK(r.snapshot() == strings{"started:HW", "recover:HW:completed"});
    }
    SECTION("Spot Preempt with 30 s notice") {
        azure_event_spec spec;
        spec.id = "PREEMPT";
        spec.type = "Preempt";
        h.scenario().add_azure_event(spec);
        REQUIRE(h.run_for(120s));
        CHECK(r.snapshot() == strings{"prepare:PREEMPT", "started:PREEMPT", "recover:PREEMPT:completed"});
    }
    SECTION("the service is re-enabled and DocumentIncarnation starts over: nothing replayed") {
        azure_event_spec spec;
        spec.id = "KEEP";
        h.scenario().add_azure_event(spec);
        REQUIRE(h.advance(1s));
        forewarn::testing::scenario_step re;
        re.what = forewarn::testing::scenario_step::kind::service_reenabled;
        re.incarnation = 1;
        h.scenario().add_step(re);
        REQUIRE(h.run_for(3s));
        CHECK(r.snapshot() == strings{"prepare:KEEP"});
    }
    CHECK(r.errs().empty());
}

TEST_CASE("simulated: GCE live migration, preemption and host terminate, woken by each change", "[poller][simulated][gce]") {
    harness h(two_vms());
    recorder r;
    h.add_gce_poller("WestNO_0", r.handlers());
    REQUIRE(h.start());  // idle: both keys' hanging GETs wait on the clock
    auto set = [&](const char* key, const char* value) {
        h.scenario().set_gce(key, value);
        REQUIRE(h.wait_idle());  // the change itself answered the hanging GET; no time passed
    };
    set("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE");
    set("instance/maintenance-event", "NONE");
    set("instance/maintenance-event", "TERMINATE_ON_HOST_MAINTENANCE");
    set("instance/preempted", "TRUE");
    const std::string m = "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE";
    const std::string t = "maintenance-event:TERMINATE_ON_HOST_MAINTENANCE";
    CHECK(r.snapshot() == strings{"prepare:" + m, "recover:" + m + ":completed", "prepare:" + t, "started:preempted"});
    CHECK(r.errs().empty());
    CHECK(h.clock().now().time_since_epoch() == 0s);
}

TEST_CASE("simulated: GCE upcoming-maintenance: prepare days ahead, started when ONGOING, recover when it goes",
          "[poller][simulated][gce][upcoming]") {
    harness h(two_vms());
    recorder r;
    const std::string window = R"({"type":"SCHEDULED","maintenance_status":"PENDING","can_reschedule":"true",)"
                               R"("window_start_time":"2026-12-03T10:00:00Z","window_end_time":"2026-12-03T14:00:00Z"})";
    REQUIRE(h.scenario().set_gce_upcoming("empty"));  // a machine type that has the key, nothing scheduled
    h.add_gce_poller("WestNO_0", r.handlers());
    REQUIRE(h.start());  // idle: the three keys' hanging GETs wait on the clock
    auto set = [&](const std::string& answer) {
        REQUIRE(h.scenario().set_gce_upcoming(answer));
        REQUIRE(h.wait_idle());  // the change itself answered the hanging GET; no time passed
    };
    set(window);
    std::string ongoing = window;
    ongoing.replace(ongoing.find("PENDING"), 7, "ONGOING");
    set(ongoing);
    set("empty");
    CHECK(r.snapshot() == strings{"prepare:upcoming-maintenance", "started:upcoming-maintenance",
                                  "recover:upcoming-maintenance:completed"});
    CHECK(r.errs().empty());
    CHECK(h.clock().now().time_since_epoch() == 0s);
}

TEST_CASE("simulated: GCE upcoming-maintenance answering the 503 is asked on its own cadence - a PENDING window "
          "shorter than a hanging GET still gets its prepare",
          "[poller][simulated][gce][upcoming]") {
    // A VM that never had a notice: the key answers 503 "no notifications have been received
    // yet" (no ETag). The other keys hang for 60 s; a 15 s PENDING window in between must be
    // heard (it was not: the key was asked again only when the hanging GETs returned).
    harness h;  // one VM, the harness's default client options
    recorder r;
    REQUIRE(h.scenario().set_gce_upcoming("no_notifications"));
    h.add_gce_poller("", r.handlers());
    REQUIRE(h.start());
    REQUIRE(h.run_for(7s));
    // can_reschedule false: ready() approves nothing here (that one would be started early).
    const std::string window = R"({"type":"SCHEDULED","maintenance_status":"PENDING","can_reschedule":"false",)"
                               R"("window_start_time":"2026-12-03T10:00:00Z","window_end_time":"2026-12-03T14:00:00Z"})";
    REQUIRE(h.scenario().set_gce_upcoming(window));
    REQUIRE(h.run_for(15s));
    CHECK(r.snapshot() == strings{"prepare:upcoming-maintenance"});
    std::string ongoing = window;
    ongoing.replace(ongoing.find("PENDING"), 7, "ONGOING");
    const auto before = h.clock().now();
    REQUIRE(h.scenario().set_gce_upcoming(ongoing));
    REQUIRE(h.wait_idle());  // watched now (the window came with an ETag): answered at once
    CHECK(r.snapshot() == strings{"prepare:upcoming-maintenance", "started:upcoming-maintenance"});
    CHECK(r.errs().empty());
    CHECK(h.clock().now() == before);
}

TEST_CASE("simulated: an AWS Spot interruption reaches on_prepare within 2 s at default settings, wherever it "
          "falls in the cadence",
          "[poller][simulated][aws]") {
    // aws-node-termination-handler reads IMDS every 2 s; a Spot notice gives two minutes.
    for (const auto offset : {0ms, 100ms, 499ms, 500ms, 900ms, 1000ms, 2300ms, 4900ms}) {
        INFO("the notice appears " << offset.count() << " ms into the poller's run");
        harness h;
        recorder r;
        h.add_aws_poller("", r.handlers());
        REQUIRE(h.start());
        REQUIRE(h.run_for(5s, 100ms));  // steady state: the first document is long done
        REQUIRE(h.run_for(offset, 100ms));
        const auto appeared = h.clock().now();
        h.scenario().aws_spot();
        auto heard = [&] { return !r.snapshot().empty(); };
        while (!heard() && h.clock().now() - appeared < 3s) REQUIRE(h.advance(100ms));
        REQUIRE(r.snapshot() == strings{"prepare:spot-instance-action"});
        CHECK(h.clock().now() - appeared <= 2s);
        CHECK(r.errs().empty());
    }
}

TEST_CASE("simulated: two VMs on one scenario, exactly one approval, by the leader", "[poller][simulated][leader]") {
    for (auto rule : {forewarn::leader_rule::first_listed, forewarn::leader_rule::lowest_name}) {
        harness h(two_vms());
        recorder r0, r1;
        auto o = scope(approval_scope::leader);
        o.approval.rule = rule;
        h.add_azure_poller("WestNO_0", r0.handlers(), o);
        h.add_azure_poller("WestNO_1", r1.handlers(), o);
        REQUIRE(h.start());
        azure_event_spec spec;
        spec.id = "FREEZE";
        // Listed in reverse: first_listed elects WestNO_1, lowest_name WestNO_0.
        spec.resources = {"WestNO_1", "WestNO_0"};
        h.scenario().add_azure_event(spec);
        REQUIRE(h.run_for(120s));
        const std::string leader = rule == forewarn::leader_rule::first_listed ? "WestNO_1" : "WestNO_0";
        CHECK(approval_posts(h.scenario()) == strings{leader + ":{\"StartRequests\":[{\"EventId\":\"FREEZE\"}]}"});
        CHECK(h.scenario().azure_event("FREEZE")->approved_by == leader);
        for (auto* rec : {&r0, &r1}) {
            const auto calls = rec->snapshot();
            check_life_cycles(calls);
            CHECK(calls.back() == "recover:FREEZE:completed");
        }
    }
}

TEST_CASE("simulated: the leader is silent, the follower approves a user event after the grace", "[poller][simulated][leader]") {
    harness h(two_vms());
    recorder r;
    auto o = scope(approval_scope::leader);
    o.approval.follower_grace = 30s;
    h.add_azure_poller("WestNO_1", r.handlers(), o);
    REQUIRE(h.start());
    azure_event_spec user;
    user.id = "USER";
    user.type = "Reboot";
    user.source = "User";
    user.resources = {"WestNO_0", "WestNO_1"};
    h.scenario().add_azure_event(user);
    azure_event_spec platform = user;
    platform.id = "PLATFORM";
    platform.source = "Platform";
    h.scenario().add_azure_event(platform);
    REQUIRE(h.run_for(29s));
    CHECK(approval_posts(h.scenario()).empty());
    REQUIRE(h.run_for(2s));
    CHECK(approval_posts(h.scenario()) == strings{"WestNO_1:{\"StartRequests\":[{\"EventId\":\"USER\"}]}"});
    REQUIRE(h.run_for(60s));
    CHECK(approval_posts(h.scenario()).size() == 1);  // never the platform event, never twice
}

TEST_CASE("simulated: scale-set Terminate, each VM approves only its own", "[poller][simulated][leader]") {
    scenario_config c;
    c.vms[0].name = "myss_0";
    c.vms.push_back({});
    c.vms[1].name = "myss_1";
    harness h(c);
    recorder r0, r1;
    h.add_azure_poller("myss_0", r0.handlers(), scope(approval_scope::own));
    h.add_azure_poller("myss_1", r1.handlers(false), scope(approval_scope::own));
    REQUIRE(h.start());
    for (const char* name : {"myss_0", "myss_1"}) {
        azure_event_spec t;
        t.id = std::string("T-") + name;
        t.type = "Terminate";
        t.resources = {name};
        h.scenario().add_azure_event(t);
    }
    REQUIRE(h.advance(1s));
    // myss_0 is ready at once, myss_1's handler never says ready: only T-myss_0, by myss_0.
    CHECK(approval_posts(h.scenario()) == strings{"myss_0:{\"StartRequests\":[{\"EventId\":\"T-myss_0\"}]}"});
}

TEST_CASE("simulated: faults between polls never give a spurious or duplicated callback", "[poller][simulated][fault]") {
    using kind = fault_spec::kind;
    struct fault_case {
        kind what;
        int status;
    };
    const std::vector<fault_case> cases = {
        {kind::status, 400},         {kind::status, 404},         {kind::status, 410},
        {kind::status, 429},         {kind::status, 500},         {kind::status, 503},
        {kind::delay, 200},          {kind::stall, 200},          {kind::empty_body, 200},
        {kind::truncated_json, 200}, {kind::malformed_json, 200}, {kind::close_mid_body, 200},
        {kind::body, 200}};
    for (const auto& fc : cases) {
        DYNAMIC_SECTION("fault " << forewarn::testing::to_string(fc.what) << " " << fc.status) {
            harness h(two_vms());
            recorder r;
            auto& p = h.add_azure_poller("WestNO_0", r.handlers(), scope(approval_scope::own));
            REQUIRE(h.start());
            azure_event_spec spec;
            spec.id = "EV";
            spec.type = "Reboot";
            spec.impact = std::chrono::minutes(1);
            h.scenario().add_azure_event(spec);
            azure_event_spec later = spec;
            later.id = "LATER";
            later.notice = std::chrono::minutes(2);
            forewarn::testing::scenario_step step;
            step.at = 20s;
            step.event = later;
            h.scenario().add_step(step);

            fault_spec f;
            f.what = fc.what;
            f.status = fc.status;
            f.service = "azure";
            f.count = -1;
            f.fraction = 0.5;  // about every other request, GETs and POSTs alike
            f.duration = std::chrono::minutes(10);  // delays and stalls outlast the request's timeout
            f.bytes = 7;
            f.body = R"({"DocumentIncarnation":"x","Events":{}})";
            h.scenario().inject_fault(f);
            REQUIRE(h.run_for(10min));
            h.scenario().clear_faults();
            REQUIRE(h.run_for(5s));
            const auto calls = r.snapshot();
            INFO(calls.size() << " callbacks, " << p.health().failures << " failed polls");
            check_life_cycles(calls);
            // Both events were seen and ended, each exactly once, and never "cancelled".
            CHECK(count_prefix(calls, "recover:EV:") == 1);
            CHECK(count_prefix(calls, "recover:LATER:") == 1);
            CHECK(std::count(calls.begin(), calls.end(), "recover:EV:cancelled") == 0);
            CHECK(std::count(calls.begin(), calls.end(), "recover:LATER:cancelled") == 0);
        }
    }
}

TEST_CASE("simulated: a failed poll while an event is on does not end it - the retry it hides is logged", "[poller][simulated][fault]") {
    scenario_config c = two_vms();
    harness h(c);
    recorder r;
    std::vector<std::string> retries;
    std::mutex m;
    auto co = h.azure_options("WestNO_0");
    co.log.level = forewarn::log_level::info;
    co.log.sink = [&](const forewarn::log_record& rec) {
        std::lock_guard<std::mutex> lock(m);
        if (std::string(rec.message).rfind("retry ", 0) == 0) retries.push_back(std::string(rec.message));
    };
    co.retry.max_attempts = 1;  // a malformed body is never retried anyway; a 503 once is
    auto& p = h.add_azure_poller("WestNO_0", r.handlers(), scope(approval_scope::never), co);
    REQUIRE(h.start());
    azure_event_spec spec;
    spec.id = "EV";
    h.scenario().add_azure_event(spec);
    REQUIRE(h.advance(1s));
    for (auto what : {fault_spec::kind::empty_body, fault_spec::kind::malformed_json, fault_spec::kind::truncated_json}) {
        fault_spec f;
        f.what = what;
        f.service = "azure";
        h.scenario().inject_fault(f);
        REQUIRE(h.advance(1s));
    }
    CHECK(r.snapshot() == strings{"prepare:EV"});
    CHECK(r.errs().size() == 3);
    CHECK(p.health().failures == 3);
    CHECK(retries.empty());
}

TEST_CASE("simulated: with the default retries a 503 is retried on the clock, and the test sees it", "[poller][simulated][fault]") {
    harness h;
    recorder r;
    std::vector<std::string> lines;
    std::mutex m;
    auto co = h.azure_options();
    co.log.level = forewarn::log_level::info;
    co.log.sink = [&](const forewarn::log_record& rec) {
        std::lock_guard<std::mutex> lock(m);
        lines.push_back(std::string(rec.message));
    };
    h.add_azure_poller("", r.handlers(), {}, co);
    REQUIRE(h.start());
    fault_spec f;
    f.what = fault_spec::kind::status;
    f.status = 503;
    f.service = "azure";
    h.scenario().inject_fault(f);
    REQUIRE(h.advance(1s));  // the poll gets the 503; the retry waits its backoff on the clock
    {
        std::lock_guard<std::mutex> lock(m);
        REQUIRE(lines.size() == 1);
        CHECK(lines[0].rfind("retry 1 in ", 0) == 0);
        CHECK(lines[0].find("HTTP 503") != std::string::npos);
    }
    CHECK(r.errs().empty());  // a retried failure is no error for the handlers
    REQUIRE(h.advance(1s));   // the backoff ends: the retry succeeds
    std::size_t gets = 0;
    for (const auto& req : h.scenario().requests())
        if (req.method == forewarn::http_method::get && req.target.find("scheduledevents") != std::string::npos) ++gets;
    CHECK(gets >= 3);  // the first poll, the 503, its retry
}

TEST_CASE("simulated: every example scenario, each VM: one life cycle per event", "[poller][simulated][scenarios]") {
    const auto dir = std::filesystem::path(FOREWARN_SOURCE_DIR) / "examples" / "scenarios";
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".json") continue;
        ++files;
        auto config = forewarn::testing::load_scenario(entry.path().string());
        REQUIRE(config.has_value());
        INFO(entry.path().filename().string());
        // AWS scenarios have no Azure or GCE event: test_aws_simulated.cpp plays them.
        const bool aws_only = std::all_of(config->steps.begin(), config->steps.end(), [](const auto& step) {
            return step.what == forewarn::testing::scenario_step::kind::aws;
        });
        if (aws_only) continue;
        harness h(*config);
        std::vector<std::unique_ptr<recorder>> recs;
        for (const auto& vm : config->vms) {
            recs.push_back(std::make_unique<recorder>());
            h.add_azure_poller(vm.name, recs.back()->handlers(), scope(approval_scope::leader));
            recs.push_back(std::make_unique<recorder>());
            h.add_gce_poller(vm.name, recs.back()->handlers());
        }
        REQUIRE(h.start());
        REQUIRE(h.run_for(45min, 2s));
        std::size_t callbacks = 0;
        for (auto& rec : recs) {
            const auto calls = rec->snapshot();
            callbacks += calls.size();
            check_life_cycles(calls);
            for (const auto& e : rec->errs()) CHECK(e.describe().empty());  // no error at all
        }
        CHECK(callbacks > 0);
        // Approvals: never more than one POST per event across all VMs.
        std::map<std::string, int> per_event;
        for (const auto& post : approval_posts(h.scenario())) ++per_event[post.substr(post.find(':') + 1)];
        for (const auto& [body, n] : per_event) CHECK(n == 1);
    }
    CHECK(files >= 4);
}

TEST_CASE("simulated: restart with a state file delivers only what happened while down", "[poller][simulated][state]") {
    forewarn_test::temp_dir dir("simulated-state");
    const auto path = dir.path / "state.json";
    harness h(two_vms());
    auto o = scope(approval_scope::never);
    o.state = std::make_shared<forewarn::state_file>(path.string());
    azure_event_spec a;
    a.id = "A";
    a.type = "Reboot";
    a.notice = 30s;
    a.impact = std::chrono::minutes(5);
    h.scenario().add_azure_event(a);
    azure_event_spec b = a;
    b.id = "B";
    b.notice = 15min;
    h.scenario().add_azure_event(b);
    recorder first;
    auto& p1 = h.add_azure_poller("WestNO_0", first.handlers(), o);
    REQUIRE(h.start());
    CHECK(first.snapshot() == strings{"prepare:A", "prepare:B"});
    p1.stop();
    // While the process is down, A starts and B is cancelled before its NotBefore.
    REQUIRE(h.scenario().cancel_azure_event("B"));
    REQUIRE(h.advance(1min));
    recorder second;
    h.add_azure_poller("WestNO_0", second.handlers(), o);
    REQUIRE(h.start());
    // B: not watched when it went, and its NotBefore had not come: nothing decides it.
    CHECK(second.snapshot() == strings{"started:A", "recover:B:unknown"});
    CHECK(second.errs().empty());
}

TEST_CASE("simulated: a handler that throws is reported, a handler may stop the poller", "[poller][simulated][thread]") {
    harness h(two_vms());
    recorder r;
    forewarn::poller<forewarn::testing::simulated_azure_client>* self = nullptr;
    auto handlers = r.handlers();
    handlers.on_prepare = [&](const change& c, approval_handle a) {
        r.add("prepare:" + c.event.id);
        a.ready();  // said before the throw: the approval still goes out
        throw std::runtime_error("drain script failed");
    };
    handlers.on_recover = [&](const change& c) {
        r.add("recover:" + c.event.id + ":" + std::string(forewarn::to_string(c.reason)));
        self->stop();  // from the poller's own thread: must not deadlock
    };
    auto& p = h.add_azure_poller("WestNO_0", handlers, scope(approval_scope::own));
    self = &p;
    REQUIRE(h.start());
    azure_event_spec spec;
    spec.id = "F";
    h.scenario().add_azure_event(spec);
    REQUIRE(h.run_for(10s));
    CHECK_FALSE(p.running());  // it stopped itself in on_recover; the thread ended
    CHECK(h.clock().threads() == 0);
    CHECK(r.snapshot() == strings{"prepare:F", "started:F", "recover:F:completed"});
    REQUIRE(r.errs().size() == 1);
    CHECK(r.errs()[0].code == forewarn::errc::handler_failed);
    CHECK(r.errs()[0].message.find("drain script failed") != std::string::npos);
    CHECK(approval_posts(h.scenario()).size() == 1);
}

TEST_CASE("simulated: Azure at 1 Hz of the clock: one GET a second, never more", "[poller][simulated][thread]") {
    harness h;
    recorder r;
    h.add_azure_poller("", r.handlers(), scope(approval_scope::own));
    REQUIRE(h.start());
    h.scenario().clear_requests();
    REQUIRE(h.run_for(10s));
    std::size_t gets = 0;
    for (const auto& req : h.scenario().requests())
        if (req.method == forewarn::http_method::get && req.target.find("scheduledevents") != std::string::npos) ++gets;
    CHECK(gets == 10);
}

TEST_CASE("simulated: the slow first call that enables the service is waited for", "[poller][simulated]") {
    scenario_config c;
    c.enablement_delay = std::chrono::minutes(2);  // IMDS: up to two minutes
    harness h(c);
    azure_event_spec spec;
    spec.id = "E";
    h.scenario().add_azure_event(spec);
    recorder r;
    h.add_azure_poller("", r.handlers(/*ready=*/false));  // not approved: the event stays Scheduled
    REQUIRE(h.start());
    CHECK(r.snapshot().empty());      // the first GET waits for the service
    REQUIRE(h.advance(2min));         // within the client's 150 s first-call timeout
    CHECK(r.snapshot() == strings{"prepare:E"});
}

}  // namespace test_poller_simulated
