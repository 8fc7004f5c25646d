// SPDX-License-Identifier: MIT
// End to end: the forewarn-watch program against the forewarn-emulator program, over loopback
// HTTP, driven through the emulator's control API. The test program is POSIX only (processes,
// signals), like the emulator itself; the agent it drives is this build's forewarn-watch or, when
// FOREWARN_WATCH_EXE names one, forewarn-watch.exe under Wine: the cases tagged [agent] run
// against both and expect the same lines (the windows CI stage, tests/windows/CMakeLists.txt).
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/etcd/client.hpp>
#include <forewarn/json.hpp>
#include <forewarn/time.hpp>

#include "catch.hpp"
#include "emulator_process.hpp"
#include "etcd_cluster.hpp"
#include "temp_dir.hpp"
#include "watch_agent.hpp"

#include <httplib.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace test_watch {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

#if defined(FOREWARN_WATCH_PATH) && defined(FOREWARN_EMULATOR_PATH)

using forewarn_test::emulator_process;
using namespace std::chrono_literals;
using strings = std::vector<std::string>;

using namespace forewarn_test::agent;

TEST_CASE("watch end to end (Azure): the leader approves, one JSON object per change", "[watch][e2e][agent]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_0", "--approve", "leader", "--interval", "300",
                         "--exit-after", "3"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events",
         R"({"EventId":"F1","EventType":"Freeze","Resources":["WestNO_0","WestNO_1"],"DurationInSeconds":5,"impact":"2s"})");
    const auto code = w.wait_exit(30s);
    INFO(w.err());
    REQUIRE(code == 0);
    const auto lines = w.out();
    REQUIRE(lines.size() == 3);
    const auto prepare = parse_line(lines[0]);
    CHECK(prepare.change == "prepare");
    CHECK(prepare.cloud == "azure");
    CHECK(prepare.id == "F1");
    CHECK(prepare.type == "freeze");
    CHECK(prepare.raw_type == "Freeze");
    CHECK(prepare.status == "scheduled");
    CHECK(prepare.raw_status == "Scheduled");
    REQUIRE(prepare.not_before.has_value());
    CHECK(prepare.not_before->size() == 20);  // 2022-04-11T22:26:58Z
    CHECK(prepare.not_before->back() == 'Z');
    CHECK(prepare.resources == strings{"WestNO_0", "WestNO_1"});
    CHECK(prepare.source == std::optional<std::string>("platform"));
    CHECK(prepare.duration_s == std::optional<long long>(5));
    CHECK_FALSE(prepare.incarnation.empty());
    const auto started = parse_line(lines[1]);
    CHECK(started.change == "started");
    CHECK(started.status == "started");
    CHECK_FALSE(started.not_before.has_value());  // "" once Started
    const auto recover = parse_line(lines[2]);
    CHECK(recover.change == "recover");
    CHECK(recover.reason == std::optional<std::string>("completed"));
    CHECK(approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"F1"}]})"});
    // Every request as the protocol wants it.
    auto c = control(emu);
    auto r = c.Get("/emulator/v1/requests");
    REQUIRE(r);
    CHECK(r->body.find("X-Forwarded-For") == std::string::npos);
}

TEST_CASE("watch end to end (Azure): a follower leaves platform events to the leader", "[watch][e2e]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_1", "--approve", "leader", "--interval", "300",
                         "--exit-after", "3"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"P1","EventType":"Reboot","Resources":["WestNO_0","WestNO_1"],"impact":"1s"})");
    REQUIRE(w.wait_for_lines(1, 20s));
    wait_for_polls(emu, 3);  // the follower polled on, and did not approve
    CHECK(approval_bodies(emu).empty());
    post(emu, "azure/events/P1/start", "{}");  // the leader (elsewhere) approved
    const auto code = w.wait_exit(30s);
    INFO(w.err());
    REQUIRE(code == 0);
    const auto lines = w.out();
    REQUIRE(lines.size() == 3);
    CHECK(parse_line(lines[0]).change == "prepare");
    CHECK(parse_line(lines[1]).change == "started");
    CHECK(parse_line(lines[2]).reason == std::optional<std::string>("completed"));
    CHECK(approval_bodies(emu).empty());
}

TEST_CASE("watch end to end (Azure): a follower approves a user event after its grace", "[watch][e2e]") {
    // No rate limit: at --interval 300 the start-up requests, the polls, the poll after the grace
    // and the approval can be six requests within a second, and a 429 retried is a second POST.
    emulator_process emu({"--rate-limit", "0"});
    auto w = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_1", "--approve", "leader", "--grace", "1",
                         "--interval", "300", "--exit-after", "2"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events",
         R"({"EventId":"U1","EventType":"Reboot","EventSource":"User","Resources":["WestNO_0","WestNO_1"],"impact":"1m"})");
    const auto code = w.wait_exit(30s);
    INFO(w.err());
    REQUIRE(code == 0);
    const auto lines = w.out();
    REQUIRE(lines.size() == 2);
    CHECK(parse_line(lines[0]).change == "prepare");
    CHECK(parse_line(lines[0]).source == std::optional<std::string>("user"));
    CHECK(parse_line(lines[1]).change == "started");
    CHECK(approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"U1"}]})"});
}

TEST_CASE("watch end to end (Azure): --approve own approves only events naming --self (flags written --name=VALUE)",
          "[watch][e2e]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud=azure", "--json", "--self=myss_1", "--approve=own", "--interval=300", "--exit-after=3"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"T0","EventType":"Terminate","Resources":["myss_0"]})");
    post(emu, "azure/events", R"({"EventId":"T1","EventType":"Terminate","Resources":["myss_1"],"impact":"1m"})");
    const auto code = w.wait_exit(30s);
    INFO(w.err());
    REQUIRE(code == 0);
    std::multiset<std::string> seen;
    for (const auto& l : w.out()) {
        const auto c = parse_line(l);
        CHECK(c.type == "terminate");
        seen.insert(c.change + ":" + c.id);
    }
    CHECK(seen == std::multiset<std::string>{"prepare:T0", "prepare:T1", "started:T1"});
    CHECK(approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"T1"}]})"});
}

TEST_CASE("watch end to end (Azure): two agents on one emulator, each endpoint naming its VM - each event approved by "
          "its own VM's agent",
          "[watch][e2e]") {
    temp_dir dir("two-vms");
    const std::string scenario = dir.file("scenario.json");
    {
        std::ofstream f(scenario);
        f << R"({"name": "two-vms", "rate_limit": 0, "vms": [{"name": "WestNO_0"}, {"name": "WestNO_1"}]})";
    }
    emulator_process emu({"--scenario", scenario, "--quiet"});
    std::vector<std::unique_ptr<child_process>> agents;
    for (const std::string name : {"WestNO_0", "WestNO_1"}) {
        strings args = agent_command();
        args.insert(args.end(), {"--endpoint", emu.base_url() + "/emulator/vm/" + name, "--cloud", "azure", "--json",
                                 "--self", name, "--approve", "own", "--interval", "300", "--exit-after", "4"});
        agents.push_back(std::make_unique<child_process>(args));
        REQUIRE(agents.back()->wait_for_stderr("watching azure", agent_start()));
    }
    // A notice of 15 min: only an approval starts either event within the test.
    post(emu, "azure/events", R"({"EventId":"R0","EventType":"Reboot","Resources":["WestNO_0"],"notice":"15m","impact":"3s"})");
    post(emu, "azure/events", R"({"EventId":"R1","EventType":"Reboot","Resources":["WestNO_1"],"notice":"15m","impact":"3s"})");
    for (auto& a : agents) {
        const auto code = a->wait_exit(30s);
        INFO(a->err());
        REQUIRE(code == 0);
    }
    std::map<std::string, std::string> approved_by;
    const auto doc = control_get(emu, "state");
    for (const auto& e : doc["events"].GetArray()) approved_by[e["EventId"].GetString()] = e["approved_by"].GetString();
    CHECK(approved_by == std::map<std::string, std::string>{{"R0", "WestNO_0"}, {"R1", "WestNO_1"}});
    // Each agent's requests were answered as its VM: the log names it.
    std::set<std::string> vms;
    const auto log = control_get(emu, "requests");
    for (const auto& r : log["requests"].GetArray())
        if (r.HasMember("vm") && r["vm"].IsString()) vms.insert(r["vm"].GetString());
    CHECK(vms == std::set<std::string>{"WestNO_0", "WestNO_1"});
}

TEST_CASE("watch end to end (GCE): a live migration, hanging GETs", "[watch][e2e][gce][agent]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "gce", "--json", "--exit-after", "2"});
    REQUIRE(w.wait_for_stderr("watching gce", agent_start()));
    post(emu, "gce", R"({"instance/maintenance-event":"MIGRATE_ON_HOST_MAINTENANCE"})");
    REQUIRE(w.wait_for_lines(1, 20s));
    post(emu, "gce", R"({"instance/maintenance-event":"NONE"})");
    const auto code = w.wait_exit(30s);
    INFO(w.err());
    REQUIRE(code == 0);
    const auto lines = w.out();
    REQUIRE(lines.size() == 2);
    const auto prepare = parse_line(lines[0]);
    CHECK(prepare.change == "prepare");
    CHECK(prepare.cloud == "gce");
    CHECK(prepare.id == "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE");
    CHECK(prepare.type == "live_migrate");
    CHECK(prepare.raw_type == "MIGRATE_ON_HOST_MAINTENANCE");
    CHECK_FALSE(prepare.source.has_value());
    CHECK_FALSE(prepare.duration_s.has_value());
    CHECK_FALSE(prepare.not_before.has_value());
    const auto recover = parse_line(lines[1]);
    CHECK(recover.change == "recover");
    CHECK(recover.reason == std::optional<std::string>("completed"));
    // Watched from the notice (GCE never says Started): the migration's pause, here none.
    REQUIRE(recover.observed_pause_s.has_value());
    CHECK(*recover.observed_pause_s < 0.5);
    // Hanging GETs, not a 1 Hz poll: a handful of requests in all.
    auto c = control(emu);
    auto r = c.Get("/emulator/v1/requests");
    REQUIRE(r);
    CHECK(r->body.find("wait_for_change=true") != std::string::npos);
}

TEST_CASE("watch end to end (AWS): a scheduled reboot and a Spot notice over IMDSv2", "[watch][e2e][aws][agent]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "aws", "--json", "--exit-after", "3"});
    REQUIRE(w.wait_for_stderr("watching aws", agent_start()));
    post(emu, "aws/events", R"({"Code":"system-reboot","in":"24h","window":"2h","EventId":"instance-event-1"})");
    REQUIRE(w.wait_for_lines(1, 20s));
    post(emu, "aws/spot", R"({"action":"terminate","in":"2m"})");
    REQUIRE(w.wait_for_lines(2, 20s));
    post(emu, "aws/events/instance-event-1/complete", "{}");
    const auto code = w.wait_exit(30s);
    INFO(w.err());
    REQUIRE(code == 0);
    const auto lines = w.out();
    REQUIRE(lines.size() == 3);
    const auto reboot = parse_line(lines[0]);
    CHECK(reboot.change == "prepare");
    CHECK(reboot.cloud == "aws");
    CHECK(reboot.id == "instance-event-1");
    CHECK(reboot.type == "reboot");
    CHECK(reboot.raw_type == "system-reboot");
    CHECK(reboot.status == "scheduled");
    REQUIRE(reboot.not_before.has_value());
    CHECK(reboot.not_before->back() == 'Z');
    const auto spot = parse_line(lines[1]);
    CHECK(spot.change == "prepare");
    CHECK(spot.id == "spot-instance-action");
    CHECK(spot.type == "preempt");
    CHECK(spot.raw_type == "terminate");
    REQUIRE(spot.not_before.has_value());
    CHECK(*spot.not_before < *reboot.not_before);  // two minutes, not a day
    const auto recover = parse_line(lines[2]);
    CHECK(recover.change == "recover");
    CHECK(recover.id == "instance-event-1");
    CHECK(recover.reason == std::optional<std::string>("completed"));
    // IMDSv2: a session token first, then every read carries it.
    auto c = control(emu);
    auto r = c.Get("/emulator/v1/requests");
    REQUIRE(r);
    auto doc = forewarn::detail::parse_json(r->body);
    REQUIRE(doc.has_value());
    std::size_t puts = 0, gets = 0;
    for (const auto& req : (*doc)["requests"].GetArray()) {
        const std::string target = req["target"].GetString();
        if (target.rfind("/latest/", 0) != 0) continue;
        if (std::string(req["method"].GetString()) == "PUT") {
            CHECK(target == "/latest/api/token");
            ++puts;
        } else {
            ++gets;
            bool token = false;
            for (const auto& h : req["headers"].GetArray())
                token = token || forewarn::detail::iequals(h[0].GetString(), "X-aws-ec2-metadata-token");
            INFO(target);
            CHECK(token);
        }
    }
    CHECK(puts >= 1);
    CHECK(gets >= 3);
}

