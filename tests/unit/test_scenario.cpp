// SPDX-License-Identifier: MIT
// The scenario engine through handle(): Azure transitions, api-version shapes, GCE values and
// ETags, faults, the rate limit, the control API and the scenario file format. No sockets, no sleep.
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/time.hpp>

#include "catch.hpp"

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace test_scenario {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::testing::azure_event_spec;
using forewarn::testing::emulated_response;
using forewarn::testing::fault_spec;
using forewarn::testing::scenario;
using forewarn::testing::scenario_config;
using forewarn::testing::scenario_step;
namespace edetail = forewarn::detail;

namespace {

// 2022-04-11T22:11:58Z: the seed's NotBefore (Mon, 11 Apr 2022 22:26:58 GMT) is 15 min later.
const auto seed_epoch = std::chrono::system_clock::time_point(std::chrono::seconds(1649715118));

scenario_config quiet_config() {
    scenario_config c;
    c.wall_epoch = seed_epoch;
    c.rate_limit = 0;
    c.vms[0].name = "WestNO_0";
    return c;
}

http_request azure_get(const std::string& version = "2020-07-01") {
    http_request r;
    r.url = "http://169.254.169.254/metadata/scheduledevents?api-version=" + version;
    r.headers.push_back({"Metadata", "true"});
    return r;
}

http_request azure_post(const std::string& body, const std::string& version = "2020-07-01") {
    http_request r = azure_get(version);
    r.method = http_method::post;
    r.body = body;
    r.headers.push_back({"Content-Type", "application/json"});
    return r;
}

http_request gce_get(const std::string& key_and_query) {
    http_request r;
    r.url = "http://metadata.google.internal/computeMetadata/v1/" + key_and_query;
    r.headers.push_back({"Metadata-Flavor", "Google"});
    return r;
}

http_request control(http_method m, const std::string& route, std::string body = {}) {
    http_request r;
    r.method = m;
    r.url = "http://127.0.0.1/emulator/v1/" + route;
    r.body = std::move(body);
    return r;
}

rapidjson::Document json(const std::string& text) {
    auto d = forewarn::detail::parse_json(text);
    REQUIRE(d.has_value());
    return std::move(*d);
}

std::string str(const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

}  // namespace

TEST_CASE("time and duration formats of the scenario engine", "[scenario]") {
    // Times are written by the library's own formatters (time.hpp) and wall_epoch is read by its
    // own ISO-8601 reader.
    CHECK(forewarn::format_rfc1123(seed_epoch + 15min) == "Mon, 11 Apr 2022 22:26:58 GMT");
    CHECK(forewarn::format_iso8601(std::chrono::system_clock::time_point(std::chrono::seconds(1474309787))) ==
          "2016-09-19T18:29:47Z");
    CHECK(forewarn::format_rfc1123(std::chrono::system_clock::time_point(std::chrono::seconds(0))) ==
          "Thu, 01 Jan 1970 00:00:00 GMT");
    auto epoch = forewarn::testing::parse_scenario(R"({"wall_epoch": "2022-04-11T22:11:58Z"})");
    REQUIRE(epoch.has_value());
    CHECK(epoch->wall_epoch == seed_epoch);
    auto local = forewarn::testing::parse_scenario(R"({"wall_epoch": "2022-04-11 22:11:58"})");
    REQUIRE_FALSE(local.has_value());
    CHECK(local.error().field == "wall_epoch");
    CHECK(edetail::emulator_parse_duration("15m") == std::chrono::milliseconds(900000));
    CHECK(edetail::emulator_parse_duration("1h30m") == std::chrono::milliseconds(5400000));
    CHECK(edetail::emulator_parse_duration("500ms") == std::chrono::milliseconds(500));
    CHECK(edetail::emulator_parse_duration("1.5") == std::chrono::milliseconds(1500));
    CHECK(edetail::emulator_parse_duration("2d") == std::chrono::milliseconds(172800000));
    CHECK_FALSE(edetail::emulator_parse_duration(""));
    CHECK_FALSE(edetail::emulator_parse_duration("-5s"));
    CHECK_FALSE(edetail::emulator_parse_duration("5 s"));
    CHECK_FALSE(edetail::emulator_parse_duration("5x"));
    CHECK_FALSE(edetail::emulator_parse_duration("3m5"));
}

TEST_CASE("an Azure event goes Scheduled, Started at NotBefore, removed after its impact", "[scenario][azure]") {
    scenario s(quiet_config());
    auto r = s.handle(azure_get());
    CHECK(r.status == 200);
    CHECK(r.body == R"({"DocumentIncarnation":1,"Events":[]})");

    azure_event_spec spec;
    spec.id = "C7061BAC-AFDC-4513-B24B-AA5F13A16123";
    spec.resources = {"WestNO_0", "WestNO_1"};
    s.add_azure_event(spec);
    r = s.handle(azure_get());
    CHECK(r.body ==
          R"({"DocumentIncarnation":2,"Events":[{"EventId":"C7061BAC-AFDC-4513-B24B-AA5F13A16123","EventStatus":"Scheduled",)"
          R"("EventType":"Freeze","ResourceType":"VirtualMachine","Resources":["WestNO_0","WestNO_1"],)"
          R"("NotBefore":"Mon, 11 Apr 2022 22:26:58 GMT","Description":"Virtual machine is being paused because of a )"
          R"(memory-preserving Live Migration operation.","EventSource":"Platform","DurationInSeconds":5}]})");

    s.advance(15min - 1ms);
    CHECK(s.incarnation() == 2);  // nothing changes before NotBefore
    s.advance(1ms);
    CHECK(s.incarnation() == 3);
    r = s.handle(azure_get());
    auto doc = json(r.body);
    REQUIRE(doc["Events"].Size() == 1);
    CHECK(str(doc["Events"][0]["EventId"]) == "C7061BAC-AFDC-4513-B24B-AA5F13A16123");  // same id from Scheduled to Started
    CHECK(str(doc["Events"][0]["EventStatus"]) == "Started");
    CHECK(str(doc["Events"][0]["NotBefore"]).empty());

    s.advance(5s);  // Freeze: DurationInSeconds 5 is the impact by default
    CHECK(s.incarnation() == 4);
    CHECK(s.handle(azure_get()).body == R"({"DocumentIncarnation":4,"Events":[]})");
}

