// SPDX-License-Identifier: MIT
// forewarn-emulator at the protocol level, over real loopback sockets: start-up line, headers and
// statuses of both services, watch semantics and timeouts, faults on the wire, the control API,
// forewarn's own clients (curl_transport) against it, and a clean stop on SIGINT/SIGTERM.
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/curl_transport.hpp>
#include <forewarn/detail/json.hpp>

#include "catch.hpp"
#include "emulator_process.hpp"
#include "support_loopback.hpp"

#include <httplib.h>

#include <sys/wait.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using forewarn_test::emulator_process;

namespace {

httplib::Client client_for(const emulator_process& emu) {
    httplib::Client c("127.0.0.1", emu.port());
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(20, 0);
    return c;
}

const httplib::Headers azure_headers{{"Metadata", "true"}};
const httplib::Headers gce_headers{{"Metadata-Flavor", "Google"}};
const char* azure_path = "/metadata/scheduledevents?api-version=2020-07-01";

rapidjson::Document json(const std::string& text) {
    auto d = forewarn::detail::parse_json(text);
    REQUIRE(d.has_value());
    return std::move(*d);
}

std::string str(const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

std::string scenario_file(const char* name) {
    return std::string(FOREWARN_SOURCE_DIR) + "/examples/scenarios/" + name + ".json";
}

}  // namespace

TEST_CASE("forewarn-emulator reports its port and serves both services with nothing scheduled", "[emulator]") {
    emulator_process emu;
    CHECK(emu.port() > 0);
    CHECK(emu.output().front() == "listening on " + emu.base_url());
    auto c = client_for(emu);
    auto r = c.Get(azure_path, azure_headers);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == R"({"DocumentIncarnation":1,"Events":[]})");
    r = c.Get("/computeMetadata/v1/instance/maintenance-event", gce_headers);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == "NONE");
    CHECK(r->get_header_value("Metadata-Flavor") == "Google");
    CHECK(r->get_header_value("ETag").size() == 16);
    // one line per request
    CHECK(emu.wait_for_output("GET /computeMetadata/v1/instance/maintenance-event -> 200", 5s));
}

TEST_CASE("forewarn-emulator: Azure protocol rules on the wire", "[emulator][azure]") {
    emulator_process emu;
    auto c = client_for(emu);
    auto r = c.Get(azure_path);
    REQUIRE(r);
    CHECK(r->status == 400);  // no Metadata: true
    r = c.Get(azure_path, {{"Metadata", "true"}, {"X-Forwarded-For", "10.1.1.1"}});
    REQUIRE(r);
    CHECK(r->status == 400);
    r = c.Get("/metadata/scheduledevents", azure_headers);
    REQUIRE(r);
    CHECK(r->status == 400);  // no api-version
    r = c.Get("/metadata/scheduledevents?api-version=2099-01-01", azure_headers);
    REQUIRE(r);
    CHECK(r->status == 400);
    r = c.Post(azure_path, azure_headers, "{\"StartRequests\": [", "application/json");
    REQUIRE(r);
    CHECK(r->status == 400);
    r = c.Get("/metadata/versions", azure_headers);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body.find("2020-07-01") != std::string::npos);
    r = c.Get("/metadata/instance/compute?api-version=2021-02-01", azure_headers);
    REQUIRE(r);
    CHECK(str(json(r->body)["name"]) == "vm0");
}

TEST_CASE("forewarn-emulator: GCE protocol rules on the wire", "[emulator][gce]") {
    emulator_process emu;
    auto c = client_for(emu);
    auto r = c.Get("/computeMetadata/v1/instance/id");
    REQUIRE(r);
    CHECK(r->status == 403);
    r = c.Get("/computeMetadata/v1/instance/id", {{"Metadata-Flavor", "Google"}, {"X-Forwarded-For", "1.2.3.4"}});
    REQUIRE(r);
    CHECK(r->status == 403);
    r = c.Get("/computeMetadata/v1/instance/no-such-key", gce_headers);
    REQUIRE(r);
    CHECK(r->status == 404);
    r = c.Get("/computeMetadata/v1/instance/name?alt=json", gce_headers);
    REQUIRE(r);
    CHECK(r->body == "\"vm0\"");
    r = c.Get("/computeMetadata/v1/instance/?recursive=true", gce_headers);
    REQUIRE(r);
    CHECK(str(json(r->body)["scheduling"]["onHostMaintenance"]) == "MIGRATE");
}