namespace {

// The agent over one of the emulator's EC2-shaped services served under a prefix (/alibaba, /tencent).
child_process watch_at(const emulator_process& emu, const std::string& prefix, strings flags) {
    strings args = agent_command();
    args.insert(args.end(), {"--endpoint", emu.base_url() + prefix});
    args.insert(args.end(), flags.begin(), flags.end());
    return child_process(args);
}

// The port forewarn-watch --metrics-listen 127.0.0.1:0 said it serves on, or 0.
int metrics_port(child_process& w) {
    const std::string err = w.err();
    const auto at = err.find("metrics on http://127.0.0.1:");
    return at == std::string::npos ? 0 : std::stoi(err.substr(at + 28));
}

// "2026-11-27T02:05:00Z" as a time point (the JSON lines' form).
std::chrono::system_clock::time_point utc(const std::string& text) {
    auto t = forewarn::detail::parse_iso8601(text);
    REQUIRE(t.has_value());
    return *t;
}

}  // namespace

TEST_CASE("watch end to end (AWS): a scheduled-events list the parser refuses never hides the Spot notice - the key's "
          "error is reported and /healthz names it",
          "[watch][e2e][aws][agent]") {
    // AWS's own history example names one EventId twice: served on the scheduled path it is that
    // key's error, while the Spot instance-action beside it is delivered.
    emulator_process emu;
    const std::string twice =
        R"([{"NotBefore":"21 Jan 2019 09:00:43 GMT","Code":"system-reboot","Description":"[Canceled] scheduled reboot",)"
        R"("EventId":"instance-event-0d59937288b749b32","NotAfter":"21 Jan 2019 09:17:23 GMT","State":"canceled"},)"
        R"({"NotBefore":"29 Jan 2019 09:00:43 GMT","Code":"system-reboot","Description":"[Completed] scheduled reboot",)"
        R"("EventId":"instance-event-0d59937288b749b32","NotAfter":"29 Jan 2019 09:17:23 GMT","State":"completed"}])";
    forewarn::detail::json_writer f(true);
    f.begin_object();
    f.key("kind");
    f.string("body");
    f.key("service");
    f.string("aws");
    f.key("path");
    f.string("/events/maintenance/scheduled");
    f.key("count");
    f.int64(-1);
    f.key("body");
    f.string(twice);
    f.end_object();
    post(emu, "faults", f.str());
    auto w = watch(emu, {"--cloud", "aws", "--json", "--exit-after", "1", "--metrics-listen", "127.0.0.1:0"});
    REQUIRE(w.wait_for_stderr("/metrics and /healthz", agent_start()));
    REQUIRE(w.wait_for_stderr("EventId", 20s));  // the key's error, reported
    httplib::Client c("127.0.0.1", metrics_port(w));
    c.set_read_timeout(10, 0);
    auto h = c.Get("/healthz");
    REQUIRE(h);
    CHECK(h->status == 200);  // the other keys are heard
    CHECK(h->body.find("failing key http://127.0.0.1:" + std::to_string(emu.port()) +
                       "/latest/meta-data/events/maintenance/scheduled") != std::string::npos);
    CHECK(h->body.find("listed twice") != std::string::npos);
    post(emu, "aws/spot", R"({"action":"terminate","in":"2m"})");
    REQUIRE(w.wait_for_lines(1, 20s));  // before the fix: never, for as long as the list is served
    const auto spot = parse_line(w.out()[0]);
    CHECK(spot.change == "prepare");
    CHECK(spot.id == "spot-instance-action");
    CHECK(spot.type == "preempt");
    CHECK(w.wait_exit(30s) == 0);
}

TEST_CASE("watch end to end (AWS Auto Scaling): a target lifecycle state Terminated is a terminate notice",
          "[watch][e2e][aws][agent]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "aws", "--json", "--exit-after", "2"});
    REQUIRE(w.wait_for_stderr("watching aws", agent_start()));
    post(emu, "aws/lifecycle", R"({"state":"InService"})");
    post(emu, "aws/lifecycle", R"({"state":"Warmed:Terminated"})");
    REQUIRE(w.wait_for_lines(1, 20s));
    post(emu, "aws/lifecycle", R"({"state":"InService"})");  // the scale-in was abandoned
    INFO(w.err());
    REQUIRE(w.wait_exit(30s) == 0);
    const auto lines = w.out();
    REQUIRE(lines.size() == 2);
    const auto scale_in = parse_line(lines[0]);
    CHECK(scale_in.change == "prepare");
    CHECK(scale_in.id == "autoscaling-termination");
    CHECK(scale_in.type == "terminate");
    CHECK(scale_in.raw_type == "Warmed:Terminated");
    CHECK_FALSE(scale_in.not_before.has_value());
    CHECK(parse_line(lines[1]).change == "recover");
}

namespace {

// What the emulated Auto Scaling received (its control state), in order.
struct asg_call {
    std::string action, instance_id, hook, group, result, code;
    bool signature_valid = false;
    int status = 0;
    long long at_ms = 0;
};

std::vector<asg_call> autoscaling_calls(const emulator_process& emu) {
    const auto doc = control_get(emu, "state");
    std::vector<asg_call> out;
    const auto& calls = doc["aws"]["autoscaling"]["calls"];
    for (rapidjson::SizeType i = 0; i < calls.Size(); ++i) {
        const auto& c = calls[i];
        out.push_back({c["action"].GetString(), c["instance_id"].GetString(), c["hook"].GetString(), c["group"].GetString(),
                       c["result"].GetString(), c["code"].GetString(), c["signature_valid"].GetBool(), c["status"].GetInt(),
                       c["at_ms"].GetInt64()});
    }
    return out;
}

std::vector<asg_call> calls_of(const std::vector<asg_call>& all, const std::string& action) {
    std::vector<asg_call> out;
    for (const auto& c : all)
        if (c.action == action) out.push_back(c);
    return out;
}

// The agent with a lifecycle hook and 1 s heartbeats, its prepare hook `hook`.
child_process watch_lifecycle(const emulator_process& emu, const std::string& hook) {
    post(emu, "aws/autoscaling", R"({"group":"web-asg","hook":"drain-hook","tags":true})");
    return watch(emu, {"--cloud", "aws", "--approve", "own", "--interval", "1", "--aws-lifecycle-hook", "drain-hook",
                       "--aws-heartbeat", "1", "--aws-api-endpoint", emu.base_url() + "/autoscaling/", "--on-prepare", hook});
}

}  // namespace

TEST_CASE("watch end to end (AWS Auto Scaling): heartbeats while the prepare hook runs, then one signed "
          "CompleteLifecycleAction for this instance, hook and group",
          "[watch][e2e][aws][agent][autoscaling]") {
    emulator_process emu;
    auto w = watch_lifecycle(emu, hook_for("sleep 3.5", "ping -n 5 127.0.0.1 >nul"));  // three heartbeat intervals and more
    REQUIRE(w.wait_for_stderr("watching aws", agent_start()));
    post(emu, "aws/lifecycle", R"({"state":"Terminated"})");
    REQUIRE(eventually([&] { return !calls_of(autoscaling_calls(emu), "CompleteLifecycleAction").empty(); }, 30s));
    // Three more intervals: nothing after the completion.
    const auto done_at = calls_of(autoscaling_calls(emu), "CompleteLifecycleAction")[0].at_ms;
    REQUIRE(eventually([&] { return control_get(emu, "state")["time_ms"].GetInt64() >= done_at + 3000; }, 20s));
    w.stop();
    INFO(w.err());
    CHECK(w.wait_exit(20s) == 0);
    const auto all = autoscaling_calls(emu);
    const auto completes = calls_of(all, "CompleteLifecycleAction");
    REQUIRE(completes.size() == 1);
    CHECK(completes[0].result == "CONTINUE");
    CHECK(completes[0].signature_valid);
    CHECK(completes[0].status == 200);
    CHECK(completes[0].instance_id == "vm0");
    CHECK(completes[0].hook == "drain-hook");
    CHECK(completes[0].group == "web-asg");  // read from the instance's tag
    const auto beats = calls_of(all, "RecordLifecycleActionHeartbeat");
    REQUIRE(beats.size() >= 3);
    for (std::size_t i = 0; i < beats.size(); ++i) {
        INFO("heartbeat " << i);
        CHECK(beats[i].signature_valid);
        CHECK(beats[i].status == 200);
        CHECK(beats[i].at_ms <= completes[0].at_ms);  // none after the completion (the log's order below)
        if (i > 0) CHECK(beats[i].at_ms - beats[i - 1].at_ms >= 900);  // at the interval (1 s), not faster
    }
    // In the order Auto Scaling received them, the completion is the last call: a heartbeat may share
    // its millisecond, never follow it.
    CHECK(all.back().action == "CompleteLifecycleAction");
    CHECK(control_get(emu, "state")["aws"]["autoscaling"]["action"].GetString() == std::string("Terminating:Proceed"));
}

TEST_CASE("watch end to end (AWS Auto Scaling): a failing prepare hook completes nothing, and its heartbeats stop",
          "[watch][e2e][aws][agent][autoscaling]") {
    emulator_process emu;
    auto w = watch_lifecycle(emu, hook_for("sleep 2.5; exit 3", "ping -n 4 127.0.0.1 >nul & exit 3"));
    REQUIRE(w.wait_for_stderr("watching aws", agent_start()));
    post(emu, "aws/lifecycle", R"({"state":"Terminated"})");
    REQUIRE(w.wait_for_stderr("hook prepare autoscaling-termination: the event is not approved", 30s));
    // The heartbeats stop: none arrives in the three intervals after the next one that may be in flight.
    REQUIRE(eventually([&] { return !calls_of(autoscaling_calls(emu), "RecordLifecycleActionHeartbeat").empty(); }));
    const auto settled = control_get(emu, "state")["time_ms"].GetInt64() + 1000;
    REQUIRE(eventually([&] { return control_get(emu, "state")["time_ms"].GetInt64() >= settled + 3000; }, 20s));
    w.stop();
    INFO(w.err());
    CHECK(w.wait_exit(20s) == 0);
    const auto all = autoscaling_calls(emu);
    CHECK(calls_of(all, "CompleteLifecycleAction").empty());
    const auto beats = calls_of(all, "RecordLifecycleActionHeartbeat");
    REQUIRE_FALSE(beats.empty());
    CHECK(beats.back().at_ms <= settled);
    CHECK(control_get(emu, "state")["aws"]["autoscaling"]["action"].GetString() == std::string("Terminating:Wait"));
}

TEST_CASE("watch end to end (GCE): --approve own starts an upcoming window that can be rescheduled with one "
          "performMaintenance, and the notice then shows it started",
          "[watch][e2e][gce][agent][approve]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "gce", "--json", "--approve", "own", "--gce-api-endpoint", emu.base_url()});
    REQUIRE(w.wait_for_stderr("watching gce", agent_start()));
    post(emu, "gce", R"({"instance/upcoming-maintenance":"{\"can_reschedule\":\"true\",\"maintenance_status\":\"PENDING\",)"
                     R"(\"type\":\"SCHEDULED\",\"window_start_time\":\"2026-12-03T10:00:00Z\"}"})");
    REQUIRE(w.wait_for_lines(2, 30s));  // prepare, then started (the window playing ONGOING)
    w.stop();
    INFO(w.err());
    CHECK(w.wait_exit(20s) == 0);
    const auto lines = w.out();
    CHECK(parse_line(lines[0]).change == "prepare");
    CHECK(parse_line(lines[1]).change == "started");
    const auto state = control_get(emu, "state");
    const auto& calls = state["gce_compute"];
    REQUIRE(calls.Size() == 1);
    CHECK(calls[0]["status"].GetInt() == 200);
    CHECK(calls[0]["token_valid"].GetBool());
    CHECK(std::string(calls[0]["path"].GetString()) ==
          "/compute/v1/projects/forewarn-test/zones/europe-west1-b/instances/vm0/performMaintenance");
}

