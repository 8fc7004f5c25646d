// SPDX-License-Identifier: MIT
// basic_poller over the real Azure and GCE clients and testing::simulated_transport: the
// protocol's scenarios, faults between polls, two VMs electing a leader, restarts. Scenario time
// and the poller's manual clock move together; nothing sleeps.
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>

#include "catch.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using forewarn::approval_handle;
using forewarn::approval_scope;
using forewarn::change;
using forewarn::change_kind;
using forewarn::poller_handlers;
using forewarn::poller_options;
using forewarn::testing::azure_event_spec;
using forewarn::testing::fault_spec;
using forewarn::testing::manual_clock;
using forewarn::testing::scenario;
using forewarn::testing::scenario_config;
using forewarn::testing::simulated_transport;
using namespace std::chrono_literals;
using strings = std::vector<std::string>;
namespace azure = forewarn::azure;
namespace gce = forewarn::gce;

namespace {

using azure_client = azure::basic_scheduled_events_client<simulated_transport>;
using gce_client = gce::basic_metadata_client<simulated_transport>;
using azure_poller = forewarn::basic_poller<azure_client, manual_clock>;
using gce_poller = forewarn::basic_poller<gce_client, manual_clock>;

std::shared_ptr<scenario> two_vms(unsigned rate_limit = 0) {
    scenario_config c;
    c.rate_limit = rate_limit;
    c.vms[0].name = "WestNO_0";
    c.vms.push_back({});
    c.vms[1].name = "WestNO_1";
    return std::make_shared<scenario>(c);
}

// No retries inside the client: a fault is one failed poll, which is what these tests are about
// (and a retry would sleep its backoff in real time).
azure::client_options azure_options() {
    azure::client_options o;
    o.endpoint = "http://169.254.169.254";
    o.rate_limit = false;
    o.retry.max_attempts = 1;
    return o;
}

gce::client_options gce_options() {
    gce::client_options o;
    o.endpoint = "http://metadata.google.internal";
    o.rate_limit = false;
    o.retry.max_attempts = 1;
    return o;
}

/// Records "kind:id[:reason]" per callback, approvals and errors; thread-safe, waitable.
struct recorder {
    std::mutex mutex;
    std::condition_variable cv;
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
        {
            std::lock_guard<std::mutex> lock(mutex);
            calls.push_back(std::move(s));
        }
        cv.notify_all();
    }
    strings snapshot() {
        std::lock_guard<std::mutex> lock(mutex);
        return calls;
    }
    bool wait_for_calls(std::size_t n) {
        std::unique_lock<std::mutex> lock(mutex);
        return cv.wait_for(lock, 10s, [&] { return calls.size() >= n; });
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
        const auto pre = std::find(kinds.begin(), kinds.end(), "prepare");
        if (pre != kinds.end()) CHECK(pre == kinds.begin());
    }
}

std::size_t count_prefix(const strings& calls, const std::string& prefix) {
    return static_cast<std::size_t>(
        std::count_if(calls.begin(), calls.end(), [&](const std::string& c) { return c.rfind(prefix, 0) == 0; }));
}

/// Approval POSTs in the scenario's log, as "vm:body".
strings approval_posts(const scenario& s) {
    strings out;
    for (const auto& r : s.requests())
        if (r.service == "azure" && r.method == forewarn::http_method::post) out.push_back(r.vm + ":" + r.body);
    return out;
}

}  // namespace

TEST_CASE("simulated: a platform Freeze, approved when ready, started, completed", "[poller][simulated]") {
    auto s = two_vms();
    manual_clock clock;
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::own;
    azure_poller p(azure_client(azure_options(), simulated_transport(s)), r.handlers(), o, clock);
    azure_event_spec spec;
    spec.id = "FREEZE-1";
    spec.resources = {"WestNO_0", "WestNO_1"};
    s->add_azure_event(spec);
    REQUIRE(p.poll_once().has_value());  // prepare, ready, approved in one cycle
    CHECK(p.self() == "WestNO_0");
    CHECK(approval_posts(*s) == strings{"WestNO_0:{\"StartRequests\":[{\"EventId\":\"FREEZE-1\"}]}"});
    p.poll_once();
    s->advance(5s);
    clock.advance(5s);
    p.poll_once();
    CHECK(r.snapshot() == strings{"prepare:FREEZE-1", "started:FREEZE-1", "recover:FREEZE-1:completed"});
    CHECK(r.errors.empty());
}