TEST_CASE("approval by POST starts the event at once - later POSTs change nothing", "[scenario][azure]") {
    scenario s(quiet_config());
    azure_event_spec spec;
    spec.type = "Reboot";
    const std::string id = s.add_azure_event(spec);
    CHECK(id.size() == 36);
    CHECK(s.incarnation() == 2);

    auto r = s.handle(azure_post(R"({"StartRequests":[{"EventId":")" + id + R"("}]})"));
    CHECK(r.status == 200);
    CHECK(s.incarnation() == 3);
    auto doc = json(s.handle(azure_get()).body);
    CHECK(str(doc["Events"][0]["EventStatus"]) == "Started");
    CHECK(doc["Events"][0]["DurationInSeconds"].GetInt() == -1);

    // approving again (or by another VM) is still 200 and no change
    r = s.handle(azure_post(R"({"StartRequests":[{"EventId":")" + id + R"("}]})"));
    CHECK(r.status == 200);
    CHECK(s.incarnation() == 3);

    // impact of an event with unknown duration: 60 s by default
    s.advance(59s);
    CHECK(s.incarnation() == 3);
    s.advance(1s);
    CHECK(s.incarnation() == 4);
}

TEST_CASE("malformed approvals are 400 and change nothing", "[scenario][azure]") {
    scenario s(quiet_config());
    const std::string id = s.add_azure_event({});
    for (const std::string& body : {std::string(""), std::string("not json"), std::string("[]"), std::string("{}"),
                                   std::string(R"({"StartRequests":[]})"), std::string(R"({"StartRequests":{}})"),
                                   std::string(R"({"StartRequests":[{}]})"), std::string(R"({"StartRequests":[{"EventId":5}]})"),
                                   std::string(R"({"StartRequests":[{"EventId":"no-such-event"}]})"),
                                   std::string(R"({"StartRequests":[{"EventId":")" + id + R"("}],"Extra":1})"),
                                   std::string(R"({"DocumentIncarnation":"2","StartRequests":[{"EventId":")" + id + R"("}]})")}) {
        INFO(body);
        auto r = s.handle(azure_post(body));
        CHECK(r.status == 400);
        CHECK(r.body.find("\"error\"") != std::string::npos);
    }
    CHECK(s.incarnation() == 2);
    // the 2017-03-01 preview carried DocumentIncarnation beside StartRequests
    auto r = s.handle(azure_post(R"({"DocumentIncarnation":"2","StartRequests":[{"EventId":")" + id + R"("}]})", "2017-03-01"));
    CHECK(r.status == 200);
    CHECK(s.incarnation() == 3);
}

TEST_CASE("cancellation, hardware failure, several events, service re-enabled", "[scenario][azure]") {
    scenario_config c = quiet_config();
    scenario_step a;
    a.at = 0s;
    a.event.id = "A";
    a.event.type = "Redeploy";
    scenario_step b;
    b.at = 0s;
    b.event.id = "B";
    b.event.type = "Reboot";
    scenario_step cancel;
    cancel.at = 5min;
    cancel.what = scenario_step::kind::cancel;
    cancel.id = "A";
    scenario_step hw;
    hw.at = 6min;
    hw.event.id = "HW";
    hw.event.type = "Reboot";
    hw.event.started = true;
    scenario_step reenable;
    reenable.at = 20min;
    reenable.what = scenario_step::kind::service_reenabled;
    c.steps = {a, b, cancel, hw, reenable};
    scenario s(c);

    // both events appear at the same instant: one change, one increment
    CHECK(s.incarnation() == 2);
    auto doc = json(s.handle(azure_get()).body);
    CHECK(doc["Events"].Size() == 2);

    s.advance(5min);
    doc = json(s.handle(azure_get()).body);
    REQUIRE(doc["Events"].Size() == 1);
    CHECK(str(doc["Events"][0]["EventId"]) == "B");
    CHECK(s.incarnation() == 3);

    s.advance(1min);  // hardware failure: appears directly Started
    doc = json(s.handle(azure_get()).body);
    REQUIRE(doc["Events"].Size() == 2);
    CHECK(str(doc["Events"][1]["EventId"]) == "HW");
    CHECK(str(doc["Events"][1]["EventStatus"]) == "Started");
    CHECK(str(doc["Events"][1]["NotBefore"]).empty());
    CHECK(s.incarnation() == 4);

    s.advance(14min);  // HW gone at 7 min, B started at 15 min, B gone at 16, re-enabled at 20
    CHECK(s.incarnation() == 1);
    CHECK(json(s.handle(azure_get()).body)["DocumentIncarnation"].GetInt() == 1);
}