TEST_CASE("watch end to end (Alibaba): a preemptible instance's reclaim notice under a session token - found by --cloud auto",
          "[watch][e2e][alibaba][agent]") {
    emulator_process emu;
    auto w = watch_at(emu, "/alibaba", {"--cloud", "auto", "--json", "--exit-after", "1"});
    REQUIRE(w.wait_for_stderr("watching alibaba", agent_start()));
    const auto posted = std::chrono::system_clock::now();
    post(emu, "alibaba/spot", R"({"in":"5m"})");
    REQUIRE(w.wait_for_lines(1, 20s));
    INFO(w.err());
    REQUIRE(w.wait_exit(30s) == 0);
    const auto notice = parse_line(w.out()[0]);
    CHECK(notice.change == "prepare");
    CHECK(notice.cloud == "alibaba");
    CHECK(notice.id == "spot-termination");
    CHECK(notice.type == "preempt");
    REQUIRE(notice.not_before.has_value());
    const auto ahead = utc(*notice.not_before) - posted;
    CHECK(ahead > std::chrono::minutes(4));
    CHECK(ahead < std::chrono::minutes(6));
    CHECK(notice.resources == strings{"vm0"});  // the instance-id
    // A session token first; every read of the notice carried it (a GET without one is a 401).
    auto c = control(emu);
    auto r = c.Get("/emulator/v1/requests");
    REQUIRE(r);
    auto doc = forewarn::detail::parse_json(r->body);
    REQUIRE(doc.has_value());
    std::size_t tokens = 0, reads = 0;
    for (const auto& req : (*doc)["requests"].GetArray()) {
        const std::string target = req["target"].GetString();
        if (target == "/alibaba/latest/api/token" && std::string(req["method"].GetString()) == "PUT") ++tokens;
        if (target.find("termination-time") == std::string::npos) continue;
        ++reads;
        CHECK(req["status"].GetInt() != 401);
    }
    CHECK(tokens >= 1);
    CHECK(reads >= 1);
}

TEST_CASE("watch end to end (Tencent): a Spot reclaim time written in UTC+8 is heard at its instant in UTC - found by "
          "--cloud auto",
          "[watch][e2e][tencent][agent]") {
    emulator_process emu;
    auto w = watch_at(emu, "/tencent", {"--cloud", "auto", "--json", "--exit-after", "1"});
    REQUIRE(w.wait_for_stderr("watching tencent", agent_start()));
    const auto posted = std::chrono::system_clock::now();
    post(emu, "tencent/spot", R"({"in":"2m"})");
    REQUIRE(w.wait_for_lines(1, 20s));
    INFO(w.err());
    REQUIRE(w.wait_exit(30s) == 0);
    const auto notice = parse_line(w.out()[0]);
    CHECK(notice.cloud == "tencent");
    CHECK(notice.id == "spot-termination");
    CHECK(notice.type == "preempt");
    REQUIRE(notice.not_before.has_value());
    const auto ahead = utc(*notice.not_before) - posted;  // 8 hours off if read as UTC
    CHECK(ahead > std::chrono::minutes(1));
    CHECK(ahead < std::chrono::minutes(3));
    CHECK(notice.resources == strings{"ins-vm0"});
}

TEST_CASE("watch end to end: SIGTERM and SIGINT stop it cleanly, even mid hanging GET", "[watch][e2e][agent]") {
    // Windows: Ctrl+C (SIGINT under Wine) is its console's stop; a service stop takes the same path.
    for (int sig : windows_agent() ? std::vector<int>{SIGINT} : std::vector<int>{SIGTERM, SIGINT}) {
        emulator_process emu;
        auto w = watch(emu, {"--cloud", "gce", "--json"});
        REQUIRE(w.wait_for_stderr("watching gce", agent_start()));
        // The log shows a request once answered: wait for the first snapshot of the maintenance
        // key, after which the watcher goes straight into its hanging GETs; give it a moment.
        auto c = control(emu);
        const auto give_up = std::chrono::steady_clock::now() + 10s;
        for (;;) {
            auto r = c.Get("/emulator/v1/requests");
            REQUIRE(r);
            if (r->body.find("maintenance-event") != std::string::npos) break;
            REQUIRE(std::chrono::steady_clock::now() < give_up);
            std::this_thread::sleep_for(20ms);
        }
        std::this_thread::sleep_for(300ms);
        const auto t0 = std::chrono::steady_clock::now();
        w.signal(sig);
        const auto code = w.wait_exit(10s);
        INFO(w.err());
        CHECK(code == 0);
        CHECK(std::chrono::steady_clock::now() - t0 < 5s);  // generous; the GET would hang 60 s
        CHECK(w.out().empty());
    }
}

TEST_CASE("watch end to end: --state-file, a restart does not repeat a change", "[watch][e2e][agent]") {
    emulator_process emu;
    temp_dir dir("watch-state");
    const auto state = dir.path / "state.json";
    {
        auto w = watch(emu, {"--cloud", "azure", "--json", "--interval", "300", "--state-file", agent_path(state.string()),
                             "--exit-after", "1"});
        REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
        post(emu, "azure/events", R"({"EventId":"R1","EventType":"Redeploy","Resources":["WestNO_0"],"impact":"1m"})");
        REQUIRE(w.wait_exit(30s) == 0);
        REQUIRE(w.out().size() == 1);
        CHECK(parse_line(w.out()[0]).change == "prepare");
    }
    REQUIRE(std::filesystem::exists(state));
    auto w = watch(emu, {"--cloud", "azure", "--json", "--interval", "300", "--state-file", agent_path(state.string()),
                         "--exit-after", "1"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    wait_for_polls(emu, 3);
    CHECK(w.out().empty());  // R1 is known: no second prepare
    post(emu, "azure/events/R1/start", "{}");
    REQUIRE(w.wait_exit(30s) == 0);
    REQUIRE(w.out().size() == 1);
    CHECK(parse_line(w.out()[0]).change == "started");
    std::filesystem::remove(state);
}

/// Waits (bounded) until the state file names `id`: what a restart will know.
static void wait_for_state(const std::filesystem::path& state, const std::string& id) {
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    for (;;) {
        std::ifstream in(state);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.find(id) != std::string::npos) return;
        REQUIRE(std::chrono::steady_clock::now() < give_up);
        std::this_thread::sleep_for(20ms);
    }
}

TEST_CASE("watch end to end: killed after prepare, restarted after the event - the recover reason is never a guess", "[watch][e2e][state][agent]") {
    // The VM reboots: forewarn-watch dies (SIGKILL) after `prepare`, the platform starts the
    // Reboot at NotBefore and removes it, and the agent comes back with its state file. It saw
    // neither Started nor the removal, but the service's Date says NotBefore has passed:
    // completed. An event that disappears before its NotBefore while the agent is down may have
    // been cancelled or approved by another VM: unknown, never "cancelled".
    emulator_process emu;
    temp_dir dir("watch-restart");
    const auto state = dir.path / "state.json";
    const strings flags{"--cloud", "azure", "--json", "--interval", "300", "--approve", "never", "--state-file",
                         agent_path(state.string())};
    auto with = [&](strings extra) {
        strings all = flags;
        all.insert(all.end(), extra.begin(), extra.end());
        return all;
    };

    SECTION("NotBefore passed while it was down: completed") {
        {
            auto w = watch(emu, flags);
            REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
            post(emu, "azure/events", R"({"EventId":"R2","EventType":"Reboot","Resources":["WestNO_0"],"impact":"1m"})");
            REQUIRE(w.wait_for_lines(1, 20s));
            CHECK(parse_line(w.out()[0]).change == "prepare");
            wait_for_state(state, "R2");
            w.signal(SIGKILL);  // the reboot
            REQUIRE(w.wait_exit(10s) == -1);
        }
        post(emu, "advance", R"({"by":"20m"})");  // NotBefore (15 min), Started, removed after 1 min
        auto w = watch(emu, with({"--exit-after", "1"}));
        REQUIRE(w.wait_exit(30s) == 0);
        INFO(w.err());
        REQUIRE(w.out().size() == 1);
        const auto recover = parse_line(w.out()[0]);
        CHECK(recover.change == "recover");
        CHECK(recover.id == "R2");
        CHECK(recover.reason == std::optional<std::string>("completed"));
    }
    SECTION("gone before NotBefore while it was down: unknown") {
        {
            auto w = watch(emu, flags);
            REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
            post(emu, "azure/events", R"({"EventId":"R3","EventType":"Reboot","Resources":["WestNO_0"],"impact":"1m"})");
            REQUIRE(w.wait_for_lines(1, 20s));
            wait_for_state(state, "R3");
            w.signal(SIGKILL);
            REQUIRE(w.wait_exit(10s) == -1);
        }
        post(emu, "azure/events/R3/cancel", "{}");
        auto w = watch(emu, with({"--exit-after", "1"}));
        REQUIRE(w.wait_exit(30s) == 0);
        INFO(w.err());
        REQUIRE(w.out().size() == 1);
        const auto recover = parse_line(w.out()[0]);
        CHECK(recover.change == "recover");
        CHECK(recover.id == "R3");
        CHECK(recover.reason == std::optional<std::string>("unknown"));
    }
    std::filesystem::remove(state);
}

TEST_CASE("watch end to end: --cloud auto finds the emulator - readable lines without --json", "[watch][e2e]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "auto", "--interval", "300", "--exit-after", "1"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"H1","EventType":"Freeze","Resources":["vm0"]})");
    REQUIRE(w.wait_exit(30s) == 0);
    const auto lines = w.out();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind("prepare", 0) == 0);
    CHECK(lines[0].find("freeze H1 Scheduled") != std::string::npos);
}

TEST_CASE("watch: a bad command line exits 2 (said once, before anything else), --help and --version 0", "[watch][agent]") {
    for (const strings& bad : {strings{"--approve", "sometimes"}, strings{"--cloud", "ibm"}, strings{"--interval", "x"},
                               strings{"--exit-after", "0"}, strings{"--bogus"}, strings{"--self"},
                               strings{"--etcd", "http://127.0.0.1:2379"}, strings{"--fleet-group", "db"},
                               strings{"--etcd", "http://127.0.0.1:2379", "--fleet-group", "db", "--fleet-max", "0"},
                               strings{"--etcd", "http://127.0.0.1:2379", "--fleet-group", "db", "--fleet-ttl", "5"},
                               strings{"--etcd", "http://127.0.0.1:2379", "--fleet-group", "db", "--etcd-cert", "c.pem"},
                               strings{"--etcd-user", "fleet"}, strings{"--only", "freeze,bogus"},
                               strings{"--ignore", ""}, strings{"--approve-freeze-under", "0"},
                               strings{"--unready-before", "-1"}, strings{"--ready-file", ""},
                               strings{"--webhook", "ftp://example.com/x"}, strings{"--webhook", "http://a b/"},
                               strings{"--webhook", "http://127.0.0.1:1/", "--webhook-template", "/nonexistent/t.json"},
                               strings{"--webhook-template", FOREWARN_SOURCE_DIR "/CMakeLists.txt"},
                               strings{"--approve-window", "22:00"}, strings{"--approve-window", "22:00-04:00 Europe/Paris"},
                               // the --name=VALUE form: a switch takes no value, a value is checked as ever
                               strings{"--json=1"}, strings{"--approve="}, strings{"--approve=sometimes"}, strings{"--bogus=1"},
                               strings{"--=own"}, strings{"--fleet-max=0", "--etcd=http://127.0.0.1:2379", "--fleet-group=db"},
                               // a malformed endpoint is a usage error, named or probed (auto)
                               strings{"--cloud", "azure", "--endpoint", "http://127.0.0.1:99999"},
                               strings{"--cloud=gce", "--endpoint=ftp://127.0.0.1:8080"}, strings{"--cloud=aws", "--endpoint=http://"},
                               strings{"--endpoint", "http://127.0.0.1:99999"}}) {
        strings args = agent_command();
        args.insert(args.end(), bad.begin(), bad.end());
        child_process p(args);
        INFO(args.back());
        CHECK(p.wait_exit(10s) == 2);
        CHECK(p.out().empty());
        // Said once, before anything else: one line, no "watching ... at" with an empty address.
        const std::string err = p.err();
        CHECK_FALSE(err.empty());
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
        CHECK(err.find("watching") == std::string::npos);
    }
    strings version_args = agent_command();
    version_args.push_back("--version");
    child_process version(version_args);
    CHECK(version.wait_exit(10s) == 0);
    auto version_lines = version.out();
    REQUIRE(version_lines.size() == 1);
    if (!version_lines[0].empty() && version_lines[0].back() == '\r') version_lines[0].pop_back();  // Windows' text mode
    CHECK(version_lines[0] == "forewarn-watch " FOREWARN_VERSION_STRING);
    strings help_args = agent_command();
    help_args.push_back("--help");
    child_process help(help_args);
    CHECK(help.wait_exit(10s) == 0);
    REQUIRE_FALSE(help.out().empty());
    CHECK(help.out()[0].rfind("usage: forewarn-watch", 0) == 0);
}