TEST_CASE("simulated: the protocol's scenarios, event by event", "[poller][simulated]") {
    auto s = two_vms();
    manual_clock clock;
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::never;  // events run to NotBefore
    azure_poller p(azure_client(azure_options(), simulated_transport(s)), r.handlers(), o, clock);
    auto step = [&](std::chrono::milliseconds d) {
        s->advance(d);
        clock.advance(d);
        p.poll_once();
    };
    p.poll_once();

    SECTION("user Reboot: prepare, started at NotBefore, completed") {
        azure_event_spec spec;
        spec.id = "REBOOT";
        spec.type = "Reboot";
        spec.source = "User";
        spec.impact = std::chrono::minutes(2);
        s->add_azure_event(spec);
        step(1s);
        step(15min);
        step(2min);
        CHECK(r.snapshot() == strings{"prepare:REBOOT", "started:REBOOT", "recover:REBOOT:completed"});
    }
    SECTION("cancelled Redeploy: prepare, then recover cancelled, never started") {
        azure_event_spec spec;
        spec.id = "REDEPLOY";
        spec.type = "Redeploy";
        s->add_azure_event(spec);
        step(1s);
        REQUIRE(s->cancel_azure_event("REDEPLOY"));
        step(1s);
        CHECK(r.snapshot() == strings{"prepare:REDEPLOY", "recover:REDEPLOY:cancelled"});
    }
    SECTION("hardware failure: appears Started, then completed") {
        azure_event_spec spec;
        spec.id = "HW";
        spec.type = "Reboot";
        spec.started = true;
        spec.impact = std::chrono::minutes(1);
        s->add_azure_event(spec);
        step(1s);
        step(1min);
        CHECK(r.snapshot() == strings{"started:HW", "recover:HW:completed"});
    }
    SECTION("Spot Preempt with 30 s notice") {
        azure_event_spec spec;
        spec.id = "PREEMPT";
        spec.type = "Preempt";
        s->add_azure_event(spec);
        for (int i = 0; i < 120; ++i) step(1s);
        CHECK(r.snapshot() == strings{"prepare:PREEMPT", "started:PREEMPT", "recover:PREEMPT:completed"});
    }
    SECTION("the service is re-enabled and DocumentIncarnation starts over: nothing replayed") {
        azure_event_spec spec;
        spec.id = "KEEP";
        s->add_azure_event(spec);
        step(1s);
        forewarn::testing::scenario_step re;
        re.what = forewarn::testing::scenario_step::kind::service_reenabled;
        re.incarnation = 1;
        s->add_step(re);
        step(1s);
        step(1s);
        CHECK(r.snapshot() == strings{"prepare:KEEP"});
    }
    CHECK(r.errors.empty());
}

TEST_CASE("simulated: GCE live migration, preemption and host terminate", "[poller][simulated][gce]") {
    auto s = two_vms();
    manual_clock clock;
    recorder r;
    gce_poller p(gce_client(gce_options(), simulated_transport(s)), r.handlers(), {}, clock);
    REQUIRE(p.poll_once().has_value());
    s->set_gce("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE");
    p.poll_once();
    s->set_gce("instance/maintenance-event", "NONE");
    p.poll_once();
    s->set_gce("instance/maintenance-event", "TERMINATE_ON_HOST_MAINTENANCE");
    p.poll_once();
    s->set_gce("instance/preempted", "TRUE");
    p.poll_once();
    const std::string m = "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE";
    const std::string t = "maintenance-event:TERMINATE_ON_HOST_MAINTENANCE";
    CHECK(r.snapshot() == strings{"prepare:" + m, "recover:" + m + ":completed", "prepare:" + t, "started:preempted"});
    CHECK(r.errors.empty());
}