TEST_CASE("cancel is refused once an event has started", "[scenario][azure]") {
    scenario s(quiet_config());
    const std::string id = s.add_azure_event({});
    CHECK(s.handle(azure_post(R"({"StartRequests":[{"EventId":")" + id + R"("}]})")).status == 200);
    CHECK_FALSE(s.cancel_azure_event(id));
    CHECK(s.remove_azure_event(id));  // completes it
    CHECK_FALSE(s.remove_azure_event(id));
}

TEST_CASE("each api-version answers in its own shape", "[scenario][azure]") {
    scenario s(quiet_config());
    for (const char* type : {"Freeze", "Preempt", "Terminate"}) {
        azure_event_spec e;
        e.type = type;
        e.id = type;
        e.notice = 15min;
        s.add_azure_event(e);
    }
    struct expect {
        const char* version;
        bool preempt, terminate, description, source, duration, iso;
    };
    for (const expect& x : {expect{"2017-03-01", false, false, false, false, false, true},
                            expect{"2017-08-01", false, false, false, false, false, false},
                            expect{"2017-11-01", true, false, false, false, false, false},
                            expect{"2019-01-01", true, true, false, false, false, false},
                            expect{"2019-04-01", true, true, true, false, false, false},
                            expect{"2019-08-01", true, true, true, true, false, false},
                            expect{"2020-07-01", true, true, true, true, true, false}}) {
        INFO(x.version);
        auto r = s.handle(azure_get(x.version));
        REQUIRE(r.status == 200);
        auto doc = json(r.body);
        const auto& events = doc["Events"];
        CHECK(events.Size() == 1u + (x.preempt ? 1u : 0u) + (x.terminate ? 1u : 0u));
        const auto& e = events[0];
        CHECK(e.HasMember("Description") == x.description);
        CHECK(e.HasMember("EventSource") == x.source);
        CHECK(e.HasMember("DurationInSeconds") == x.duration);
        CHECK(str(e["NotBefore"]) == (x.iso ? "2022-04-11T22:26:58Z" : "Mon, 11 Apr 2022 22:26:58 GMT"));
        CHECK(str(e["Resources"][0]) == (x.iso ? "_WestNO_0" : "WestNO_0"));
    }
    auto bad = s.handle(azure_get("2021-01-01"));
    CHECK(bad.status == 400);
    CHECK(bad.body.find("newest-versions") != std::string::npos);
    http_request none = azure_get();
    none.url = "http://169.254.169.254/metadata/scheduledevents";
    CHECK(s.handle(none).status == 400);
    none.url = "http://169.254.169.254/metadata/scheduledevents?api-version=latest";
    CHECK(s.handle(none).status == 400);
}

TEST_CASE("Azure protocol rules: Metadata header, X-Forwarded-For, versions, instance metadata", "[scenario][azure]") {
    scenario_config c = quiet_config();
    c.vms.push_back({});
    c.vms[0].name = "myss_0";
    c.vms[0].scale_set = "myss";
    c.vms[1].name = "myss_1";
    c.vms[1].scale_set = "myss";
    scenario s(c);

    http_request r = azure_get();
    r.headers.clear();
    CHECK(s.handle(r).status == 400);
    r.headers.push_back({"metadata", "TRUE"});
    CHECK(s.handle(r).status == 200);
    r.headers.push_back({"X-Forwarded-For", "10.0.0.1"});
    CHECK(s.handle(r).status == 400);
    http_request preview = azure_get("2017-03-01");
    preview.headers.clear();
    CHECK(s.handle(preview).status == 200);  // the preview did not enforce the header

    http_request versions;
    versions.url = "http://169.254.169.254/metadata/versions";
    versions.headers.push_back({"Metadata", "true"});
    auto v = s.handle(versions);
    CHECK(v.status == 200);
    CHECK(v.body.find("\"2020-07-01\"") != std::string::npos);

    http_request compute;
    compute.url = "http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01";
    compute.headers.push_back({"Metadata", "true"});
    auto doc = json(s.handle(compute).body);
    CHECK(str(doc["name"]) == "myss_0");
    CHECK(str(doc["vmScaleSetName"]) == "myss");
    compute.headers.push_back({std::string(scenario::vm_header), "myss_1"});
    CHECK(str(json(s.handle(compute).body)["name"]) == "myss_1");
    compute.url = "http://169.254.169.254/metadata/instance/compute/name?api-version=2021-02-01&format=text";
    CHECK(s.handle(compute).body == "myss_1");
    compute.headers.back().value = "nobody";
    CHECK(s.handle(compute).status == 400);
    http_request unknown = azure_get();
    unknown.url = "http://169.254.169.254/metadata/nothing?api-version=2020-07-01";
    CHECK(s.handle(unknown).status == 404);
}