TEST_CASE("watch: --name=VALUE takes everything after the first '=' as the value - an empty one, and one holding '='",
          "[watch][agent]") {
    // The value is checked as ever, and its error quotes it: the whole value, not a name cut at
    // another '=' (which would be an unknown option).
    struct row {
        const char* arg;
        const char* value;
    };
    for (const row r : {row{"--cloud=azure=gce", "azure=gce"}, row{"--approve==own", "=own"}, row{"--cloud=", ""},
                        row{"--interval=5=", "5="}}) {
        strings args = agent_command();
        args.push_back(r.arg);
        child_process p(args);
        INFO(r.arg);
        CHECK(p.wait_exit(10s) == 2);
        const std::string err = p.err();
        INFO(err);
        CHECK(err.find(std::string("not \"") + r.value + "\"") != std::string::npos);
        CHECK(err.find("unknown option") == std::string::npos);
    }
    // A value holding '=' taken whole and used: check names this VM as --self gave it.
    emulator_process emu;
    strings args = agent_command();
    for (const char* a : {"check", "--cloud=azure", "--self=vm=0"}) args.push_back(a);
    args.push_back("--endpoint=" + emu.base_url());
    child_process p(args);
    CHECK(p.wait_exit(60s) == 0);
    std::string out;
    for (const auto& l : p.out()) out += l + "\n";
    INFO(out << p.err());
    CHECK(out.find("--self vm=0 (the metadata is not asked)") != std::string::npos);
}

TEST_CASE("watch --state-file under a file-size limit: the write fails in the log, the agent goes on", "[watch][e2e][state]") {
    // ulimit -f 1: no file of more than 512 bytes; a state file with an event is larger. Without
    // SIGXFSZ ignored the first write would kill the agent; the old file stays.
    temp_dir dir("fsize");
    emulator_process emu;
    child_process w({"/bin/sh", "-c", "ulimit -f 1 && exec \"$0\" \"$@\"", FOREWARN_WATCH_PATH, "--endpoint", emu.base_url(),
                     "--cloud", "azure", "--json", "--interval", "300", "--state-file", dir.file("state.json"),
                     "--exit-after", "2"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    // The first document (no events) is saved: small enough for the limit.
    REQUIRE(eventually([&] { return !read_text(dir.file("state.json")).empty(); }, 10s));
    const std::string before = read_text(dir.file("state.json"));
    post(emu, "azure/events", R"({"EventId":"L1","EventType":"Redeploy","Resources":["WestNO_0"],"notice":"10m"})");
    REQUIRE(w.wait_for_lines(1, 20s));
    post(emu, "azure/events", R"({"EventId":"L2","EventType":"Redeploy","Resources":["WestNO_0"],"notice":"10m"})");
    const auto code = w.wait_exit(30s);
    INFO(w.err());
    CHECK(code == 0);
    CHECK(w.out().size() == 2);
    CHECK(w.err().find("File too large") != std::string::npos);
    CHECK(read_text(dir.file("state.json")) == before);  // the old file as it was
    CHECK(before.find("L1") == std::string::npos);
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
        INFO(entry.path().string());
        files += entry.path().filename() != "state.json";  // no temporary file left
    }
    CHECK(files == 0);
}

TEST_CASE("watch hooks: the change on stdin and in FOREWARN_* variables, never in the command - prepare exit 0 approves",
          "[watch][e2e][hooks][agent]") {
    temp_dir dir("hooks");
    emulator_process emu;
    // The hook is the operator's command; the event reaches it only as data.
    const std::string hook = hook_for("cat >> " + quoted(dir.file("stdin")) + "; env | grep '^FOREWARN_' | sort >> " + quoted(dir.file("env")),
                                      "more >> " + quoted(dir.file("stdin")) + " & set >> " + quoted(dir.file("env")));
    // A secret in the agent's environment (the etcd password) is the agent's, never a hook's.
    ::setenv("FOREWARN_ETCD_PASSWORD", "s3cret-for-the-agent-only", 1);
    auto w = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_0", "--approve", "own", "--interval", "300",
                         "--on-prepare", hook, "--on-started", hook, "--on-recover", hook});
    ::unsetenv("FOREWARN_ETCD_PASSWORD");
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    // An id that would run a command if it were ever spliced into one (by sh or by cmd.exe).
    const std::string pwned = dir.file("pwned");
    const std::string id = "E1$(touch " + pwned + ");`touch " + pwned + "`&echo pwned>" + pwned;
    post(emu, "azure/events", R"({"EventId":")" + id + R"(","EventType":"Freeze","Resources":["WestNO_0"],"impact":"1s"})");
    REQUIRE(eventually([&] { return !approval_bodies(emu).empty(); }));  // ready only after the hook: then approved
    REQUIRE(eventually([&] { return count_of(read_text(dir.file("env")), "FOREWARN_HOOK=") >= 3; }));
    w.stop();
    CHECK(w.wait_exit(20s) == 0);
    INFO(w.err());
    const std::string env = read_text(dir.file("env"));
    CHECK(count_of(env, "FOREWARN_EVENT_ID=" + id + "\n") == 3);
    CHECK(count_of(env, "FOREWARN_HOOK=prepare\n") == 1);
    CHECK(count_of(env, "FOREWARN_HOOK=started\n") == 1);
    CHECK(count_of(env, "FOREWARN_HOOK=recover\n") == 1);
    CHECK(count_of(env, "FOREWARN_EVENT_TYPE=freeze\n") == 3);
    CHECK(count_of(env, "FOREWARN_CLOUD=azure\n") == 3);
    CHECK(count_of(env, "FOREWARN_RESOURCES=WestNO_0\n") == 3);
    CHECK(count_of(env, "FOREWARN_REASON=completed\n") == 1);
    CHECK(env.find("s3cret") == std::string::npos);
    const std::string in = read_text(dir.file("stdin"));
    CHECK(count_of(in, "\"change\":\"prepare\"") == 1);
    CHECK(count_of(in, "\"change\":\"recover\"") == 1);
    CHECK_FALSE(std::filesystem::exists(dir.file("pwned")));
    // The hook's own output goes to the log with the event id (here: nothing; the done line).
    CHECK(w.err().find("hook prepare " + id + ": done") != std::string::npos);
}

TEST_CASE("watch hooks: a failing or hung prepare hook is reported and not approved, and holds back no other event",
          "[watch][e2e][hooks][agent]") {
    temp_dir dir("hooks-fail");
    emulator_process emu;
    // Each event's notice is 5 minutes; a prepare hook must be done 297 s before NotBefore: 3 s.
    const std::string hook = hook_for(
        "case \"$FOREWARN_EVENT_ID\" in BAD) exit 1;; HUNG) echo \"$$\" > " + quoted(dir.file("hung.pid")) +
            "; exec sleep 60;; *) echo preparing \"$FOREWARN_EVENT_ID\";; esac",
        // The ids here are the test's own: %VAR% is spliced before cmd.exe parses (docs/windows.md).
        "if \"%FOREWARN_EVENT_ID%\"==\"BAD\" (exit 1) else if \"%FOREWARN_EVENT_ID%\"==\"HUNG\" (ping -n 61 127.0.0.1 >nul)"
        " else (echo preparing %FOREWARN_EVENT_ID%)");
    auto w = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--approve", "own", "--interval", "300",
                         "--on-prepare", hook, "--hook-deadline", "297"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    for (const char* id : {"HUNG", "BAD", "GOOD"})
        post(emu, "azure/events", std::string(R"({"EventId":")") + id + R"(","EventType":"Freeze","Resources":["WestNO_0"],"notice":"5m"})");
    // GOOD is approved while HUNG's hook still runs.
    REQUIRE(eventually([&] { return approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"GOOD"}]})"}; }));
    CHECK(w.err().find("hook prepare HUNG: timed_out") == std::string::npos);
    REQUIRE(w.wait_for_stderr("hook prepare HUNG: timed_out", 30s));
    REQUIRE(w.wait_for_stderr("hook prepare BAD: failed: exit status 1", 10s));
    CHECK(w.err().find("hook prepare GOOD: preparing GOOD") != std::string::npos);  // its output, with its event
    wait_for_polls(emu, 3);
    CHECK(approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"GOOD"}]})"});  // never BAD nor HUNG
    // The hung hook's process was stopped at the deadline.
    if (windows_agent()) {
        CHECK(eventually([] { return !process_running("ping", "-n 61 127.0.0.1"); }, 10s));  // the job's whole tree
    } else {
        const std::string pid = read_text(dir.file("hung.pid"));
        REQUIRE_FALSE(pid.empty());
        CHECK(eventually([&] { return ::kill(std::stoi(pid), 0) != 0; }, 10s));
    }
    w.stop();
    CHECK(w.wait_exit(20s) == 0);
}

TEST_CASE("watch hooks: once per change across a restart, again after a crash mid-hook", "[watch][e2e][hooks][state][agent]") {
    temp_dir dir("hooks-restart");
    emulator_process emu;
    const std::string state = dir.file("state.json");
    const std::string hook = hook_for(
        "echo \"$FOREWARN_EVENT_ID\" >> " + quoted(dir.file("runs")) + "; if [ -e " + quoted(dir.file("hang")) +
            " ]; then echo \"$$\" >> " + quoted(dir.file("pids")) + "; exec sleep 60; fi",
        // echo X >> F, not echo X>>F: "R1>>" would be "R" and a redirection of handle 1.
        "echo %FOREWARN_EVENT_ID% >> " + quoted(dir.file("runs")) + " & if exist " + quoted(dir.file("hang")) +
            " ping -n 62 127.0.0.1 >nul");
    // Waits for a stderr line; on failure the whole stderr is in the report.
    auto expect = [&dir](child_process& w, const std::string& text) {
        const bool seen = w.wait_for_stderr(text, 20s);
        std::string out;
        for (const auto& l : w.out()) out += l + "\n";
        INFO("stderr:\n" << w.err() << "stdout:\n" << out << "runs:\n" << read_text(dir.file("runs")));
        REQUIRE(seen);
    };
    auto flags = strings{"--cloud", "azure", "--self", "WestNO_0", "--approve", "own", "--interval", "300",
                         "--state-file", agent_path(state), "--on-prepare", hook};
    {
        auto w = watch(emu, flags);
        expect(w, "watching azure");
        post(emu, "azure/events", R"({"EventId":"R1","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m"})");
        expect(w, "hook prepare R1: done");
        w.stop();
        CHECK(w.wait_exit(20s) == 0);
    }
    {
        auto w = watch(emu, flags);
        expect(w, "watching azure");
        wait_for_polls(emu, 3);
        w.stop();
        CHECK(w.wait_exit(20s) == 0);
    }
    CHECK(lines_of(dir.file("runs")) == strings{"R1"});  // once, across the restart
    // A crash (SIGKILL) while a hook runs: the hook runs again after the restart.
    std::ofstream(dir.file("hang")) << "1";
    {
        auto w = watch(emu, flags);
        expect(w, "watching azure");
        post(emu, "azure/events", R"({"EventId":"R2","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m"})");
        REQUIRE(eventually([&] { return lines_of(dir.file("runs")) == strings{"R1", "R2"}; }));
        if (windows_agent()) REQUIRE(eventually([] { return process_running("ping", "-n 62 127.0.0.1"); }));
        else REQUIRE(eventually([&] { return !read_text(dir.file("pids")).empty(); }));
        w.signal(SIGKILL);
        w.wait_exit(20s);
    }
    // The crashed run's hook dies with it (Windows: its job object ends with its last handle;
    // Linux: the keeper leading its process group ends the group), so the rerun never overlaps it.
    if (windows_agent()) {
        CHECK(eventually([] { return !process_running("ping", "-n 62 127.0.0.1"); }, 10s));
    } else {
        const int orphan = std::atoi(read_text(dir.file("pids")).c_str());
        REQUIRE(orphan > 1);
        CHECK(eventually([&] { return !alive(orphan); }, 10s));
        if (alive(orphan)) ::kill(orphan, SIGKILL);
    }
    std::filesystem::remove(dir.file("hang"));
    {
        // R2 is not announced again (its prepare was delivered before the crash): the rerun's
        // success approves it all the same.
        auto w = watch(emu, flags);
        expect(w, "hook prepare R2: done");
        CHECK(eventually([&] { return approval_bodies(emu, 200).size() == 2; }));
        wait_for_polls(emu, 2);
        w.stop();
        CHECK(w.wait_exit(20s) == 0);
        INFO("stderr:\n" << w.err());
        for (const auto& l : w.out()) CHECK(l.find("prepare") == std::string::npos);  // not delivered twice
    }
    CHECK(lines_of(dir.file("runs")) == strings{"R1", "R2", "R2"});
    CHECK(approval_bodies(emu, 200) ==
          strings{R"({"StartRequests":[{"EventId":"R1"}]})", R"({"StartRequests":[{"EventId":"R2"}]})"});
}