TEST_CASE("simulated: two VMs on one scenario, exactly one approval, by the leader", "[poller][simulated][leader]") {
    for (auto rule : {forewarn::leader_rule::first_listed, forewarn::leader_rule::lowest_name}) {
        auto s = two_vms();
        manual_clock clock;
        recorder r0, r1;
        poller_options o;
        o.approval.scope = approval_scope::leader;
        o.approval.rule = rule;
        azure_poller vm0(azure_client(azure_options(), simulated_transport(s, "WestNO_0")), r0.handlers(), o, clock);
        azure_poller vm1(azure_client(azure_options(), simulated_transport(s, "WestNO_1")), r1.handlers(), o, clock);
        azure_event_spec spec;
        spec.id = "FREEZE";
        // Listed in reverse: first_listed elects WestNO_1, lowest_name WestNO_0.
        spec.resources = {"WestNO_1", "WestNO_0"};
        s->add_azure_event(spec);
        for (int i = 0; i < 120; ++i) {
            vm0.poll_once();
            vm1.poll_once();
            s->advance(1s);
            clock.advance(1s);
        }
        const std::string leader = rule == forewarn::leader_rule::first_listed ? "WestNO_1" : "WestNO_0";
        CHECK(approval_posts(*s) == strings{leader + ":{\"StartRequests\":[{\"EventId\":\"FREEZE\"}]}"});
        // The follower may only see the event once the leader's approval started it.
        for (auto* rec : {&r0, &r1}) {
            const auto calls = rec->snapshot();
            check_life_cycles(calls);
            CHECK(count_prefix(calls, "started:FREEZE") == 1);
            CHECK(calls.back() == "recover:FREEZE:completed");
        }
        CHECK((leader == "WestNO_0" ? r0 : r1).snapshot() ==
              strings{"prepare:FREEZE", "started:FREEZE", "recover:FREEZE:completed"});
    }
}

TEST_CASE("simulated: the leader is silent, the follower approves a user event after the grace", "[poller][simulated][leader]") {
    auto s = two_vms();
    manual_clock clock;
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::leader;
    o.approval.follower_grace = 30s;
    azure_poller follower(azure_client(azure_options(), simulated_transport(s, "WestNO_1")), r.handlers(), o, clock);
    azure_event_spec user;
    user.id = "USER";
    user.type = "Reboot";
    user.source = "User";
    user.resources = {"WestNO_0", "WestNO_1"};
    s->add_azure_event(user);
    azure_event_spec platform = user;
    platform.id = "PLATFORM";
    platform.source = "Platform";
    s->add_azure_event(platform);
    for (int i = 0; i < 29; ++i) {
        follower.poll_once();
        s->advance(1s);
        clock.advance(1s);
    }
    follower.poll_once();
    CHECK(approval_posts(*s).empty());
    s->advance(1s);
    clock.advance(1s);
    follower.poll_once();
    CHECK(approval_posts(*s) == strings{"WestNO_1:{\"StartRequests\":[{\"EventId\":\"USER\"}]}"});
    for (int i = 0; i < 60; ++i) {
        s->advance(1s);
        clock.advance(1s);
        follower.poll_once();
    }
    CHECK(approval_posts(*s).size() == 1);  // never the platform event, never twice
}