TEST_CASE("a VM named by the path's /emulator/vm/NAME prefix: answered and recorded as that VM, for a client that sends no header", "[scenario][azure]") {
    scenario_config c = quiet_config();
    c.vms.push_back({});
    c.vms[1].name = "WestNO_1";
    scenario s(c);
    azure_event_spec spec;
    spec.type = "Reboot";
    spec.resources = {"WestNO_0", "WestNO_1"};
    const std::string id = s.add_azure_event(spec);

    http_request compute;
    compute.url = "http://127.0.0.1:8080/emulator/vm/WestNO_1/metadata/instance/compute/name?api-version=2021-02-01&format=text";
    compute.headers.push_back({"Metadata", "true"});
    CHECK(s.handle(compute).body == "WestNO_1");
    CHECK(s.requests().back().vm == "WestNO_1");
    CHECK(s.requests().back().target == "/emulator/vm/WestNO_1/metadata/instance/compute/name?api-version=2021-02-01&format=text");
    compute.headers.push_back({std::string(scenario::vm_header), "WestNO_1"});
    CHECK(s.handle(compute).body == "WestNO_1");  // both, naming one VM
    compute.headers.back().value = "WestNO_0";
    CHECK(s.handle(compute).status == 400);  // both, naming two
    compute.headers.pop_back();
    compute.url = "http://127.0.0.1:8080/emulator/vm/nobody/metadata/instance/compute/name?api-version=2021-02-01&format=text";
    CHECK(s.handle(compute).status == 400);
    compute.url = "http://127.0.0.1:8080/emulator/vm//metadata/instance/compute/name?api-version=2021-02-01&format=text";
    CHECK(s.handle(compute).status == 404);  // no name: not the prefix, a path no service serves

    http_request get = azure_get();
    get.url = "http://127.0.0.1:8080/emulator/vm/WestNO_1/metadata/scheduledevents?api-version=2020-07-01";
    CHECK(str(json(s.handle(get).body)["Events"][0]["EventId"]) == id);
    http_request post = azure_post(R"({"StartRequests":[{"EventId":")" + id + R"("}]})");
    post.url = get.url;
    CHECK(s.handle(post).status == 200);
    CHECK(s.azure_event(id)->approved_by == "WestNO_1");
}

TEST_CASE("IMDS's 5 requests per second limit answers 429 beyond it", "[scenario][azure][fault]") {
    scenario_config c = quiet_config();
    c.rate_limit = 5;
    scenario s(c);
    for (int i = 0; i < 5; ++i) CHECK(s.handle(azure_get()).status == 200);
    auto r = s.handle(azure_get());
    CHECK(r.status == 429);
    CHECK(s.requests().back().fault == "rate limit");
    s.advance(1s);
    CHECK(s.handle(azure_get()).status == 200);
    // GCE is not IMDS: no limit there
    for (int i = 0; i < 10; ++i) CHECK(s.handle(gce_get("instance/id")).status == 200);
}

TEST_CASE("the first Azure call is slow while the service is enabled", "[scenario][azure][fault]") {
    scenario_config c = quiet_config();
    c.enablement_delay = 2min;
    scenario_step re;
    re.at = 1h;
    re.what = scenario_step::kind::service_reenabled;
    c.steps.push_back(re);
    scenario s(c);
    auto r = s.handle(azure_get());
    CHECK(r.status == 200);
    CHECK(r.delay == 2min);
    s.advance(30s);
    CHECK(s.handle(azure_get()).delay == 90s);  // still enabling
    s.advance(90s);
    CHECK(s.handle(azure_get()).delay == 0ms);
    s.advance(1h);
    CHECK(s.handle(azure_get()).delay == 2min);  // re-enabled: slow again
}

TEST_CASE("GCE: maintenance-event NONE to MIGRATE and back, ETag changes exactly with the value", "[scenario][gce]") {
    scenario_config c = quiet_config();
    scenario_step begin;
    begin.at = 30s;
    begin.what = scenario_step::kind::gce_set;
    begin.gce_values = {{"instance/maintenance-event", std::string("MIGRATE_ON_HOST_MAINTENANCE")}};
    scenario_step end = begin;
    end.at = 90s;
    end.gce_values = {{"instance/maintenance-event", std::string("NONE")}};
    c.steps = {begin, end};
    scenario s(c);

    auto r = s.handle(gce_get("instance/maintenance-event"));
    CHECK(r.status == 200);
    CHECK(r.body == "NONE");
    REQUIRE(r.header("ETag"));
    REQUIRE(r.header("Metadata-Flavor"));
    CHECK(*r.header("Metadata-Flavor") == "Google");
    const std::string none_etag = *r.header("ETag");
    CHECK(none_etag.size() == 16);

    s.advance(29s);
    CHECK(*s.handle(gce_get("instance/maintenance-event")).header("ETag") == none_etag);
    s.advance(1s);
    r = s.handle(gce_get("instance/maintenance-event"));
    CHECK(r.body == "MIGRATE_ON_HOST_MAINTENANCE");
    CHECK(*r.header("ETag") != none_etag);
    s.set_gce("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE");  // same value: same ETag
    CHECK(*s.handle(gce_get("instance/maintenance-event")).header("ETag") == *r.header("ETag"));
    s.advance(60s);
    r = s.handle(gce_get("instance/maintenance-event"));
    CHECK(r.body == "NONE");
    CHECK(*r.header("ETag") == none_etag);  // the ETag is the content's
    // other keys keep their ETag while this one changes
    CHECK(s.gce_etag("instance/preempted") == edetail::emulator_etag("FALSE"));
}

TEST_CASE("GCE: the 60 s warning is given only if maintenance-event was read since the last maintenance", "[scenario][gce]") {
    auto c = forewarn::testing::parse_scenario(R"({"gce_warning_requires_read": true, "steps": [
        {"at": "1m", "gce_maintenance": {"value": "MIGRATE_ON_HOST_MAINTENANCE", "for": "60s"}},
        {"at": "5m", "gce_maintenance": {"value": "MIGRATE_ON_HOST_MAINTENANCE", "for": "60s"}},
        {"at": "9m", "gce_maintenance": {"value": "MIGRATE_ON_HOST_MAINTENANCE", "for": "60s"}}]})");
    REQUIRE(c.has_value());
    scenario s(*c);
    s.advance(1min);  // never read: the first migration comes unannounced
    CHECK(s.gce_value("instance/maintenance-event") == "NONE");
    s.advance(2min);
    CHECK(s.handle(gce_get("instance/maintenance-event")).body == "NONE");  // read once
    s.advance(2min);  // 5 min: announced
    CHECK(s.handle(gce_get("instance/maintenance-event")).body == "MIGRATE_ON_HOST_MAINTENANCE");
    s.advance(1min);
    CHECK(s.gce_value("instance/maintenance-event") == "NONE");
    s.advance(3min);  // 9 min: not read since the last maintenance ended
    CHECK(s.gce_value("instance/maintenance-event") == "NONE");
}