TEST_CASE("forewarn-emulator: wait_for_change, last_etag and timeout_sec", "[emulator][gce]") {
    emulator_process emu;
    auto c = client_for(emu);
    auto r = c.Get("/computeMetadata/v1/instance/maintenance-event", gce_headers);
    REQUIRE(r);
    const std::string etag = r->get_header_value("ETag");

    // a different last_etag answers at once
    r = c.Get("/computeMetadata/v1/instance/maintenance-event?wait_for_change=true&last_etag=0", gce_headers);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->get_header_value("ETag") == etag);

    // the same ETag and timeout_sec=1: the unchanged value comes back after about a second
    auto t0 = std::chrono::steady_clock::now();
    r = c.Get(("/computeMetadata/v1/instance/maintenance-event?wait_for_change=true&timeout_sec=1&last_etag=" + etag).c_str(),
              gce_headers);
    auto waited = std::chrono::steady_clock::now() - t0;
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == "NONE");
    CHECK(waited >= 900ms);
    CHECK(waited < 15s);

    // a change made through the control API ends a hanging GET with the new value and ETag
    auto hanging = std::async(std::launch::async, [&] {
        auto hc = client_for(emu);
        return hc.Get(("/computeMetadata/v1/instance/maintenance-event?wait_for_change=true&last_etag=" + etag).c_str(),
                      gce_headers);
    });
    CHECK(hanging.wait_for(300ms) == std::future_status::timeout);  // it hangs
    auto set = c.Post("/emulator/v1/gce", R"({"instance/maintenance-event":"MIGRATE_ON_HOST_MAINTENANCE"})", "application/json");
    REQUIRE(set);
    CHECK(set->status == 200);
    REQUIRE(hanging.wait_for(10s) == std::future_status::ready);
    auto changed = hanging.get();
    REQUIRE(changed);
    CHECK(changed->body == "MIGRATE_ON_HOST_MAINTENANCE");
    CHECK(changed->get_header_value("ETag") != etag);
}

TEST_CASE("forewarn-emulator: IMDS's 5 requests/s limit is on by default", "[emulator][azure]") {
    emulator_process emu;
    auto c = client_for(emu);
    int limited = 0;
    for (int i = 0; i < 8; ++i) {
        auto r = c.Get(azure_path, azure_headers);
        REQUIRE(r);
        if (r->status == 429) ++limited;
    }
    CHECK(limited >= 1);  // 8 requests cannot all fit in the window of 5 per second
    CHECK(limited <= 3);
}

TEST_CASE("forewarn-emulator: faults on the wire", "[emulator][fault]") {
    emulator_process emu({"--rate-limit", "0"});
    auto c = client_for(emu);
    auto post = [&](const char* body) {
        auto r = c.Post("/emulator/v1/faults", body, "application/json");
        REQUIRE(r);
        REQUIRE(r->status == 200);
    };
    post(R"({"kind":"status","status":503,"count":2,"service":"azure"})");
    CHECK(c.Get(azure_path, azure_headers)->status == 503);
    CHECK(c.Get(azure_path, azure_headers)->status == 503);
    CHECK(c.Get(azure_path, azure_headers)->status == 200);

    post(R"({"kind":"close_mid_body","bytes":5})");
    auto cut = c.Get(azure_path, azure_headers);
    CHECK_FALSE(cut);  // the connection closed 5 bytes into a longer body

    post(R"({"kind":"stall","duration":"3s"})");
    httplib::Client impatient("127.0.0.1", emu.port());
    impatient.set_read_timeout(0, 300000);
    auto t0 = std::chrono::steady_clock::now();
    auto stalled = impatient.Get(azure_path, azure_headers);
    CHECK_FALSE(stalled);
    CHECK(std::chrono::steady_clock::now() - t0 < 3s);  // gave up on its own timeout, not the stall's end

    post(R"({"kind":"empty_body"})");
    auto empty = c.Get(azure_path, azure_headers);
    REQUIRE(empty);
    CHECK(empty->status == 200);
    CHECK(empty->body.empty());
}

TEST_CASE("forewarn-emulator: forewarn's Azure client reads, approves and identifies itself", "[emulator][azure]") {
    emulator_process emu({"--scenario", scenario_file("live_migration"), "--speed", "1"});
    auto c = client_for(emu);
    auto added = c.Post("/emulator/v1/azure/events", R"({"EventId":"E-1","EventType":"Reboot","Resources":["WestNO_0"]})",
                        "application/json");
    REQUIRE(added);
    REQUIRE(added->status == 200);

    forewarn::azure::client_options o;
    o.endpoint = emu.base_url();
    o.rate_limit = false;
    forewarn::azure::scheduled_events_client client(o);
    auto doc = client.fetch();
    REQUIRE(doc.has_value());
    REQUIRE(doc->find("E-1"));
    CHECK(doc->find("E-1")->status == forewarn::event_status::scheduled);
    REQUIRE(client.approve({"E-1"}).has_value());
    doc = client.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->find("E-1")->status == forewarn::event_status::started);
    auto who = client.identity();
    REQUIRE(who.has_value());
    CHECK(who->name == "WestNO_0");

    auto log = json(c.Get("/emulator/v1/requests")->body);
    int azure_requests = 0;
    for (const auto& req : log["requests"].GetArray()) {
        if (str(req["service"]) != "azure") continue;
        ++azure_requests;
        bool metadata = false, forwarded = false;
        for (const auto& h : req["headers"].GetArray()) {
            if (forewarn::detail::iequals(str(h[0]), "Metadata") && str(h[1]) == "true") metadata = true;
            if (forewarn::detail::iequals(str(h[0]), "X-Forwarded-For")) forwarded = true;
        }
        CHECK(metadata);
        CHECK_FALSE(forwarded);
    }
    CHECK(azure_requests >= 4);
    auto state = json(c.Get("/emulator/v1/state")->body);
    bool approved = false;
    for (const auto& e : state["events"].GetArray())
        if (str(e["EventId"]) == "E-1") approved = str(e["approved_by"]) == "WestNO_0";
    CHECK(approved);
}