TEST_CASE("simulated: scale-set Terminate, each VM approves only its own", "[poller][simulated][leader]") {
    scenario_config c;
    c.rate_limit = 0;
    c.vms[0].name = "myss_0";
    c.vms.push_back({});
    c.vms[1].name = "myss_1";
    auto s = std::make_shared<scenario>(c);
    manual_clock clock;
    recorder r0, r1;
    poller_options o;
    o.approval.scope = approval_scope::own;
    azure_poller vm0(azure_client(azure_options(), simulated_transport(s, "myss_0")), r0.handlers(), o, clock);
    azure_poller vm1(azure_client(azure_options(), simulated_transport(s, "myss_1")), r1.handlers(false), o, clock);
    for (const char* name : {"myss_0", "myss_1"}) {
        azure_event_spec t;
        t.id = std::string("T-") + name;
        t.type = "Terminate";
        t.resources = {name};
        s->add_azure_event(t);
    }
    vm0.poll_once();
    vm1.poll_once();
    // vm0 is ready at once, vm1's handler never says ready: only T-myss_0 is approved, by myss_0.
    CHECK(approval_posts(*s) == strings{"myss_0:{\"StartRequests\":[{\"EventId\":\"T-myss_0\"}]}"});
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
            auto s = two_vms();
            manual_clock clock;
            recorder r;
            poller_options o;
            o.approval.scope = approval_scope::own;
            azure_poller p(azure_client(azure_options(), simulated_transport(s)), r.handlers(), o, clock);
            azure_event_spec spec;
            spec.id = "EV";
            spec.type = "Reboot";
            spec.impact = std::chrono::minutes(1);
            s->add_azure_event(spec);
            azure_event_spec later = spec;
            later.id = "LATER";
            later.notice = std::chrono::minutes(2);
            auto step = forewarn::testing::scenario_step();
            step.at = 20s;
            step.event = later;
            s->add_step(step);

            fault_spec f;
            f.what = fc.what;
            f.status = fc.status;
            f.service = "azure";
            f.count = -1;
            f.fraction = 0.5;  // about every other request, GETs and POSTs alike
            f.duration = std::chrono::minutes(10);  // delays and stalls outlast the request's timeout
            f.bytes = 7;
            f.body = R"({"DocumentIncarnation":"x","Events":{}})";
            s->inject_fault(f);
            int failed = 0;
            for (int i = 0; i < 600; ++i) {
                if (!p.poll_once()) ++failed;
                s->advance(1s);
                clock.advance(1s);
            }
            s->clear_faults();
            p.poll_once();
            const auto calls = r.snapshot();
            INFO(calls.size() << " callbacks, " << failed << " failed polls");
            CHECK(failed > 0);
            check_life_cycles(calls);
            // Both events were seen and ended, each exactly once.
            CHECK(count_prefix(calls, "recover:EV:") == 1);
            CHECK(count_prefix(calls, "recover:LATER:") == 1);
            // They were approved (perhaps after a failed POST), so they never waited for NotBefore.
            CHECK(std::count_if(calls.begin(), calls.end(), [](const std::string& c) { return c == "recover:EV:cancelled"; }) == 0);
        }
    }
}

TEST_CASE("simulated: a single failed poll while an event is on does not end it", "[poller][simulated][fault]") {
    auto s = two_vms();
    manual_clock clock;
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::never;
    azure_poller p(azure_client(azure_options(), simulated_transport(s)), r.handlers(), o, clock);
    azure_event_spec spec;
    spec.id = "EV";
    s->add_azure_event(spec);
    p.poll_once();
    for (auto what : {fault_spec::kind::empty_body, fault_spec::kind::malformed_json, fault_spec::kind::truncated_json}) {
        fault_spec f;
        f.what = what;
        f.service = "azure";
        s->inject_fault(f);
        CHECK_FALSE(p.poll_once().has_value());
        CHECK(p.poll_once().has_value());
    }
    CHECK(r.snapshot() == strings{"prepare:EV"});
    CHECK(r.errors.size() == 3);
}