// Windows only (the windows CI stage runs it with the [agent] cases; hidden elsewhere): the agent
// as a Windows service under Wine's service control manager.
TEST_CASE("watch as a Windows service: install checks its options, sc start runs it, sc stop stops it cleanly, uninstall removes it",
          "[.][windows][service]") {
    REQUIRE(windows_agent() != nullptr);  // FOREWARN_WATCH_EXE: this case is the Windows agent's
    const strings wine_exe = agent_command();
    auto run = [&](strings args, std::chrono::seconds limit = 60s) {
        strings all{wine_exe[0]};
        all.insert(all.end(), args.begin(), args.end());
        child_process p(all);
        const auto code = p.wait_exit(limit);
        INFO(args[0] << (args.size() > 1 ? " " + args[1] : std::string()) << ": " << p.err());
        REQUIRE(code.has_value());
        std::string out;
        for (const auto& l : p.out()) out += l + "\n";
        return std::make_pair(*code, out + p.err());
    };
    auto state = [&] {
        const auto r = run({"sc", "query", "forewarn-watch"});
        if (r.second.find("RUNNING") != std::string::npos) return std::string("running");
        if (r.second.find("STOPPED") != std::string::npos) return std::string("stopped");
        return std::string("none");
    };
    // Wine ends a session's services once no program of its own runs: one holds it open.
    child_process session({wine_exe[0], "ping", "-n", "300", "127.0.0.1"});
    const std::string exe = wine_exe[1];
    run({exe, "service", "uninstall"});  // a leftover of an earlier run
    temp_dir dir("service");
    const std::string log = dir.file("watch log.txt");  // a space, quoted in the service's command

    emulator_process emu;
    // A bad option installs nothing.
    CHECK(run({exe, "service", "install", "--cloud", "azur"}).first == 2);
    CHECK(state() == "none");
    const auto installed = run({exe, "service", "install", "--log-file", agent_path(log), "--cloud", "azure", "--endpoint",
                                emu.base_url(), "--interval", "300", "--json", "--self", "WestNO_0", "--approve", "own"});
    REQUIRE(installed.first == 0);
    CHECK(installed.second.find("installed forewarn-watch") != std::string::npos);
    CHECK(run({exe, "service", "install", "--cloud", "azure"}).first == 1);  // exists already
    if (state() != "running") CHECK(run({"sc", "start", "forewarn-watch"}).first == 0);
    REQUIRE(eventually([&] { return read_text(log).find("watching azure") != std::string::npos; }, 60s));
    post(emu, "azure/events", R"({"EventId":"S1","EventType":"Freeze","Resources":["WestNO_0"],"impact":"1s"})");
    REQUIRE(eventually([&] { return count_of(read_text(log), "\"change\":\"started\"") == 1; }));
    CHECK(approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"S1"}]})"});
    CHECK(read_text(log).find("forewarn-watch: approved S1") != std::string::npos);
    // A service stop is a clean stop.
    CHECK(run({"sc", "stop", "forewarn-watch"}).first == 0);
    CHECK(eventually([&] { return read_text(log).find("forewarn-watch: stopped by a signal") != std::string::npos; }));
    CHECK(eventually([&] { return state() == "stopped"; }));
    CHECK(run({exe, "service", "uninstall"}).first == 0);
    CHECK(state() == "none");
    CHECK(run({exe, "service", "uninstall"}).first == 1);
    // Started by hand, `service run` says it is the service manager's.
    CHECK(run({exe, "service", "run", "--cloud", "azure"}).first == 2);
    session.signal(SIGKILL);
}

TEST_CASE("watch: text from the network cannot forge a line of its output or its log", "[watch][e2e]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--approve", "own", "--interval", "300",
                         "--exit-after", "2"});  // prepare, then started once approved
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"N1\nforewarn-watch: approved FORGED\u001b[2J","EventType":"Freeze",)"
                              R"("Resources":["WestNO_0"],"notice":"10m","Description":"two\nlines"})");
    CHECK(w.wait_exit(30s) == 0);
    REQUIRE(w.out().size() == 2);  // two changes, two lines
    CHECK(w.out()[0].rfind("prepare  freeze N1\\nforewarn-watch: approved FORGED\\x1b[2J ", 0) == 0);
    CHECK(w.out()[0].find("two\\nlines") != std::string::npos);
    const std::string err = w.err();
    CHECK(err.find("\nforewarn-watch: approved FORGED") == std::string::npos);  // never at a line's start
    CHECK(err.find("approved N1\\nforewarn-watch: approved FORGED\\x1b[2J") != std::string::npos);
    CHECK(err.find('\x1b') == std::string::npos);
}

TEST_CASE("watch --dry-run: decides as configured, sends nothing, says what it would have approved", "[watch][e2e]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_0", "--approve", "own", "--interval", "300",
                         "--dry-run"});
    REQUIRE(w.wait_for_stderr("dry run: nothing is sent", agent_start()));
    post(emu, "azure/events", R"({"EventId":"D1","EventType":"Freeze","Resources":["WestNO_0"],"notice":"10m"})");
    REQUIRE(w.wait_for_stderr("dry run: would approve D1 (nothing sent)", 20s));
    wait_for_polls(emu, 3);
    CHECK(approval_bodies(emu).empty());
    bool said = false;
    for (const auto& line : w.out())
        if (line.find("\"would_approve\"") != std::string::npos) {
            CHECK(line == R"({"dry_run":true,"cloud":"azure","would_approve":["D1"]})");
            said = true;
        }
    CHECK(said);
    w.signal(SIGTERM);
    CHECK(w.wait_exit(20s) == 0);
}

TEST_CASE("watch --metrics-listen: /metrics in Prometheus text, /healthz follows the polls", "[watch][e2e][metrics][agent]") {
    emulator_process emu;
    auto port_of = [](child_process& w) {
        REQUIRE(w.wait_for_stderr("/metrics and /healthz", agent_start()));
        const std::string err = w.err();
        const auto at = err.find("metrics on http://127.0.0.1:");
        REQUIRE(at != std::string::npos);
        return std::stoi(err.substr(at + 28));
    };
    auto w = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--interval", "300", "--metrics-listen", "127.0.0.1:0"});
    const int port = port_of(w);
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    wait_for_polls(emu, 2);
    auto m = c.Get("/metrics");
    REQUIRE(m);
    CHECK(m->status == 200);
    CHECK(m->get_header_value("Content-Type").find("version=0.0.4") != std::string::npos);
    CHECK(m->body.find("# TYPE forewarn_polls_total counter") != std::string::npos);
    CHECK(m->body.find("forewarn_polls_total{cloud=\"azure\",result=\"ok\"} ") != std::string::npos);
    CHECK(m->body.find("forewarn_polls_total{cloud=\"azure\",result=\"ok\"} 0\n") == std::string::npos);
    CHECK(m->body.find("forewarn_last_successful_poll_timestamp_seconds{cloud=\"azure\"} 0\n") == std::string::npos);
    auto h = c.Get("/healthz");
    REQUIRE(h);
    CHECK(h->status == 200);
    CHECK(c.Get("/nothing-here")->status == 404);
    CHECK(c.Post("/metrics", "", "text/plain")->status == 405);
    w.stop();
    CHECK(w.wait_exit(20s) == 0);

    // Nothing answers: /healthz fails once --health-max-age passes without a good poll.
    strings down_args = agent_command();
    down_args.insert(down_args.end(), {"--cloud", "azure", "--endpoint", "http://127.0.0.1:1", "--self", "x",
                                       "--metrics-listen", "127.0.0.1:0", "--health-max-age", "1"});
    child_process down(down_args);
    httplib::Client d("127.0.0.1", port_of(down));
    d.set_read_timeout(10, 0);
    CHECK(eventually([&] {
        auto r = d.Get("/healthz");
        return r && r->status == 503;
    }));
    CHECK(eventually([&] {  // a poll fails once its retries are spent
        auto r = d.Get("/metrics");
        return r && r->body.find("forewarn_polls_total{cloud=\"azure\",result=\"error\"} 0\n") == std::string::npos &&
               r->body.find("forewarn_errors_total{cloud=\"azure\",kind=\"transport\"}") != std::string::npos;
    }));
    down.stop();
    CHECK(down.wait_exit(20s) == 0);
}

TEST_CASE("watch /readyz and --ready-file: not ready from this VM's event until it is over, another VM's changes nothing",
          "[watch][e2e][metrics][readiness][agent]") {
    temp_dir dir("readyz");
    emulator_process emu;
    const std::string file = dir.file("ready");
    auto w = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--interval", "200", "--metrics-listen", "127.0.0.1:0",
                         "--ready-file", agent_path(file)});
    REQUIRE(w.wait_for_stderr("/metrics and /healthz", agent_start()));
    const std::string err = w.err();
    httplib::Client c("127.0.0.1", std::stoi(err.substr(err.find("metrics on http://127.0.0.1:") + 28)));
    c.set_read_timeout(10, 0);
    auto readyz = [&] {
        auto r = c.Get("/readyz");
        REQUIRE(r);
        return std::make_pair(r->status, r->body);
    };
    auto gauge = [&] {
        auto r = c.Get("/metrics");
        REQUIRE(r);
        return r->body.find("forewarn_ready{cloud=\"azure\"} 1\n") != std::string::npos ? 1
               : r->body.find("forewarn_ready{cloud=\"azure\"} 0\n") != std::string::npos ? 0
                                                                                          : -1;
    };
    REQUIRE(eventually([&] { return std::filesystem::exists(file); }));
    CHECK(readyz() == std::make_pair(200, std::string("ready: no maintenance near\n")));
    CHECK(gauge() == 1);
    // Another VM's event: still ready.
    post(emu, "azure/events", R"({"EventId":"OTHER","EventType":"Reboot","Resources":["WestNO_9"],"notice":"10m"})");
    wait_for_polls(emu, 3);
    CHECK(readyz().first == 200);
    CHECK(std::filesystem::exists(file));
    // This VM's: not ready from the first poll that sees it (the flip's latency is printed).
    const auto posted = std::chrono::steady_clock::now();
    post(emu, "azure/events", R"({"EventId":"MINE","EventType":"Freeze","Resources":["WestNO_0"],"notice":"10m"})");
    REQUIRE(eventually([&] { return readyz().first == 503; }));
    const auto flipped = std::chrono::steady_clock::now();
    CHECK(readyz().second == "not ready: event MINE (freeze) is scheduled\n");
    CHECK(eventually([&] { return !std::filesystem::exists(file); }));
    const auto removed = std::chrono::steady_clock::now();
    CHECK(gauge() == 0);
    std::printf("readyz: 503 %lld ms after the event was posted (poll interval 200 ms), the ready file gone %lld ms after\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(flipped - posted).count()),
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(removed - posted).count()));
    // Started: still not ready; over: ready again.
    post(emu, "azure/events/MINE/start", "{}");
    REQUIRE(eventually([&] { return readyz().second == "not ready: event MINE (freeze) is under way\n"; }));
    post(emu, "azure/events/MINE/complete", "{}");
    REQUIRE(eventually([&] { return readyz().first == 200; }));
    CHECK(eventually([&] { return std::filesystem::exists(file); }));
    CHECK(gauge() == 1);
    w.stop();
    CHECK(w.wait_exit(20s) == 0);
    CHECK(std::filesystem::exists(file));  // a stop is not maintenance: the file stays

    // --unready-before: ready while NotBefore is further away, not ready once it is near.
    auto u = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--interval", "200", "--ready-file", agent_path(file),
                         "--unready-before", "120"});
    REQUIRE(u.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"FAR","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m"})");
    REQUIRE(u.wait_for_lines(1, 20s));  // its prepare
    wait_for_polls(emu, 3);
    CHECK(std::filesystem::exists(file));
    post(emu, "azure/events", R"({"EventId":"NEAR","EventType":"Reboot","Resources":["WestNO_0"],"notice":"60s"})");
    CHECK(eventually([&] { return !std::filesystem::exists(file); }));
    CHECK(u.wait_for_stderr("ready file " + agent_path(file) + " removed: event NEAR (reboot) is scheduled to start within 120 s", 10s));
    u.stop();
    CHECK(u.wait_exit(20s) == 0);
}