TEST_CASE("forewarn-emulator: a token PUT with no body and no Content-Length, as AWS's documentation sends it",
          "[emulator][aws]") {
    // `curl -X PUT http://169.254.169.254/latest/api/token -H "X-aws-ec2-metadata-token-ttl-seconds: 21600"`
    // sends neither Content-Length nor a body: the body is empty (RFC 9112, 6.3), not an error.
    emulator_process emu({"--quiet"});
    auto ask = [&](const std::string& head) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        REQUIRE(fd >= 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<std::uint16_t>(emu.port()));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
        REQUIRE(forewarn_test::send_all(fd, head));
        const std::string answer = forewarn_test::read_request_head(fd);  // reads up to the end of the header block
        ::close(fd);
        return answer;
    };
    const std::string with_ttl = ask("PUT /latest/api/token HTTP/1.1\r\nHost: 169.254.169.254\r\n"
                                     "X-aws-ec2-metadata-token-ttl-seconds: 21600\r\nConnection: close\r\n\r\n");
    CHECK(with_ttl.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(with_ttl.find("X-aws-ec2-metadata-token-ttl-seconds: 21600") != std::string::npos);
    const std::string without_ttl = ask("PUT /latest/api/token HTTP/1.1\r\nHost: 169.254.169.254\r\nConnection: close\r\n\r\n");
    CHECK(without_ttl.rfind("HTTP/1.1 400", 0) == 0);  // the emulator's own rule, not an empty-body error
}

TEST_CASE("forewarn-emulator: time scale runs 15 minutes of notice in well under a minute", "[emulator]") {
    // live_migration: a Freeze at 10 s with 15 min notice. At speed 1000 NotBefore is ~0.9 s away.
    emulator_process emu({"--scenario", scenario_file("live_migration"), "--speed", "1000"});
    CHECK(emu.wait_for_output("Scheduled for [WestNO_0, WestNO_1]", 10s));
    CHECK(emu.wait_for_output("Scheduled -> Started (NotBefore passed)", 30s));
    CHECK(emu.wait_for_output("removed (completed)", 30s));
}

TEST_CASE("forewarn-emulator stops cleanly on SIGINT and SIGTERM, even with a GET hanging", "[emulator]") {
    for (int sig : {SIGINT, SIGTERM}) {
        emulator_process emu;
        auto hanging = std::async(std::launch::async, [&] {
            auto hc = client_for(emu);
            return hc.Get("/computeMetadata/v1/instance/preempted?wait_for_change=true", gce_headers);
        });
        CHECK(hanging.wait_for(200ms) == std::future_status::timeout);
        const int status = emu.stop(sig, 10s);
        CHECK(status != -1);  // not killed
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        REQUIRE(hanging.wait_for(10s) == std::future_status::ready);
        CHECK(emu.output().back() == "stopped");
    }
}

TEST_CASE("forewarn-emulator refuses bad arguments and scenario files", "[emulator]") {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--scenario", "/nonexistent.json"}, {"--speed", "0"}, {"--speed", "fast"},
          {"--rate-limit", "-1"}, {"--bogus"}, {"--speed"}}) {
        INFO(args.front());
        CHECK_THROWS_WITH(emulator_process(args, emulator_process::default_program(), 5s),
                          Catch::Contains("did not report its port"));
    }
}

TEST_CASE("forewarn-emulator: the control API moves the real-time clock ahead", "[emulator][azure]") {
    emulator_process emu({"--scenario", scenario_file("cancelled_maintenance"), "--speed", "1", "--rate-limit", "0"});
    auto c = client_for(emu);
    // the Redeploy appears at 10 s and Azure cancels it at 4 min: jump over both
    auto r = c.Post("/emulator/v1/advance", R"({"by":"10s"})", "application/json");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    auto doc = json(c.Get(azure_path, azure_headers)->body);
    REQUIRE(doc["Events"].Size() == 1);
    CHECK(str(doc["Events"][0]["EventType"]) == "Redeploy");
    CHECK(str(doc["Events"][0]["EventStatus"]) == "Scheduled");
    REQUIRE(c.Post("/emulator/v1/advance", R"({"by":"4m"})", "application/json"));
    doc = json(c.Get(azure_path, azure_headers)->body);
    CHECK(doc["Events"].Size() == 0);
    CHECK(emu.wait_for_output("removed (cancelled)", 5s));
    auto state = json(c.Get("/emulator/v1/state")->body);
    CHECK(state["time_ms"].GetInt64() >= 250000);
    CHECK(str(state["events"][0]["ended"]) == "cancelled");
}