TEST_CASE("GCE upcoming-maintenance: a JSON window whatever alt - the odd answers, the 503 without an ETag",
          "[scenario][gce][upcoming]") {
    auto c = forewarn::testing::parse_scenario(R"({"steps": [
        {"at": "1m", "gce_upcoming": "no_notifications"},
        {"at": "2m", "gce_upcoming": {"type": "SCHEDULED", "maintenance_status": "PENDING",
                                      "window_start_time": "2026-12-03T10:00:00Z"}},
        {"at": "3m", "gce_upcoming": "none"},
        {"at": "4m", "gce_upcoming": "empty"},
        {"at": "5m", "gce_upcoming": "absent"}]})");
    REQUIRE(c.has_value());
    scenario s(*c);
    const std::string key = "instance/upcoming-maintenance";
    CHECK(s.handle(gce_get(key + "?alt=json")).status == 404);  // a machine type without it
    s.advance(1min);
    auto r = s.handle(gce_get(key + "?alt=json"));
    CHECK(r.status == 503);
    CHECK(r.body.find("no notifications") != std::string::npos);
    CHECK_FALSE(r.header("ETag"));
    CHECK(*r.header("Metadata-Flavor") == "Google");
    s.advance(1min);
    for (const char* alt : {"?alt=json", "?alt=text", ""}) {
        r = s.handle(gce_get(key + alt));
        CHECK(r.status == 200);
        CHECK(json(r.body).IsObject());  // the object itself, not a JSON string holding it
        CHECK(str(json(r.body)["maintenance_status"]) == "PENDING");
        REQUIRE(r.header("ETag"));
    }
    s.advance(1min);
    CHECK(s.handle(gce_get(key + "?alt=json")).body == "NONE");
    s.advance(1min);
    CHECK(s.handle(gce_get(key + "?alt=json")).body == "{}");
    s.advance(1min);
    CHECK(s.handle(gce_get(key + "?alt=json")).status == 404);

    auto bad = forewarn::testing::parse_scenario(R"({"steps":[{"at":"1m","gce_upcoming":"soon"}]})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().field == "steps[0].gce_upcoming");
}

TEST_CASE("GCE: identity keys, scheduling, directories, alt, recursive, 404, 403, redirect", "[scenario][gce]") {
    scenario_config c = quiet_config();
    c.gce.emplace_back("instance/scheduling/preemptible", "TRUE");
    scenario s(c);
    CHECK(s.handle(gce_get("instance/name")).body == "WestNO_0");
    CHECK(s.handle(gce_get("instance/id")).body == "4520031799277581759");
    CHECK(s.handle(gce_get("instance/hostname")).body == "WestNO_0.c.forewarn-test.internal");
    CHECK(s.handle(gce_get("instance/scheduling/preemptible")).body == "TRUE");
    CHECK(s.handle(gce_get("instance/scheduling/on-host-maintenance")).body == "MIGRATE");
    CHECK(s.handle(gce_get("instance/preempted")).body == "FALSE");
    CHECK(s.handle(gce_get("instance/name?alt=json")).body == "\"WestNO_0\"");
    CHECK(s.handle(gce_get("instance/name?alt=xml")).status == 400);

    auto listing = s.handle(gce_get("instance/"));
    CHECK(listing.status == 200);
    CHECK(listing.body.find("maintenance-event\n") != std::string::npos);
    CHECK(listing.body.find("scheduling/\n") != std::string::npos);
    auto rec = s.handle(gce_get("instance/?recursive=true"));
    auto doc = json(rec.body);
    CHECK(str(doc["maintenanceEvent"]) == "NONE");
    CHECK(str(doc["scheduling"]["onHostMaintenance"]) == "MIGRATE");
    CHECK(s.handle(gce_get("instance/scheduling/?recursive=true&alt=text")).body.find("preemptible TRUE\n") != std::string::npos);

    auto redirect = s.handle(gce_get("instance"));
    CHECK(redirect.status == 301);
    REQUIRE(redirect.header("Location"));
    CHECK(*redirect.header("Location") == "/computeMetadata/v1/instance/");
    CHECK(s.handle(gce_get("instance/no-such-key")).status == 404);
    CHECK(*s.handle(gce_get("instance/no-such-key")).header("Metadata-Flavor") == "Google");

    http_request r = gce_get("instance/id");
    r.headers.clear();
    CHECK(s.handle(r).status == 403);
    r.headers.push_back({"Metadata-Flavor", "google"});
    CHECK(s.handle(r).status == 403);
    r.headers = {{"Metadata-Flavor", "Google"}, {"X-Forwarded-For", "1.2.3.4"}};
    CHECK(s.handle(r).status == 403);
    CHECK(s.handle(gce_get("instance/id?wait_for_change=true&timeout_sec=abc")).status == 400);
    CHECK(s.handle(gce_get("instance/id?wait_for_change=true&timeout_sec=1.5")).status == 400);
}