TEST_CASE("watch --lb-drain: the approval waits until /readyz has said not ready that long, and a notice too short "
          "for it is not approved",
          "[watch][e2e][readiness][approval][agent]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--interval", "200", "--approve", "own",
                         "--metrics-listen", "127.0.0.1:0", "--lb-drain", "2"});
    REQUIRE(w.wait_for_stderr("/metrics and /healthz", agent_start()));
    const std::string err = w.err();
    httplib::Client c("127.0.0.1", std::stoi(err.substr(err.find("metrics on http://127.0.0.1:") + 28)));
    c.set_read_timeout(10, 0);
    const auto posted = std::chrono::steady_clock::now();
    post(emu, "azure/events", R"({"EventId":"HELD","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m"})");
    // No prepare hook: ready at once; the approval waits for the hold alone.
    REQUIRE(eventually([&] {
        auto r = c.Get("/readyz");
        return r && r->status == 503;
    }));
    REQUIRE(eventually([&] { return !approval_bodies(emu).empty(); }));
    const auto approved = std::chrono::steady_clock::now();
    CHECK(approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"HELD"}]})"});
    // Not ready from a poll after the post, approved 2 s after that poll: never sooner after the post.
    CHECK(approved - posted >= 2s);
    std::printf("--lb-drain 2: approved %lld ms after the event was posted (poll interval 200 ms)\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(approved - posted).count()));
    post(emu, "azure/events/HELD/complete", "{}");
    w.stop();
    CHECK(w.wait_exit(20s) == 0);

    // 30 s of notice, --hook-deadline 15 and --lb-drain 20: the hold cannot end in time.
    auto shortn = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--interval", "200", "--approve", "own",
                              "--lb-drain", "20", "--hook-deadline", "15"});
    REQUIRE(shortn.wait_for_stderr("watching azure", agent_start()));
    const auto before = approval_bodies(emu).size();
    post(emu, "azure/events", R"({"EventId":"SHORT","EventType":"Reboot","Resources":["WestNO_0"],"notice":"30s"})");
    REQUIRE(shortn.wait_for_stderr("event SHORT: announced too close to NotBefore for --lb-drain 20 s", 20s));
    wait_for_polls(emu, 5);
    CHECK(approval_bodies(emu).size() == before);  // not approved: it starts at NotBefore
    shortn.stop();
    CHECK(shortn.wait_exit(20s) == 0);
}

TEST_CASE("watch: the pause this VM lived through while its Freeze was Started - in the recover line and /metrics, "
          "beside the announced duration",
          "[watch][e2e][metrics][pause][agent]") {
    emulator_process emu;
    auto w = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--interval", "200", "--json", "--metrics-listen", "127.0.0.1:0"});
    REQUIRE(w.wait_for_stderr("/metrics and /healthz", agent_start()));
    const std::string err = w.err();
    httplib::Client c("127.0.0.1", std::stoi(err.substr(err.find("metrics on http://127.0.0.1:") + 28)));
    c.set_read_timeout(10, 0);
    // One Freeze the agent lives through unpaused, then one during which it is stopped for 3 s
    // (SIGSTOP: its monotonic clock runs on, so the gap between its looks shows the pause).
    double paused = 0;
    for (const bool stop : {false, true}) {
        const std::string id = stop ? "PAUSED" : "QUIET";
        const std::size_t before = w.out().size();
        post(emu, "azure/events",
             R"({"EventId":")" + id + R"(","EventType":"Freeze","Resources":["WestNO_0"],"DurationInSeconds":5,"notice":"10m","impact":"10m"})");
        REQUIRE(w.wait_for_lines(before + 1, 20s));  // prepare
        post(emu, "azure/events/" + id + "/start", "{}");
        REQUIRE(w.wait_for_lines(before + 2, 20s));  // started
        std::this_thread::sleep_for(500ms);           // looked at a few times, unpaused
        if (stop) {
            const auto t0 = std::chrono::steady_clock::now();
            w.signal(SIGSTOP);
            std::this_thread::sleep_for(3s);  // the pause under test
            w.signal(SIGCONT);
            paused = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        post(emu, "azure/events/" + id + "/complete", "{}");
        REQUIRE(w.wait_for_lines(before + 3, 20s));  // recover
        const auto lines = w.out();
        const auto rec = parse_line(lines[before + 2]);
        CHECK(rec.change == "recover");
        CHECK(rec.id == id);
        REQUIRE(rec.observed_pause_s);
        CHECK(rec.observed_pause_seen_by == std::optional<std::string>("monotonic"));
        std::printf("pause: %s observed %.3f s (stopped for %.3f s)\n", id.c_str(), *rec.observed_pause_s, stop ? paused : 0.0);
        if (stop) {
            CHECK(*rec.observed_pause_s >= paused - 0.2);  // within a look (100 ms) and scheduling
            CHECK(*rec.observed_pause_s <= paused + 0.5);
        } else {
            CHECK(*rec.observed_pause_s < 0.5);
        }
    }
    auto r = c.Get("/metrics");
    REQUIRE(r);
    const std::string m = r->body;
    INFO(m);
    const std::string t = "{cloud=\"azure\",type=\"freeze\"";
    CHECK(m.find("forewarn_event_pause_observed_seconds_count" + t + "} 2\n") != std::string::npos);
    CHECK(m.find("forewarn_event_pause_observed_seconds_bucket" + t + ",le=\"0.5\"} 1\n") != std::string::npos);
    CHECK(m.find("forewarn_event_pause_observed_seconds_bucket" + t + ",le=\"5\"} 2\n") != std::string::npos);
    CHECK(m.find("forewarn_event_duration_announced_seconds_count" + t + "} 2\n") != std::string::npos);
    CHECK(m.find("forewarn_event_duration_announced_seconds_sum" + t + "} 10\n") != std::string::npos);
    w.stop();
    CHECK(w.wait_exit(20s) == 0);
}

TEST_CASE("watch --approve-freeze-under, --approve-user-events, --only and --ignore", "[watch][e2e][approval][agent]") {
    temp_dir dir("rules");
    emulator_process emu({"--rate-limit", "0"});
    // The prepare hook never finishes in time: only the at-once rules approve.
    auto w = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_0", "--approve", "own", "--interval", "200",
                         "--on-prepare", hook_for("sleep 60", "ping -n 61 127.0.0.1 >nul"), "--approve-freeze-under", "9",
                         "--approve-user-events",
                         "--ignore", "redeploy"});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events",
         R"({"EventId":"SHORT","EventType":"Freeze","Resources":["WestNO_0"],"DurationInSeconds":5,"notice":"10m"})");
    post(emu, "azure/events",
         R"({"EventId":"LONG","EventType":"Freeze","Resources":["WestNO_0"],"DurationInSeconds":30,"notice":"10m"})");
    post(emu, "azure/events",
         R"({"EventId":"ADMIN","EventType":"Reboot","Resources":["WestNO_0"],"EventSource":"User","notice":"10m"})");
    post(emu, "azure/events", R"({"EventId":"MOVE","EventType":"Redeploy","Resources":["WestNO_0"],"notice":"10m"})");
    // The ids the service accepted approvals for (one request may carry several).
    auto approved = [&] {
        std::set<std::string> ids;
        for (const auto& body : approval_bodies(emu, 200))
            for (auto at = body.find("\"EventId\":\""); at != std::string::npos; at = body.find("\"EventId\":\"", at + 1))
                ids.insert(body.substr(at + 11, body.find('"', at + 11) - at - 11));
        return ids;
    };
    REQUIRE(eventually([&] { return approved().size() >= 2; }));
    wait_for_polls(emu, 4);
    CHECK(approved() == std::set<std::string>{"ADMIN", "SHORT"});
    // The ignored type is neither printed nor hooked nor approved.
    std::set<std::string> printed;
    for (const auto& l : w.out()) printed.insert(parse_line(l).id);
    CHECK(printed.count("MOVE") == 0);
    CHECK(printed.count("LONG") == 1);
    CHECK(w.err().find("MOVE") == std::string::npos);
    w.stop();
    CHECK(w.wait_exit(20s) == 0);

    // --only: the other types are left alone.
    auto o = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_0", "--interval", "200", "--only", "redeploy,reboot"});
    REQUIRE(o.wait_for_stderr("watching azure", agent_start()));
    wait_for_polls(emu, 3);
    std::set<std::string> seen;
    for (const auto& l : o.out()) seen.insert(parse_line(l).id);
    CHECK(seen.count("MOVE") == 1);
    CHECK(seen.count("LONG") == 0);
    o.stop();
    CHECK(o.wait_exit(20s) == 0);
}

TEST_CASE("watch --approve-window: no early approval outside the window, at once inside it, shown in --dry-run",
          "[watch][e2e][approval][agent]") {
    emulator_process emu({"--rate-limit", "0"});
    const long long minute =
        std::chrono::duration_cast<std::chrono::minutes>(std::chrono::system_clock::now().time_since_epoch()).count() % 1440;
    auto hhmm = [](long long m) {
        m = (m % 1440 + 1440) % 1440;
        char b[16];
        std::snprintf(b, sizeof b, "%02lld:%02lld", m / 60, m % 60);
        return std::string(b);
    };
    const std::string closed = hhmm(minute + 120) + "-" + hhmm(minute + 180), open = hhmm(minute - 60) + "-" + hhmm(minute + 60);
    const strings flags{"--cloud", "azure", "--json", "--self", "WestNO_0", "--approve", "own", "--interval", "200"};
    auto with = [&](strings extra) {
        strings f = flags;
        f.insert(f.end(), extra.begin(), extra.end());
        return f;
    };
    {
        auto shut = watch(emu, with({"--approve-window", closed}));
        REQUIRE(shut.wait_for_stderr("window " + closed + " UTC", agent_start()));
        post(emu, "azure/events", R"({"EventId":"WIN","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m"})");
        REQUIRE(shut.wait_for_lines(1, 20s));
        wait_for_polls(emu, 5);
        CHECK(approval_bodies(emu).empty());  // ready (no hook), allowed, but outside the window
        shut.stop();
        CHECK(shut.wait_exit(20s) == 0);
    }
    {
        auto dry = watch(emu, with({"--approve-window", open, "--dry-run"}));
        REQUIRE(dry.wait_for_lines(2, 20s));  // the prepare, then what it would have approved
        CHECK(dry.out().at(1).find(R"("approve_window":")" + open + R"( UTC","would_approve":["WIN"])") != std::string::npos);
        dry.stop();
        CHECK(dry.wait_exit(20s) == 0);
        CHECK(approval_bodies(emu).empty());
    }
    auto inside = watch(emu, with({"--approve-window", open}));
    CHECK(eventually([&] { return approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"WIN"}]})"}; }));
    inside.stop();
    CHECK(inside.wait_exit(20s) == 0);
}

namespace {

/// A loopback HTTP server for webhooks: records each POST; `answer` decides what it says.
struct hook_server {
    struct received {
        std::string path, body, content_type, authorization;
        std::chrono::steady_clock::time_point at;
    };
    httplib::Server server;
    std::thread thread;
    int port = 0;
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<received> got;
    bool closing = false;
    using answer_fn = std::function<void(const std::string& path, std::size_t nth, httplib::Response&)>;
    const answer_fn answer;  // set before the server's thread starts, never after

    explicit hook_server(answer_fn a = {}) : answer(std::move(a)) {
        server.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
            std::size_t nth;
            {
                std::lock_guard<std::mutex> lock(mutex);
                got.push_back({req.path, req.body, req.get_header_value("Content-Type"), req.get_header_value("Authorization"),
                               std::chrono::steady_clock::now()});
                nth = got.size();
            }
            cv.notify_all();
            res.status = 200;
            if (req.path == "/hang") {  // until the test ends
                std::unique_lock<std::mutex> lock(mutex);
                cv.wait(lock, [this] { return closing; });
                return;
            }
            if (req.path == "/big") res.set_content(std::string(10 << 20, 'x'), "text/plain");  // 10 MiB
            if (answer) answer(req.path, nth, res);
        });
        port = server.bind_to_any_port("127.0.0.1");
        thread = std::thread([this] { server.listen_after_bind(); });
    }
    ~hook_server() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            closing = true;
        }
        cv.notify_all();
        server.stop();
        thread.join();
    }
    std::vector<received> requests() {
        std::lock_guard<std::mutex> lock(mutex);
        return got;
    }
    std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port) + path; }
};

}  // namespace

TEST_CASE("watch --webhook: each change POSTed as its JSON line, retried after 5xx, with the Authorization from the environment",
          "[watch][e2e][webhook][agent]") {
    emulator_process emu;
    hook_server hooks([](const std::string&, std::size_t nth, httplib::Response& res) { res.status = nth <= 2 ? 503 : 200; });
    ::setenv("FOREWARN_WEBHOOK_AUTHORIZATION", "Bearer t0k3n", 1);
    auto w = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_0", "--interval", "200", "--webhook",
                         hooks.url("/hook"), "--metrics-listen", "127.0.0.1:0"});
    ::unsetenv("FOREWARN_WEBHOOK_AUTHORIZATION");
    REQUIRE(w.wait_for_stderr("/metrics and /healthz", agent_start()));
    const auto posted = std::chrono::steady_clock::now();
    post(emu, "azure/events", R"({"EventId":"W1","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m"})");
    REQUIRE(w.wait_for_lines(1, 20s));
    REQUIRE(eventually([&] { return hooks.requests().size() >= 3; }));
    const auto got = hooks.requests();
    REQUIRE(got.size() == 3);  // two 503s, then delivered: not sent again
    for (const auto& r : got) {
        CHECK(r.path == "/hook");
        std::string line = w.out().at(0);
        if (!line.empty() && line.back() == '\r') line.pop_back();  // Windows' stdout ends lines with \r\n
        CHECK(r.body == line);  // the JSON line, byte for byte
        CHECK(r.content_type == "application/json");
        CHECK(r.authorization == "Bearer t0k3n");
    }
    std::printf("webhook: first request %lld ms after the event was posted, delivered after 2 retries %lld ms after\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(got[0].at - posted).count()),
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(got[2].at - posted).count()));
    const std::string err = w.err();
    CHECK(err.find("webhook: HTTP 503, again in 1000 ms") != std::string::npos);
    httplib::Client c("127.0.0.1", std::stoi(err.substr(err.find("metrics on http://127.0.0.1:") + 28)));
    auto m = c.Get("/metrics");
    REQUIRE(m);
    CHECK(m->body.find("forewarn_webhook_deliveries_total{cloud=\"azure\",result=\"ok\"} 1\n") != std::string::npos);
    CHECK(m->body.find("forewarn_webhook_retries_total{cloud=\"azure\"} 2\n") != std::string::npos);
    w.stop();
    CHECK(w.wait_exit(20s) == 0);
}