TEST_CASE("simulated: every example scenario, each VM: one life cycle per event", "[poller][simulated][scenarios]") {
    const auto dir = std::filesystem::path(FOREWARN_SOURCE_DIR) / "examples" / "scenarios";
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".json") continue;
        ++files;
        auto config = forewarn::testing::load_scenario(entry.path().string());
        REQUIRE(config.has_value());
        config->rate_limit = 0;
        auto s = std::make_shared<scenario>(*config);
        manual_clock clock;
        poller_options o;
        o.approval.scope = approval_scope::leader;
        std::vector<std::unique_ptr<recorder>> recs;
        std::vector<std::unique_ptr<azure_poller>> azure_pollers;
        std::vector<std::unique_ptr<gce_poller>> gce_pollers;
        for (const auto& vm : config->vms) {
            // Scale-set VMs are named {scale set}_{instance id}.
            recs.push_back(std::make_unique<recorder>());
            azure_pollers.push_back(std::make_unique<azure_poller>(
                azure_client(azure_options(), simulated_transport(s, vm.name)), recs.back()->handlers(), o, clock));
            recs.push_back(std::make_unique<recorder>());
            gce_pollers.push_back(std::make_unique<gce_poller>(
                gce_client(gce_options(), simulated_transport(s, vm.name)), recs.back()->handlers(), o, clock));
        }
        for (int i = 0; i < 45 * 60 / 2; ++i) {
            for (auto& p : azure_pollers) p->poll_once();
            for (auto& p : gce_pollers) p->poll_once();
            s->advance(2s);
            clock.advance(2s);
        }
        INFO(entry.path().filename().string());
        std::size_t callbacks = 0;
        for (auto& rec : recs) {
            const auto calls = rec->snapshot();
            callbacks += calls.size();
            check_life_cycles(calls);
            for (const auto& e : rec->errors) CHECK(e.describe().empty());  // no error at all
        }
        CHECK(callbacks > 0);
        // Approvals: never more than one POST per event across all VMs.
        std::map<std::string, int> per_event;
        for (const auto& post : approval_posts(*s)) ++per_event[post.substr(post.find(':') + 1)];
        for (const auto& [body, n] : per_event) CHECK(n == 1);
    }
    CHECK(files >= 4);
}

TEST_CASE("simulated: restart with a state file delivers only what happened while down", "[poller][simulated][state]") {
    const auto path = std::filesystem::temp_directory_path() / "forewarn-test-simulated-state.json";
    std::filesystem::remove(path);
    auto s = two_vms();
    manual_clock clock;
    poller_options o;
    o.approval.scope = approval_scope::never;
    o.state_file = path.string();
    azure_event_spec a;
    a.id = "A";
    a.type = "Reboot";
    a.impact = std::chrono::minutes(5);
    s->add_azure_event(a);
    azure_event_spec b = a;
    b.id = "B";
    s->add_azure_event(b);
    {
        recorder r;
        azure_poller p(azure_client(azure_options(), simulated_transport(s)), r.handlers(), o, clock);
        p.poll_once();
        CHECK(r.snapshot() == strings{"prepare:A", "prepare:B"});
    }
    // While the process is down, A starts and B is cancelled.
    s->cancel_azure_event("B");
    s->advance(15min);
    clock.advance(15min);
    recorder r;
    azure_poller p(azure_client(azure_options(), simulated_transport(s)), r.handlers(), o, clock);
    p.poll_once();
    p.poll_once();
    CHECK(r.snapshot() == strings{"started:A", "recover:B:cancelled"});
    CHECK(r.errors.empty());
    std::filesystem::remove(path);
}

TEST_CASE("simulated thread: Azure at 1 Hz of the manual clock, whole Freeze", "[poller][simulated][thread]") {
    auto s = two_vms();
    manual_clock clock;
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::leader;
    azure_poller p(azure_client(azure_options(), simulated_transport(s)), r.handlers(), o, clock);
    p.start();
    REQUIRE(clock.wait_for_sleepers(1));
    azure_event_spec spec;
    spec.id = "F";
    spec.resources = {"WestNO_0", "WestNO_1"};
    s->add_azure_event(spec);
    for (int i = 0; i < 10; ++i) {
        s->advance(1s);
        REQUIRE(clock.advance_and_wait(1s));
    }
    p.stop();
    CHECK(r.snapshot() == strings{"prepare:F", "started:F", "recover:F:completed"});
    CHECK(approval_posts(*s).size() == 1);
    // One GET per second of clock (plus the approval), never more: under IMDS's limit.
    std::size_t gets = 0;
    for (const auto& req : s->requests())
        if (req.service == "azure" && req.method == forewarn::http_method::get && req.target.find("scheduledevents") != std::string::npos) ++gets;
    CHECK(gets == 11);
}