TEST_CASE("GCE wait_for_change: a different last_etag answers at once, the same one waits", "[scenario][gce]") {
    auto s = std::make_shared<scenario>(quiet_config());
    const std::string etag = s->gce_etag("instance/maintenance-event");

    auto now = s->handle(gce_get("instance/maintenance-event?wait_for_change=true&last_etag=0"));
    CHECK(now.status == 200);
    CHECK(now.body == "NONE");

    // the same ETag: hangs until the value changes (the test's advance wakes the waiting thread)
    emulated_response waited;
    std::atomic<bool> done{false};
    std::thread waiter([&] {
        waited = s->handle(gce_get("instance/maintenance-event?wait_for_change=true&last_etag=" + etag));
        done = true;
    });
    REQUIRE(s->wait_until_hanging(1));
    CHECK_FALSE(done.load());
    scenario_step st;
    st.what = scenario_step::kind::gce_set;
    st.at = 10s;
    st.gce_values = {{"instance/maintenance-event", std::string("TERMINATE_ON_HOST_MAINTENANCE")}};
    s->add_step(st);
    s->advance(10s);
    waiter.join();
    CHECK(waited.status == 200);
    CHECK(waited.body == "TERMINATE_ON_HOST_MAINTENANCE");
    CHECK(*waited.header("ETag") != etag);
}

TEST_CASE("GCE wait_for_change: timeout_sec answers the unchanged value - cancel and request timeout end it", "[scenario][gce]") {
    auto s = std::make_shared<scenario>(quiet_config());
    const std::string etag = s->gce_etag("instance/preempted");
    emulated_response waited;
    http_request watch = gce_get("instance/preempted?wait_for_change=true&timeout_sec=30&last_etag=" + etag);
    watch.timeout = 35s;  // a client's own timeout has a margin above timeout_sec
    std::thread waiter([&] { waited = s->handle(watch); });
    REQUIRE(s->wait_until_hanging(1));
    s->advance(29s);
    CHECK(s->hanging() == 1);
    s->advance(1s);
    waiter.join();
    CHECK(waited.status == 200);
    CHECK(waited.body == "FALSE");
    REQUIRE(waited.header("ETag"));
    CHECK(*waited.header("ETag") == etag);

    std::atomic<bool> cancel{false};
    std::thread cancelled([&] { waited = s->handle(gce_get("instance/preempted?wait_for_change=true"), &cancel); });
    cancel = true;
    s->wake();
    cancelled.join();
    CHECK(waited.what == emulated_response::action::cancelled);

    http_request r = gce_get("instance/preempted?wait_for_change=true&timeout_sec=300");
    r.timeout = 10s;
    std::thread timed([&] { waited = s->handle(r); });
    REQUIRE(s->wait_until_hanging(1));
    s->advance(10s);
    timed.join();
    CHECK(waited.what == emulated_response::action::timed_out);
}

TEST_CASE("faults: status for the next N requests, then normal again", "[scenario][fault]") {
    scenario s(quiet_config());
    for (int status : {400, 404, 410, 429, 500, 503}) {
        fault_spec f;
        f.status = status;
        f.count = 2;
        f.service = "azure";
        s.inject_fault(f);
        CHECK(s.handle(azure_get()).status == status);
        CHECK(s.handle(gce_get("instance/id")).status == 200);  // other service untouched
        CHECK(s.handle(azure_get()).status == status);
        CHECK(s.handle(azure_get()).status == 200);
    }
    fault_spec g;
    g.service = "gce";
    g.path = "preempted";
    s.inject_fault(g);
    CHECK(s.handle(gce_get("instance/maintenance-event")).status == 200);
    auto r = s.handle(gce_get("instance/preempted"));
    CHECK(r.status == 503);
    CHECK(*r.header("Metadata-Flavor") == "Google");
    CHECK(s.requests().back().fault == "status 503");
}

TEST_CASE("faults: a fraction of requests, deterministic for a seed", "[scenario][fault]") {
    auto pattern = [](std::uint64_t seed) {
        scenario_config c = quiet_config();
        c.seed = seed;
        scenario s(c);
        fault_spec f;
        f.fraction = 0.3;
        f.count = -1;
        s.inject_fault(f);
        std::string out;
        for (int i = 0; i < 400; ++i) out += s.handle(azure_get()).status == 503 ? 'x' : '.';
        return out;
    };
    const std::string a = pattern(7);
    CHECK(a == pattern(7));
    CHECK(a != pattern(8));
    const auto hits = std::count(a.begin(), a.end(), 'x');
    CHECK(hits > 80);
    CHECK(hits < 160);
}

TEST_CASE("faults: delay, stall, empty, truncated, malformed, close mid-body, custom body", "[scenario][fault]") {
    scenario s(quiet_config());
    s.add_azure_event({});
    const std::string full = s.handle(azure_get()).body;
    auto inject = [&](fault_spec::kind k, std::size_t bytes = 0) {
        fault_spec f;
        f.what = k;
        f.duration = 7s;
        f.bytes = bytes;
        s.inject_fault(f);
        return s.handle(azure_get());
    };
    auto r = inject(fault_spec::kind::delay);
    CHECK(r.what == emulated_response::action::answer);
    CHECK(r.delay == 7s);
    CHECK(r.body == full);
    r = inject(fault_spec::kind::stall);
    CHECK(r.what == emulated_response::action::stall);
    CHECK(r.delay == 7s);
    r = inject(fault_spec::kind::empty_body);
    CHECK(r.status == 200);
    CHECK(r.body.empty());
    r = inject(fault_spec::kind::truncated_json);
    CHECK(r.body == full.substr(0, full.size() / 2));
    CHECK_FALSE(forewarn::detail::parse_json(r.body).has_value());
    r = inject(fault_spec::kind::malformed_json);
    CHECK(r.status == 200);
    CHECK_FALSE(forewarn::detail::parse_json(r.body).has_value());
    r = inject(fault_spec::kind::close_mid_body, 10);
    CHECK(r.what == emulated_response::action::close_mid_body);
    CHECK(r.close_after == 10);
    CHECK(r.body == full);
    fault_spec b;
    b.what = fault_spec::kind::body;
    b.status = 200;
    b.body = R"({"DocumentIncarnation":"three","Events":[]})";
    s.inject_fault(b);
    CHECK(s.handle(azure_get()).body == b.body);
    CHECK(s.handle(azure_get()).body == full);  // every fault was used up
}