TEST_CASE("watch --webhook-template: the change's fields escaped as JSON, and a hanging server delays nothing",
          "[watch][e2e][webhook][agent]") {
    temp_dir dir("webhook");
    emulator_process emu;
    hook_server hooks;
    // A template that would not give JSON, or names what a change does not have: exit 2 at start.
    for (const std::string bad : {R"({"text": "{{nope}}"})", R"({"text": {{id}}})", R"({"text": "{{id")"}) {
        const std::string file = dir.file("bad.json");
        std::ofstream(file) << bad;
        auto b = watch(emu, {"--webhook", hooks.url("/x"), "--webhook-template", agent_path(file)});
        CHECK(b.wait_exit(10s) == 2);
        CHECK(b.err().find("--webhook-template") != std::string::npos);
    }
    const std::string tmpl = dir.file("slack.json");
    std::ofstream(tmpl) << R"({"text": "{{change}}: {{id}} ({{type}}) on {{resources}} at {{not_before}}", "raw": {{json}}})";
    auto w = watch(emu, {"--cloud", "azure", "--json", "--self", "WestNO_0", "--interval", "200", "--webhook",
                         hooks.url("/slack"), "--webhook-template", agent_path(tmpl)});
    REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"Q\"uote\\d","EventType":"Freeze","Resources":["WestNO_0","vm \"2\""],"notice":"10m"})");
    REQUIRE(eventually([&] { return !hooks.requests().empty(); }));
    const auto body = hooks.requests().at(0).body;
    INFO(body);
    auto doc = forewarn::detail::parse_json(body);
    REQUIRE(doc.has_value());
    const auto line = parse_line(w.out().at(0));
    CHECK(std::string((*doc)["text"].GetString()) ==
          "prepare: Q\"uote\\d (freeze) on WestNO_0, vm \"2\" at " + line.not_before.value_or("?"));
    CHECK((*doc)["raw"].IsObject());
    CHECK(std::string((*doc)["raw"]["id"].GetString()) == "Q\"uote\\d");
    w.stop();
    CHECK(w.wait_exit(20s) == 0);

    // A 10 MiB answer: read no further than 64 KiB, not sent again, counted as failed.
    auto big = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--interval", "200", "--webhook", hooks.url("/big")});
    REQUIRE(big.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"B1","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m"})");
    CHECK(big.wait_for_stderr("not retried", 20s));
    CHECK(big.err().find("body_too_large") != std::string::npos);
    big.stop();
    CHECK(big.wait_exit(20s) == 0);

    // A server that never answers: the approval goes out as if there were no webhook, and a stop
    // is prompt (the request in flight is cancelled).
    auto h = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--approve", "own", "--interval", "200", "--webhook",
                         hooks.url("/hang")});
    REQUIRE(h.wait_for_stderr("watching azure", agent_start()));
    const auto before = approval_bodies(emu).size();
    post(emu, "azure/events", R"({"EventId":"H1","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m"})");
    REQUIRE(eventually([&] {  // the webhook is hanging
        const auto got = hooks.requests();
        return std::any_of(got.begin(), got.end(), [](const hook_server::received& r) { return r.path == "/hang"; });
    }));
    CHECK(eventually([&] { return approval_bodies(emu).size() > before; }, 10s));
    const auto stopping = std::chrono::steady_clock::now();
    h.stop();
    CHECK(h.wait_exit(20s) == 0);
    CHECK(std::chrono::steady_clock::now() - stopping < 5s);
}

#if defined(FOREWARN_PROMTOOL)
TEST_CASE("watch /metrics passes promtool's lint, and serves every series examples/prometheus names",
          "[watch][e2e][metrics][etcd]") {
    // Every feature on, and one event through it all, so that every series exists.
    temp_dir dir("promtool");
    forewarn_test::etcd_cluster etcd(1);
    emulator_process emu;
    hook_server hooks;
    auto w = watch(emu, {"--cloud", "azure", "--self", "WestNO_0", "--approve", "own", "--interval", "200",
                         "--metrics-listen", "127.0.0.1:0", "--etcd", etcd.endpoints(), "--fleet-group", "db",
                         "--fleet-ttl", "10", "--on-prepare", "true", "--webhook", hooks.url("/hook")});
    REQUIRE(w.wait_for_stderr("/metrics and /healthz", agent_start()));
    const std::string err = w.err();
    httplib::Client c("127.0.0.1", std::stoi(err.substr(err.find("metrics on http://127.0.0.1:") + 28)));
    c.set_read_timeout(10, 0);
    post(emu, "azure/events", R"({"EventId":"P1","EventType":"Reboot","Resources":["WestNO_0"],"notice":"10m","impact":"300s"})");
    std::string body;
    REQUIRE(eventually([&] {
        auto r = c.Get("/metrics");
        if (!r) return false;
        body = r->body;
        return body.find("forewarn_webhook_deliveries_total{") != std::string::npos &&
               body.find("forewarn_hook_runs_total{") != std::string::npos &&
               body.find("state=\"holding\"} 1\n") != std::string::npos;
    }));
    INFO(body);
    // promtool's lint: exit 0 and nothing to say.
    const std::string file = dir.file("metrics.txt"), said = dir.file("promtool.txt");
    std::ofstream(file) << body;
    const int rc = std::system((std::string(FOREWARN_PROMTOOL) + " check metrics < '" + file + "' > '" + said + "' 2>&1").c_str());
    INFO("promtool: " << read_text(said));
    CHECK(rc == 0);
    CHECK(read_text(said).empty());
    // The alert rules and the dashboard name only series the agent serves.
    for (const char* name : {"forewarn-rules.yml", "grafana-dashboard.json"}) {
        const std::string text = read_text(std::string(FOREWARN_SOURCE_DIR) + "/examples/prometheus/" + name);
        REQUIRE_FALSE(text.empty());
        std::size_t named = 0;
        for (auto at = text.find("forewarn_"); at != std::string::npos; at = text.find("forewarn_", at + 1)) {
            auto end = at;
            while (end < text.size() && (std::islower(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
            const std::string series = text.substr(at, end - at);
            INFO(name << " names " << series);
            // A sample, or at least the declaration (a counter by kind has none before its first; a
            // histogram's _bucket, _sum and _count series are declared by its name).
            std::string histogram = series;
            for (const std::string suffix : {"_bucket", "_sum", "_count"})
                if (histogram.size() > suffix.size() && histogram.compare(histogram.size() - suffix.size(), suffix.size(), suffix) == 0)
                    histogram.resize(histogram.size() - suffix.size());
            CHECK((body.find("\n" + series + "{") != std::string::npos || body.find("# TYPE " + series + " ") != std::string::npos ||
                   body.find("# TYPE " + histogram + " histogram\n") != std::string::npos));
            ++named;
        }
        CHECK(named >= 6);
    }
    w.stop();
    CHECK(w.wait_exit(20s) == 0);
}
#endif

TEST_CASE("watch: every option from a FOREWARN_* variable, the command line winning - --help names them all", "[watch]") {
    struct env_var {
        std::string name;
        env_var(std::string n, const char* v) : name(std::move(n)) { ::setenv(name.c_str(), v, 1); }
        ~env_var() { ::unsetenv(name.c_str()); }
    };
    {
        env_var bad("FOREWARN_APPROVE", "sometimes");
        child_process p({FOREWARN_WATCH_PATH});
        CHECK(p.wait_exit(10s) == 2);
        CHECK(p.err().find("FOREWARN_APPROVE") != std::string::npos);
        child_process q({FOREWARN_WATCH_PATH, "--approve", "sometimes-too"});
        CHECK(q.wait_exit(10s) == 2);
    }
    {
        emulator_process emu;
        env_var cloud("FOREWARN_CLOUD", "azure");
        env_var json("FOREWARN_JSON", "1");
        env_var self("FOREWARN_SELF", "WestNO_0");
        env_var approve("FOREWARN_APPROVE", "never");  // the flag below wins
        env_var exit_after("FOREWARN_EXIT_AFTER", "1");
        auto w = watch(emu, {"--approve", "own", "--interval", "300"});
        REQUIRE(w.wait_for_stderr("watching azure", agent_start()));
        CHECK(w.err().find("approve: own") != std::string::npos);
        post(emu, "azure/events", R"({"EventId":"V1","EventType":"Freeze","Resources":["WestNO_0"],"notice":"10m"})");
        CHECK(w.wait_exit(30s) == 0);
        REQUIRE(w.out().size() == 1);
        CHECK(parse_line(w.out()[0]).id == "V1");
    }
    child_process help({FOREWARN_WATCH_PATH, "--help"});
    REQUIRE(help.wait_exit(10s) == 0);
    std::string text;
    for (const auto& l : help.out()) text += l + "\n";
    for (const char* name : {"cloud", "endpoint", "json", "self", "approve", "dry-run", "grace", "interval", "exit-after",
                             "state-file", "on-prepare", "on-started", "on-recover", "hook-deadline", "hook-timeout",
                             "metrics-listen", "health-max-age"}) {
        INFO(name);
        CHECK(text.find(std::string("  --") + name) != std::string::npos);
    }
    CHECK(text.find("FOREWARN_ON_PREPARE") != std::string::npos);
}

// The chaos run (hidden from ctest; the soak stage of .ci/run runs it): forewarn-watch killed with
// SIGKILL at random moments (FOREWARN_CHAOS_KILLS times, 200 by default, after 10 to 250 ms of
// life each) over a scenario of twelve events announced, approved after their prepare hook,
// started and over; then one last run to the end. The seed is printed; FOREWARN_CHAOS_SEED
// replays a run. Strict: every good event approved, never one whose hook failed, never two
// copies of a hook for one event at once, a hook run again only after a kill, no change printed
// twice by one life, every recover delivered and its hook run.
TEST_CASE("watch chaos: SIGKILLs over prepare, approval, start and recover", "[.][soak][chaos]") {
    const char* seed_text = std::getenv("FOREWARN_CHAOS_SEED");
    const char* kills_text = std::getenv("FOREWARN_CHAOS_KILLS");
    const unsigned seed = seed_text ? static_cast<unsigned>(std::strtoul(seed_text, nullptr, 10)) : std::random_device{}();
    const int kills = kills_text ? std::atoi(kills_text) : 200;
    REQUIRE(kills >= 0);
    std::printf("chaos: seed %u, %d kills (replay: FOREWARN_CHAOS_SEED=%u FOREWARN_CHAOS_KILLS=%d)\n", seed, kills, seed, kills);
    std::fflush(stdout);
    INFO("FOREWARN_CHAOS_SEED=" << seed << " FOREWARN_CHAOS_KILLS=" << kills);

    temp_dir dir("chaos");
    const std::string scenario = dir.file("scenario.json");
    {
        std::ofstream f(scenario);
        f << R"({"name": "chaos", "speed": 10, "rate_limit": 0, "vms": [{"name": "WestNO_0"}], "steps": [)";
        for (int i = 0; i < 12; ++i)
            f << (i ? "," : "") << R"({"at": ")" << 10 * i << R"(s", "azure_event": {"EventId": "C)" << i
              << R"(", "EventType": ")" << (i % 2 ? "Reboot" : "Freeze")
              << R"(", "Resources": ["WestNO_0"], "notice": "2m", "impact": "20s"}})";
        f << "]}";
    }
    emulator_process emu({"--scenario", scenario, "--quiet"});
    const std::string log = dir.file("hooks.log");
    // Each line of the hook log carries the wall clock in ns and the life (the agent's run) that
    // ran the hook, written into that life's own hook command: a killed life's hook may still
    // write in the moment between the SIGKILL and its keeper ending the group, after the next
    // life has started, and is still told apart. A second copy of a prepare hook running for the
    // same event at once cannot take the event's lock: "overlap".
    const std::string now = "$(date +%s%N)";
    auto flags_of = [&](std::size_t life) {
        const std::string stamp = now + " " + std::to_string(life);
        return strings{
            "--cloud", "azure", "--json", "--self", "WestNO_0", "--approve", "own", "--interval", "200",
            "--state-file", dir.file("state.json"),
            // C5 and C7 are never ready: their hook fails every time.
            "--on-prepare", "exec 9>>'" + dir.file("lock") + "-$FOREWARN_EVENT_ID'; flock -n 9 || echo \"overlap $FOREWARN_EVENT_ID " +
                                stamp + "\" >> '" + log + "'; echo \"start $FOREWARN_EVENT_ID " + stamp + "\" >> '" + log +
                                "'; sleep 0.1; case \"$FOREWARN_EVENT_ID\" in C5|C7) exit 1;; esac; echo \"ready $FOREWARN_EVENT_ID " +
                                stamp + "\" >> '" + log + "'",
            "--on-recover", "echo \"recover $FOREWARN_EVENT_ID " + stamp + "\" >> '" + log + "'"};
    };
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> uptime_ms(10, 250);
    std::vector<strings> lives;       // each life's stdout
    std::size_t approvals_logged = 0;  // "approved" lines in the killed lives' logs
    for (int k = 0; k < kills; ++k) {
        auto w = watch(emu, flags_of(lives.size()));
        std::this_thread::sleep_for(std::chrono::milliseconds(uptime_ms(rng)));
        w.signal(SIGKILL);
        w.wait_exit(20s);
        lives.push_back(w.out());
        approvals_logged += count_of(w.err(), "forewarn-watch: approved ");
    }
    // The last run, left alone until every event is over.
    auto recovered = [&](const std::vector<strings>& ls) {
        std::set<std::string> ids;
        for (const auto& life : ls)
            for (const auto& l : life)
                if (l.find("\"change\":\"recover\"") != std::string::npos) ids.insert(parse_line(l).id);
        return ids;
    };
    {
        auto w = watch(emu, flags_of(lives.size()));
        REQUIRE(w.wait_for_stderr("watching azure", agent_start()));  // SIGTERM only once it waits for it
        const auto give_up = std::chrono::steady_clock::now() + 120s;
        while (std::chrono::steady_clock::now() < give_up) {
            auto all = lives;
            all.push_back(w.out());
            if (recovered(all).size() == 12) break;
            std::this_thread::sleep_for(200ms);
        }
        w.signal(SIGTERM);
        CHECK(w.wait_exit(30s) == 0);
        lives.push_back(w.out());
    }
    const std::string hook_log = read_text(log);
    INFO("hook log:\n" << hook_log);

    // The hook log, per event: the life that wrote each kind of line, in the order written.
    std::map<std::string, std::map<std::string, std::vector<std::size_t>>> by;  // id -> what -> lives
    for (const auto& line : lines_of(log)) {
        std::istringstream in(line);
        std::string what, id;
        long long t = 0;
        std::size_t life = 0;
        REQUIRE(static_cast<bool>(in >> what >> id >> t >> life));
        REQUIRE(life < lives.size());
        by[id][what].push_back(life);
    }
    const std::set<std::string> failing{"C5", "C7"};
    std::size_t reruns = 0;
    for (int i = 0; i < 12; ++i) {
        const std::string id = "C" + std::to_string(i);
        INFO(id);
        auto& ev = by[id];
        // Never two copies of a prepare hook for one event at once: the killed agent's hook died
        // with it before the restarted agent ran it again.
        CHECK(ev["overlap"].empty());
        // Every event's prepare hook ran; a good one to its end; a hook ran again only in a later
        // life, after a kill (at least once across crashes, once per life).
        REQUIRE_FALSE(ev["start"].empty());
        if (!failing.count(id)) CHECK_FALSE(ev["ready"].empty());
        for (const char* what : {"start", "recover"}) {
            const auto& runs = ev[what];
            for (std::size_t j = 1; j < runs.size(); ++j) {
                INFO(what << " run " << j + 1 << ": lives " << runs[j - 1] << " and " << runs[j]);
                CHECK(runs[j - 1] < runs[j]);
            }
            reruns += runs.empty() ? 0 : runs.size() - 1;
        }
        CHECK(ev["recover"].size() >= 1);
    }
    // Every change printed once by each life (a later life repeats one only after a kill).
    for (const auto& life : lives) {
        std::set<std::string> seen;
        for (const auto& l : life) {
            INFO(l);
            CHECK(seen.insert(l).second);
        }
    }
    // Every event's recover was delivered.
    CHECK(recovered(lives).size() == 12);
    // Approvals: every good event approved (accepted by the service), none of the failing two,
    // and each approved event's hook had written "ready" before the approval was sent.
    std::map<std::string, int> approved;
    for (const auto& body : approval_bodies(emu, 200)) {
        const auto pos = body.find("\"EventId\":\"");
        REQUIRE(pos != std::string::npos);
        ++approved[body.substr(pos + 11, body.find('"', pos + 11) - pos - 11)];
    }
    for (const auto& body : approval_bodies(emu)) {  // every approval sent, accepted or not
        INFO(body);
        for (const auto& id : failing) CHECK(body.find("\"" + id + "\"") == std::string::npos);
    }
    for (int i = 0; i < 12; ++i) {
        const std::string id = "C" + std::to_string(i);
        INFO(id);
        if (failing.count(id)) CHECK(approved.count(id) == 0);
        else CHECK(approved[id] == 1);  // approved, and once: the service took it the first time
    }
    std::size_t attempts = approval_bodies(emu).size();
    std::printf("chaos: %d kills, %zu lives, %zu hook lines, %zu reruns after kills, %zu approvals accepted of %zu sent "
                "(%zu logged by killed lives), seed %u\n",
                kills, lives.size(), lines_of(log).size(), reruns, approval_bodies(emu, 200).size(), attempts,
                approvals_logged, seed);
}