TEST_CASE("simulated thread: GCE hanging GETs wake on the change, stop() cuts one short", "[poller][simulated][thread][gce]") {
    auto s = two_vms();
    manual_clock clock;
    recorder r;
    gce_poller p(gce_client(gce_options(), simulated_transport(s)), r.handlers(), {}, clock);
    p.start();
    REQUIRE(s->wait_until_hanging(2));  // both keys watched
    s->set_gce("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE");
    REQUIRE(r.wait_for_calls(1));
    REQUIRE(s->wait_until_hanging(2));
    s->set_gce("instance/maintenance-event", "NONE");
    REQUIRE(r.wait_for_calls(2));
    REQUIRE(s->wait_until_hanging(2));
    const auto t0 = std::chrono::steady_clock::now();
    p.stop();
    CHECK(std::chrono::steady_clock::now() - t0 < 5s);  // generous: a hanging GET lasts 60 s
    const std::string m = "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE";
    CHECK(r.snapshot() == strings{"prepare:" + m, "recover:" + m + ":completed"});
    CHECK(r.errors.empty());
    CHECK(clock.sleeps() == 0);  // no fixed sleep anywhere
}

TEST_CASE("simulated thread: a handler that throws is reported, a handler may stop the poller", "[poller][simulated][thread]") {
    auto s = two_vms();
    manual_clock clock;
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::own;
    azure_poller* self = nullptr;
    auto h = r.handlers();
    h.on_prepare = [&](const change& c, approval_handle a) {
        r.add("prepare:" + c.event.id);
        a.ready();  // said before the throw: the approval still goes out
        throw std::runtime_error("drain script failed");
    };
    h.on_recover = [&](const change& c) {
        r.add("recover:" + c.event.id + ":" + std::string(forewarn::to_string(c.reason)));
        self->stop();  // from the poller's own thread: must not deadlock
    };
    azure_poller p(azure_client(azure_options(), simulated_transport(s)), h, o, clock);
    self = &p;
    p.start();
    REQUIRE(clock.wait_for_sleepers(1));
    azure_event_spec spec;
    spec.id = "F";
    s->add_azure_event(spec);
    for (int i = 0; i < 10 && p.running(); ++i) {
        const auto before = clock.sleeps();
        s->advance(1s);
        clock.advance(1s);
        // Either the poller goes back to sleep, or it stopped itself in on_recover.
        const auto give_up = std::chrono::steady_clock::now() + 10s;
        while (p.running() && !clock.wait_for_sleeps(before, 20ms) && std::chrono::steady_clock::now() < give_up) {
        }
    }
    p.stop();
    CHECK_FALSE(p.running());
    CHECK(r.snapshot() == strings{"prepare:F", "started:F", "recover:F:completed"});
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].code == forewarn::errc::handler_failed);
    CHECK(r.errors[0].message.find("drain script failed") != std::string::npos);
    CHECK(approval_posts(*s).size() == 1);
}

TEST_CASE("simulated: the slow first call that enables the service is waited for", "[poller][simulated]") {
    scenario_config c;
    c.rate_limit = 0;
    c.enablement_delay = std::chrono::minutes(2);  // IMDS: up to two minutes
    auto s = std::make_shared<scenario>(c);
    azure_event_spec spec;
    spec.id = "E";
    s->add_azure_event(spec);
    manual_clock clock;
    recorder r;
    azure_poller p(azure_client(azure_options(), simulated_transport(s)), r.handlers(), {}, clock);
    auto first = p.poll_once();  // the client's first-call timeout (150 s) outlasts the delay
    INFO((first ? std::string("ok") : first.error().describe()));
    REQUIRE(first.has_value());
    CHECK(r.snapshot() == strings{"prepare:E"});
}