TEST_CASE("control API: events, faults, GCE values, steps, advance, request log, state, reset", "[scenario][control]") {
    scenario s(quiet_config());
    auto r = s.handle(control(http_method::post, "azure/events", R"({"EventType":"Reboot","notice":"10m","EventSource":"User"})"));
    REQUIRE(r.status == 200);
    const std::string id = str(json(r.body)["EventId"]);
    auto doc = json(s.handle(azure_get()).body);
    CHECK(str(doc["Events"][0]["EventId"]) == id);
    CHECK(str(doc["Events"][0]["EventSource"]) == "User");

    CHECK(s.handle(control(http_method::post, "azure/events/" + id + "/cancel")).status == 200);
    CHECK(json(s.handle(azure_get()).body)["Events"].Size() == 0);
    CHECK(s.handle(control(http_method::post, "azure/events/" + id + "/cancel")).status == 409);
    CHECK(s.handle(control(http_method::post, "azure/events/nope/cancel")).status == 404);
    CHECK(s.handle(control(http_method::post, "azure/events", R"({"notcie":"10m"})")).status == 400);

    CHECK(s.handle(control(http_method::post, "faults", R"({"kind":"status","status":500,"count":1})")).status == 200);
    CHECK(s.handle(azure_get()).status == 500);
    CHECK(s.handle(control(http_method::post, "faults", R"({"kind":"nonsense"})")).status == 400);

    CHECK(s.handle(control(http_method::post, "gce", R"({"instance/maintenance-event":"MIGRATE_ON_HOST_MAINTENANCE"})")).status == 200);
    CHECK(s.handle(gce_get("instance/maintenance-event")).body == "MIGRATE_ON_HOST_MAINTENANCE");

    CHECK(s.handle(control(http_method::post, "steps", R"([{"at":"1m","gce_maintenance":{"value":"MIGRATE_ON_HOST_MAINTENANCE","for":"30s"}},)"
                                                       R"({"at":"2m","hardware_failure":{"EventId":"HW"}}])"))
              .status == 200);
    CHECK(s.handle(control(http_method::post, "advance", R"({"by":"90s"})")).status == 200);
    CHECK(s.handle(gce_get("instance/maintenance-event")).body == "NONE");
    s.advance(30s);
    doc = json(s.handle(azure_get()).body);
    REQUIRE(doc["Events"].Size() == 1);
    CHECK(str(doc["Events"][0]["EventType"]) == "Reboot");
    CHECK(str(doc["Events"][0]["EventStatus"]) == "Started");

    auto log = json(s.handle(control(http_method::get, "requests")).body);
    REQUIRE(log["requests"].Size() > 3);
    bool every_azure_had_metadata = true;
    for (const auto& req : log["requests"].GetArray()) {
        if (str(req["service"]) != "azure") continue;
        bool found = false;
        for (const auto& h : req["headers"].GetArray())
            if (str(h[0]) == "Metadata" && str(h[1]) == "true") found = true;
        every_azure_had_metadata = every_azure_had_metadata && found;
    }
    CHECK(every_azure_had_metadata);

    auto state = json(s.handle(control(http_method::get, "state")).body);
    CHECK(state["time_ms"].GetInt64() == 120000);
    CHECK(state["events"].Size() == 2);

    CHECK(s.handle(control(http_method::post, "reset")).status == 200);
    CHECK(s.now() == 0ms);
    CHECK(s.incarnation() == 1);
    CHECK(s.requests().empty());
    CHECK(s.handle(control(http_method::get, "nowhere")).status == 404);
}

TEST_CASE("the request log survives bytes that are not UTF-8", "[scenario][control]") {
    scenario s(quiet_config());
    http_request r = gce_get("instance/%ff%c3");
    r.headers.push_back({"X-Odd", std::string("a\xff\xc3(b\xe2\x82\xac", 8)});
    r.body = std::string("\xc0\xaf", 2);
    CHECK(s.handle(r).status == 404);
    auto log = json(s.handle(control(http_method::get, "requests")).body);
    REQUIRE(log["requests"].Size() == 1);
    const auto& h = log["requests"][0]["headers"];
    CHECK(str(h[1][1]) == "a?" "?(b\xe2\x82\xac");  // the euro sign is kept
    CHECK(str(log["requests"][0]["body"]) == "??");
    CHECK(edetail::replace_invalid_utf8("\xed\xa0\x80", "?") == "???");  // a UTF-16 surrogate is not UTF-8
}