TEST_CASE("the demo runs end to end and exits 0", "[watch][e2e][demo]") {
    const std::string script = std::string(FOREWARN_SOURCE_DIR) + "/examples/demo.sh";
    // FOREWARN_WATCH_PATH is BUILD/tools/watch/forewarn-watch
    const std::string build = std::filesystem::path(FOREWARN_WATCH_PATH).parent_path().parent_path().parent_path().string();
    child_process demo({"/bin/bash", script, build});
    const auto code = demo.wait_exit(90s);
    INFO(demo.err());
    REQUIRE(code == 0);
    const auto lines = demo.out();
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    INFO(all);
    CHECK(all.find("approved C7061BAC-AFDC-4513-B24B-AA5F13A16123") != std::string::npos);
    CHECK(all.find("live_migrate") != std::string::npos);
    CHECK(all.find("demo: done.") != std::string::npos);
    // Both Azure watchers print the Redeploy's end (docs/poller.md says so): the follower's output
    // used to stop, at random, before it.
    for (const char* who : {"[WestNO_0 leader]", "[WestNO_1 follower]"}) {
        INFO(who);
        bool cancelled = false;
        for (const auto& l : lines) cancelled = cancelled || (l.find(who) != std::string::npos && l.find("(cancelled)") != std::string::npos);
        CHECK(cancelled);
    }
}

#endif  // FOREWARN_WATCH_PATH && FOREWARN_EMULATOR_PATH

TEST_CASE("watch --etcd: one slot for two VMs - killed -9 while holding it, the slot frees after the lease TTL",
          "[watch][e2e][fleet][etcd]") {
    forewarn_test::etcd_cluster etcd(1);
    emulator_process emu;
    auto agent = [&](const std::string& self) {
        return watch(emu, {"--cloud", "azure", "--json", "--self", self, "--approve", "own", "--interval", "500",
                           "--etcd", etcd.endpoints(), "--fleet-group", "db", "--fleet-max", "1", "--fleet-ttl", "10"});
    };
    auto has_line = [](child_process& p, const std::string& a, const std::string& b) {
        for (const auto& l : p.out())
            if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
        return false;
    };
    child_process a_process = agent("vmA");
    child_process* a = &a_process;
    REQUIRE(a->wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"E1","EventType":"Reboot","Resources":["vmA"],"impact":"300s"})");
    REQUIRE(eventually([&] { return approval_bodies(emu).size() == 1; }));
    INFO(a->err());
    CHECK(approval_bodies(emu) == strings{R"({"StartRequests":[{"EventId":"E1"}]})"});
    CHECK(has_line(*a, "\"slot\":\"holding\"", "\"event_id\":\"E1\""));

    child_process b = agent("vmB");
    REQUIRE(b.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"E2","EventType":"Reboot","Resources":["vmB"],"impact":"5s"})");
    REQUIRE(eventually([&] { return has_line(b, "\"slot\":\"waiting\"", "\"event_id\":\"E2\""); }));
    a->signal(SIGKILL);  // holding the slot, E1 under way: nothing is released
    const auto killed = std::chrono::steady_clock::now();
    REQUIRE(a->wait_exit(10s) == -1);
    REQUIRE(eventually([&] { return approval_bodies(emu).size() == 2; }, 40s));
    const auto waited = std::chrono::steady_clock::now() - killed;
    INFO(b.err());
    CHECK(approval_bodies(emu).back() == R"({"StartRequests":[{"EventId":"E2"}]})");
    CHECK(has_line(b, "\"slot\":\"holding\"", "\"event_id\":\"E2\""));
    // The lease was last renewed at most TTL/3 before the kill: the slot could not free sooner.
    CHECK(waited >= 6s);
    // E2 is over (5 s): B gives the slot back.
    CHECK(eventually([&] { return has_line(b, "\"slot\":\"none\"", "\"was\":\"holding\""); }, 30s));
    b.signal(SIGTERM);
    CHECK(b.wait_exit(10s) == 0);
}

TEST_CASE("watch --etcd --state-file: killed -9 while holding its slot and restarted, it keeps that slot",
          "[watch][e2e][fleet][etcd][state]") {
    forewarn_test::etcd_cluster etcd(1);
    emulator_process emu;
    temp_dir dir("fleet-restart");
    const std::string state = dir.file("vmA.state");
    auto agent = [&](const std::string& self, bool with_state) {
        strings flags{"--cloud", "azure", "--json", "--self", self, "--approve", "own", "--interval", "500",
                      "--etcd", etcd.endpoints(), "--fleet-group", "db", "--fleet-max", "1", "--fleet-ttl", "60"};
        if (with_state) {
            flags.push_back("--state-file");
            flags.push_back(state);
        }
        return watch(emu, flags);
    };
    auto has_line = [](child_process& p, const std::string& a, const std::string& b) {
        for (const auto& l : p.out())
            if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
        return false;
    };
    forewarn::etcd::client_options co;
    co.endpoints = etcd.client_urls();
    forewarn::etcd::client reader(co);
    auto slot_of_a = [&] {
        auto r = reader.range_prefix("forewarn/fleet/db/slots/vmA");
        REQUIRE(r);
        return r->kvs;
    };
    std::int64_t created = 0;
    {
        child_process a = agent("vmA", true);
        REQUIRE(a.wait_for_stderr("watching azure", agent_start()));
        post(emu, "azure/events", R"({"EventId":"E1","EventType":"Reboot","Resources":["vmA"],"impact":"600s"})");
        REQUIRE(eventually([&] { return approval_bodies(emu).size() == 1; }));
        REQUIRE(eventually([&] { return std::filesystem::exists(state); }));
        const auto kvs = slot_of_a();
        REQUIRE(kvs.size() == 1);
        created = kvs.front().create_revision;
        a.signal(SIGKILL);
        REQUIRE(a.wait_exit(10s) == -1);
    }
    child_process b = agent("vmB", false);
    REQUIRE(b.wait_for_stderr("watching azure", agent_start()));
    post(emu, "azure/events", R"({"EventId":"E2","EventType":"Reboot","Resources":["vmB"],"impact":"5s"})");
    REQUIRE(eventually([&] { return has_line(b, "\"slot\":\"waiting\"", "\"event_id\":\"E2\""); }));

    child_process again = agent("vmA", true);
    REQUIRE(eventually([&] { return has_line(again, "\"slot\":\"holding\"", "\"was\":\"none\""); }));
    INFO(again.err());
    const auto kvs = slot_of_a();
    REQUIRE(kvs.size() == 1);
    CHECK(kvs.front().create_revision == created);  // its own slot, kept: not a second one
    wait_for_polls(emu, 6);                          // a few seconds of both agents polling
    CHECK(approval_bodies(emu).size() == 1);         // B still waits: the budget of 1 is A's
    CHECK_FALSE(has_line(b, "\"slot\":\"holding\"", "E2"));
    again.signal(SIGTERM);
    CHECK(again.wait_exit(10s) == 0);
    b.signal(SIGTERM);
    CHECK(b.wait_exit(10s) == 0);
}

}  // namespace test_watch