TEST_CASE("hostile requests get an answer, never a crash or a hang", "[scenario][robustness]") {
    scenario s(quiet_config());
    s.add_azure_event({});
    const std::vector<std::string> urls{"", "/", "?", "%", "/%", "/%4", "/%zz", "http://", "http://host", "http://host?x",
                                        "/metadata/scheduledevents?&&=&api-version", "/metadata/scheduledevents?api-version=%",
                                        "/computeMetadata/v1/instance/id?wait_for_change=maybe",
                                        "/computeMetadata/v1/instance/id?timeout_sec=99999999999&wait_for_change=true",
                                        "/computeMetadata/v1/../../etc/passwd", "/computeMetadata/v1//", "/emulator/v1/",
                                        "/emulator/v1/azure/events/", "/emulator/v1/azure/events//cancel",
                                        std::string(100000, '/'), "/computeMetadata/v1/" + std::string(5000, 'a')};
    for (const auto& url : urls) {
        INFO(url.substr(0, 80));
        for (auto m : {http_method::get, http_method::post}) {
            http_request r;
            r.method = m;
            r.url = url;
            r.headers = {{"Metadata", "true"}, {"Metadata-Flavor", "Google"}};
            r.body = std::string(10000, '[');
            auto out = s.handle(r);
            CHECK(out.status >= 200);
            CHECK(out.status < 600);
        }
    }
    for (const std::string& body : {std::string(1 << 20, '['), std::string("{\"StartRequests\":[") + std::string(100000, '{'),
                                   std::string("\xff\xfe"), std::string("{\"StartRequests\":[{\"EventId\":\"\\ud800\"}]}")}) {
        CHECK(s.handle(azure_post(body)).status == 400);
        CHECK(s.handle(control(http_method::post, "steps", body)).status == 400);
        CHECK(s.handle(control(http_method::post, "faults", body)).status == 400);
        CHECK(s.handle(control(http_method::post, "azure/events", body)).status == 400);
    }
    for (const char* body : {"{\"by\":-5}", "{\"by\":\"forever\"}", "[]", "{\"by\":{}}"})
        CHECK(s.handle(control(http_method::post, "advance", body)).status == 400);
    CHECK(s.handle(control(http_method::post, "gce", "{\"instance/x\":5}")).status == 400);
    CHECK(s.handle(control(http_method::post, "faults", "{\"kind\":\"status\",\"status\":99}")).status == 400);
    CHECK(s.handle(control(http_method::post, "faults", "{\"fraction\":0}")).status == 400);
    CHECK(s.handle(control(http_method::post, "faults", "{\"count\":0}")).status == 400);
    CHECK(s.incarnation() == 2);  // nothing got through
}

TEST_CASE("scenario files: parse, reject typos with the member named", "[scenario][file]") {
    auto c = forewarn::testing::parse_scenario(R"({
        "name": "t", "speed": 60, "wall_epoch": "2022-04-11T22:11:58Z", "rate_limit": 0,
        "vms": [{"scale_set": "ss", "instance_id": "3"}, {"name": "other"}],
        "gce": {"instance/scheduling/preemptible": "TRUE"},
        "steps": [
          {"at": "0s", "azure_event": {"EventId": "E1", "EventType": "Terminate", "Resources": ["ss_3"], "notice": "5m"}},
          {"at": "1m", "approve": "E1"},
          {"at": "2m", "gce_set": {"instance/preempted": "TRUE"}},
          {"at": "3m", "fault": {"kind": "status", "status": 503, "count": 2, "service": "gce"}}
        ]})");
    REQUIRE(c.has_value());
    CHECK(c->speed == 60);
    CHECK(c->vms[0].name == "ss_3");
    CHECK(c->steps.size() == 4);
    scenario s(*c);
    s.advance(1min);
    auto doc = json(s.handle(azure_get()).body);
    CHECK(str(doc["Events"][0]["EventStatus"]) == "Started");
    s.advance(1min);
    CHECK(s.handle(gce_get("instance/preempted")).body == "TRUE");

    auto bad = forewarn::testing::parse_scenario(R"({"steps":[{"at":"1m","azure_event":{"EventType":"Freeze","notcie":"5m"}}]})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().field == "steps[0].azure_event.notcie");
    bad = forewarn::testing::parse_scenario(R"({"steps":[{"at":"soon","cancel":"x"}]})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().field == "steps[0].at");
    bad = forewarn::testing::parse_scenario(R"({"steps":[{"at":"1m","cancel":"x","approve":"y"}]})");
    CHECK_FALSE(bad.has_value());
    bad = forewarn::testing::parse_scenario("{\"speed\": -1}");
    CHECK_FALSE(bad.has_value());
    CHECK_FALSE(forewarn::testing::parse_scenario("[").has_value());
    CHECK(forewarn::testing::load_scenario("/nonexistent/file.json").error().code == forewarn::errc::io_error);
}

TEST_CASE("every scenario in examples/scenarios loads", "[scenario][file]") {
    for (const char* name : {"live_migration", "user_reboot", "spot_preempt", "scale_set_terminate",
                             "cancelled_maintenance", "hardware_failure", "gce_live_migration", "gce_preemption",
                             "gce_upcoming_maintenance", "aws_spot_and_reboot"}) {
        INFO(name);
        auto c = forewarn::testing::load_scenario(std::string(FOREWARN_SOURCE_DIR) + "/examples/scenarios/" + name + ".json");
        REQUIRE(c.has_value());
        CHECK_FALSE(c->steps.empty());
        scenario s(*c);
        s.advance(2h);  // every scenario plays to its end without trouble
        CHECK(s.now() == 2h);
    }
}

TEST_CASE("real-time clock: scenario time runs at speed", "[scenario]") {
    scenario s(quiet_config());
    s.use_real_time(1000.0);
    CHECK(s.pause(5s));  // 5 ms of real time
    CHECK(s.now() >= 5s);
    CHECK(s.now() < 10min);  // generous: proves the scale, not a timing
    s.shutdown();
    CHECK_FALSE(s.pause(forewarn::testing::scenario_duration::max()));
}

}  // namespace test_scenario
