// SPDX-License-Identifier: MIT
// forewarn-emulator at the protocol level, over real loopback sockets: start-up line, headers and
// statuses of its services, watch semantics and timeouts, faults on the wire, the control API,
// forewarn's own clients (curl_transport) against it, and a clean stop on SIGINT/SIGTERM.
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/emulator/scenario_file.hpp>

#include "catch.hpp"
#include "emulator_process.hpp"
#include "loopback.hpp"

#include <httplib.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace test_emulator {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

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

// A scenario file of the test's own (a fixed wall_epoch makes the times it answers known), removed
// at scope exit.
struct own_scenario {
    std::string path;
    own_scenario(const std::string& name, const std::string& text)
        : path((std::filesystem::temp_directory_path() /
                ("forewarn-emulator-" + name + "-" + std::to_string(::getpid()) + ".json"))
                   .string()) {
        std::ofstream(path) << text;
    }
    ~own_scenario() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
};

httplib::Result control(httplib::Client& c, const std::string& route, const std::string& body = "{}") {
    return c.Post(("/emulator/v1/" + route).c_str(), body, "application/json");
}

rapidjson::Document state_of(httplib::Client& c) {
    auto r = c.Get("/emulator/v1/state");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    return json(r->body);
}

// A token PUT to `path` with `ttl` in header `ttl_header`.
httplib::Result put_token(httplib::Client& c, const std::string& path, const std::string& ttl_header, const std::string& ttl) {
    return c.Put(path.c_str(), httplib::Headers{{ttl_header, ttl}}, "", "text/plain");
}

const std::string aws_token_path = "/latest/api/token";
const std::string aws_ttl = "X-aws-ec2-metadata-token-ttl-seconds";
const std::string aws_token_header = "X-aws-ec2-metadata-token";
const std::string alibaba_token_path = "/alibaba/latest/api/token";
const std::string alibaba_ttl = "X-aliyun-ecs-metadata-token-ttl-seconds";
const std::string alibaba_token_header = "X-aliyun-ecs-metadata-token";

// A session token of six hours, and the headers that carry it.
httplib::Headers token_headers(httplib::Client& c, const std::string& path, const std::string& ttl_header,
                               const std::string& token_header) {
    auto r = put_token(c, path, ttl_header, "21600");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    return {{token_header, r->body}};
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
        // Refused as a usage error (exit status 2), not a crash: a signal would say so here.
        CHECK_THROWS_WITH(emulator_process(args, emulator_process::default_program(), 5s),
                          Catch::Contains("did not report its port") && Catch::Contains("exited with status 2"));
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

TEST_CASE("forewarn-emulator: AWS's Auto Scaling target lifecycle state and its control route", "[emulator][aws]") {
    emulator_process emu({"--quiet"});
    auto c = client_for(emu);
    const std::string path = "/latest/meta-data/autoscaling/target-lifecycle-state";
    auto r = c.Get(path.c_str());
    REQUIRE(r);
    CHECK(r->status == 401);  // a token is required, as for every AWS path
    auto with = token_headers(c, aws_token_path, aws_ttl, aws_token_header);
    r = c.Get(path.c_str(), with);
    REQUIRE(r);
    CHECK(r->status == 404);  // no state: an instance outside an Auto Scaling group
    CHECK(state_of(c)["aws"]["lifecycle"].IsNull());

    for (const char* state : {"Terminated", "Warmed:Terminated", "InService"}) {
        INFO(state);
        r = control(c, "aws/lifecycle", std::string(R"({"state":")") + state + R"("})");
        REQUIRE(r);
        REQUIRE(r->status == 200);
        r = c.Get(path.c_str(), with);
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK(r->body == state);
        CHECK(r->get_header_value("Content-Type").rfind("text/plain", 0) == 0);
        CHECK(str(state_of(c)["aws"]["lifecycle"]) == state);
    }
    // Only AWS's ten words: anything else is refused, naming "state", and changes nothing.
    for (const char* bad : {R"({"state":"Running"})", R"({"state":"inservice"})", R"({"state":"Warmed:"})", R"({"state":5})",
                            R"({})"}) {
        INFO(bad);
        r = control(c, "aws/lifecycle", bad);
        REQUIRE(r);
        CHECK(r->status == 400);
        CHECK(str(json(r->body)["field"]) == "state");
    }
    CHECK(c.Get(path.c_str(), with)->body == "InService");

    r = c.Delete("/emulator/v1/aws/lifecycle");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(c.Get(path.c_str(), with)->status == 404);
    CHECK(state_of(c)["aws"]["lifecycle"].IsNull());

    // A reset forgets it (and the tokens).
    REQUIRE(control(c, "aws/lifecycle", R"({"state":"Standby"})")->status == 200);
    REQUIRE(control(c, "reset")->status == 200);
    with = token_headers(c, aws_token_path, aws_ttl, aws_token_header);
    CHECK(c.Get(path.c_str(), with)->status == 404);
    CHECK(state_of(c)["aws"]["lifecycle"].IsNull());
}

TEST_CASE("forewarn-emulator: Alibaba's metadata under /alibaba, hardened mode: every GET carries a token",
          "[emulator][alibaba]") {
    emulator_process emu({"--quiet"});
    auto c = client_for(emu);
    const std::string id_path = "/alibaba/latest/meta-data/instance-id";

    // The token: a PUT with a TTL of 1..21600 s; a missing or bad TTL is 400, another method 405.
    auto r = c.Put(alibaba_token_path.c_str(), "", "text/plain");
    REQUIRE(r);
    CHECK(r->status == 400);
    for (const char* ttl : {"0", "21601", "-5", "ten", "60s"}) {
        INFO(ttl);
        r = put_token(c, alibaba_token_path, alibaba_ttl, ttl);
        REQUIRE(r);
        CHECK(r->status == 400);
    }
    r = put_token(c, alibaba_token_path, aws_ttl, "60");  // AWS's TTL header is not Alibaba's
    REQUIRE(r);
    CHECK(r->status == 400);
    r = c.Get(alibaba_token_path.c_str(), httplib::Headers{{alibaba_ttl, "60"}});
    REQUIRE(r);
    CHECK(r->status == 405);
    r = c.Post(alibaba_token_path.c_str(), httplib::Headers{{alibaba_ttl, "60"}}, "", "text/plain");
    REQUIRE(r);
    CHECK(r->status == 405);
    r = put_token(c, alibaba_token_path, alibaba_ttl, "21600");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    CHECK(r->get_header_value("Content-Type").rfind("text/plain", 0) == 0);
    const std::string token = r->body;
    CHECK(token.size() >= 16);
    CHECK(std::all_of(token.begin(), token.end(), [](unsigned char ch) { return std::isgraph(ch) != 0; }));
    const httplib::Headers with{{alibaba_token_header, token}};

    // Without a valid token every GET is 401.
    r = c.Get(id_path.c_str());
    REQUIRE(r);
    CHECK(r->status == 401);
    CHECK(r->body.find("Unauthorized") != std::string::npos);
    CHECK(c.Get(id_path.c_str(), httplib::Headers{{alibaba_token_header, "AQAEAbogus=="}})->status == 401);
    CHECK(c.Get(id_path.c_str(), httplib::Headers{{aws_token_header, token}})->status == 401);  // AWS's header name
    CHECK(c.Get("/alibaba/latest/meta-data/no-such-path")->status == 401);                    // before the 404
    const auto aws = token_headers(c, aws_token_path, aws_ttl, aws_token_header);  // AWS's own tokens are its own
    CHECK(c.Get(id_path.c_str(), httplib::Headers{{alibaba_token_header, aws.begin()->second}})->status == 401);

    // With one: the instance id is the VM's name, repeated slashes merged; other paths 404.
    r = c.Get(id_path.c_str(), with);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == "vm0");
    r = c.Get("//alibaba//latest/meta-data//instance-id", with);
    REQUIRE(r);
    CHECK(r->body == "vm0");
    CHECK(c.Get("/alibaba/latest/meta-data/no-such-path", with)->status == 404);
    CHECK(c.Get("/alibaba/latest/meta-data/instance/spot/termination-time", with)->status == 404);  // no reclaim yet
    CHECK(c.Put(id_path.c_str(), with, "", "text/plain")->status == 405);
    // A proxied request is 403, token or not.
    r = c.Get(id_path.c_str(), httplib::Headers{{alibaba_token_header, token}, {"X-Forwarded-For", "10.0.0.1"}});
    REQUIRE(r);
    CHECK(r->status == 403);

    auto state = state_of(c);
    CHECK(state["alibaba"]["tokens_issued"].GetInt64() == 1);  // the refused PUTs issued nothing
    CHECK(state["aws"]["tokens_issued"].GetInt64() == 1);

    // A token lasts its TTL in scenario time.
    r = put_token(c, alibaba_token_path, alibaba_ttl, "30");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    const httplib::Headers short_lived{{alibaba_token_header, r->body}};
    CHECK(c.Get(id_path.c_str(), short_lived)->status == 200);
    REQUIRE(control(c, "advance", R"({"by":"1m"})")->status == 200);
    CHECK(c.Get(id_path.c_str(), short_lived)->status == 401);
    CHECK(c.Get(id_path.c_str(), with)->status == 200);  // six hours: still good

    // DELETE alibaba/tokens forgets every token; a reset starts the count over.
    r = c.Delete("/emulator/v1/alibaba/tokens");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(c.Get(id_path.c_str(), with)->status == 401);
    CHECK(state_of(c)["alibaba"]["tokens_issued"].GetInt64() == 2);
    REQUIRE(control(c, "reset")->status == 200);
    CHECK(state_of(c)["alibaba"]["tokens_issued"].GetInt64() == 0);
}

TEST_CASE("forewarn-emulator: Alibaba's Spot reclaim time in UTC and its control routes", "[emulator][alibaba]") {
    own_scenario file("alibaba-spot", R"({"wall_epoch": "2015-01-05T17:57:00Z", "vms": [{"name": "i-bp67acfmxazb4p"}]})");
    emulator_process emu({"--quiet", "--scenario", file.path});
    auto c = client_for(emu);
    const std::string path = "/alibaba/latest/meta-data/instance/spot/termination-time";
    const auto with = token_headers(c, alibaba_token_path, alibaba_ttl, alibaba_token_header);
    CHECK(c.Get("/alibaba/latest/meta-data/instance-id", with)->body == "i-bp67acfmxazb4p");
    CHECK(c.Get(path.c_str(), with)->status == 404);
    CHECK(state_of(c)["alibaba"]["spot"].IsNull());

    // Default: reclaimed 5 minutes from now, written as 2015-01-05T18:02:00Z (seconds, 'Z').
    auto r = control(c, "alibaba/spot", "");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    r = c.Get(path.c_str(), with);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->get_header_value("Content-Type").rfind("text/plain", 0) == 0);
    CHECK(r->body.size() == 20);
    CHECK(r->body.rfind("2015-01-05T18:02:", 0) == 0);  // the test runs in its first minute
    CHECK(r->body.back() == 'Z');
    CHECK(str(state_of(c)["alibaba"]["spot"]) == r->body);

    r = control(c, "alibaba/spot", R"({"in":"1h"})");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    CHECK(c.Get(path.c_str(), with)->body.rfind("2015-01-05T18:57:", 0) == 0);
    r = control(c, "alibaba/spot", R"({"in":"soon"})");
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(str(json(r->body)["field"]) == "in");
    CHECK(c.Get(path.c_str(), with)->body.rfind("2015-01-05T18:57:", 0) == 0);  // unchanged

    r = c.Delete("/emulator/v1/alibaba/spot");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(c.Get(path.c_str(), with)->status == 404);
    CHECK(state_of(c)["alibaba"]["spot"].IsNull());
    CHECK(control(c, "alibaba/nothing")->status == 404);

    REQUIRE(control(c, "alibaba/spot")->status == 200);
    REQUIRE(control(c, "reset")->status == 200);  // back to the file: no reclaim
    CHECK(state_of(c)["alibaba"]["spot"].IsNull());
}

TEST_CASE("forewarn-emulator: Tencent's metadata under /tencent: no token, the reclaim time in UTC+8",
          "[emulator][tencent]") {
    // 15:59 UTC: a reclaim two minutes later is past midnight in China Standard Time.
    own_scenario file("tencent-spot", R"({"wall_epoch": "2018-08-18T15:59:00Z",
                                         "vms": [{"name": "ins-r8hr2upy"}, {"name": "ins-second"}]})");
    emulator_process emu({"--quiet", "--scenario", file.path});
    auto c = client_for(emu);
    const std::string id_path = "/tencent/latest/meta-data/instance-id";
    const std::string path = "/tencent/latest/meta-data/spot/termination-time";

    auto r = c.Get(id_path.c_str());
    REQUIRE(r);
    CHECK(r->status == 200);  // no token, no header
    CHECK(r->body == "ins-r8hr2upy");
    CHECK(c.Get(id_path.c_str(), httplib::Headers{{"X-Forewarn-Vm", "ins-second"}})->body == "ins-second");
    CHECK(c.Get("/latest/meta-data/instance-id")->status == 401);  // without the prefix: AWS's path
    CHECK(c.Get(path.c_str())->status == 404);
    CHECK(c.Get("/tencent/latest/meta-data/placement/zone")->status == 404);
    CHECK(c.Post(id_path.c_str(), "", "text/plain")->status == 405);
    CHECK(c.Put(id_path.c_str(), "", "text/plain")->status == 405);
    CHECK(c.Get(id_path.c_str(), httplib::Headers{{"X-Forwarded-For", "10.0.0.1"}})->status == 403);
    CHECK(state_of(c)["tencent"]["spot"].IsNull());

    // Default: two minutes from now. UTC 2018-08-18T16:01:SS is 2018-08-19 00:01:SS in UTC+8.
    r = control(c, "tencent/spot", "");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    r = c.Get(path.c_str());
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->get_header_value("Content-Type").rfind("text/plain", 0) == 0);
    REQUIRE(r->body.size() == 19);
    CHECK(r->body.rfind("2018-08-19 00:01:", 0) == 0);  // the test runs in its first minute
    const std::string seconds = r->body.substr(17);
    CHECK(str(state_of(c)["tencent"]["spot"]) == "2018-08-18T16:01:" + seconds + "Z");  // the state says UTC

    r = control(c, "tencent/spot", R"({"in":"10h"})");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    CHECK(c.Get(path.c_str())->body.rfind("2018-08-19 09:59:", 0) == 0);
    r = control(c, "tencent/spot", R"({"in":"-1m"})");
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(str(json(r->body)["field"]) == "in");

    r = c.Delete("/emulator/v1/tencent/spot");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(c.Get(path.c_str())->status == 404);
    CHECK(state_of(c)["tencent"]["spot"].IsNull());

    REQUIRE(control(c, "tencent/spot")->status == 200);
    REQUIRE(control(c, "reset")->status == 200);
    CHECK(c.Get(path.c_str())->status == 404);
}

TEST_CASE("forewarn-emulator: a fault named alibaba or tencent hits that service only", "[emulator][fault]") {
    emulator_process emu({"--quiet"});
    auto c = client_for(emu);
    const auto aws = token_headers(c, aws_token_path, aws_ttl, aws_token_header);
    const auto alibaba = token_headers(c, alibaba_token_path, alibaba_ttl, alibaba_token_header);
    const char* alibaba_id = "/alibaba/latest/meta-data/instance-id";
    const char* tencent_id = "/tencent/latest/meta-data/instance-id";

    auto r = control(c, "faults", R"({"kind":"status","status":503,"service":"alibaba"})");
    REQUIRE(r);
    REQUIRE(r->status == 200);
    // The other services go first: had the fault hit them, it would be used up (count 1).
    CHECK(c.Get(tencent_id)->status == 200);
    CHECK(c.Get("/latest/meta-data/instance-id", aws)->status == 200);
    CHECK(c.Get("/computeMetadata/v1/instance/id", gce_headers)->status == 200);
    CHECK(c.Get(alibaba_id, alibaba)->status == 503);
    CHECK(c.Get(alibaba_id, alibaba)->status == 200);

    REQUIRE(control(c, "faults", R"({"kind":"status","status":500,"service":"tencent","path":"termination-time"})")->status ==
            200);
    REQUIRE(control(c, "tencent/spot")->status == 200);
    CHECK(c.Get(alibaba_id, alibaba)->status == 200);
    CHECK(c.Get(tencent_id)->status == 200);  // not its path
    CHECK(c.Get("/tencent/latest/meta-data/spot/termination-time")->status == 500);
    CHECK(c.Get("/tencent/latest/meta-data/spot/termination-time")->status == 200);

    r = control(c, "faults", R"({"kind":"status","service":"oracle"})");
    REQUIRE(r);
    CHECK(r->status == 400);  // only the services the emulator runs

    // The request log names each request's service and the fault it met.
    int faulted = 0;
    const auto log = json(c.Get("/emulator/v1/requests")->body);
    for (const auto& req : log["requests"].GetArray()) {
        const std::string target = str(req["target"]), service = str(req["service"]), fault = str(req["fault"]);
        if (target.rfind("/alibaba/", 0) == 0) CHECK(service == "alibaba");
        if (target.rfind("/tencent/", 0) == 0) CHECK(service == "tencent");
        if (fault.empty()) continue;
        ++faulted;
        CHECK(((service == "alibaba" && fault == "status 503") || (service == "tencent" && fault == "status 500")));
    }
    CHECK(faulted == 2);
}

TEST_CASE("forewarn-emulator: a scenario file's aws_lifecycle, alibaba_spot and tencent_spot steps", "[emulator][file]") {
    own_scenario file("new-steps", R"({"wall_epoch": "2018-08-18T04:00:00Z", "steps": [
        {"at": "0s", "aws_lifecycle": {"state": "Warmed:Pending"}},
        {"at": "0s", "alibaba_spot": {"in": "2m"}},
        {"at": "0s", "tencent_spot": {"in": "5m33s"}},
        {"at": "1s", "aws_lifecycle": {"state": "Running"}}]})");
    emulator_process emu({"--scenario", file.path});
    auto c = client_for(emu);
    const auto aws = token_headers(c, aws_token_path, aws_ttl, aws_token_header);
    const auto alibaba = token_headers(c, alibaba_token_path, alibaba_ttl, alibaba_token_header);
    CHECK(c.Get("/alibaba/latest/meta-data/instance/spot/termination-time", alibaba)->body == "2018-08-18T04:02:00Z");
    CHECK(c.Get("/tencent/latest/meta-data/spot/termination-time")->body == "2018-08-18 12:05:33");
    CHECK(str(state_of(c)["tencent"]["spot"]) == "2018-08-18T04:05:33Z");
    // A step the service refuses is logged and changes nothing.
    CHECK(emu.wait_for_output("aws: the scenario's aws/lifecycle step was refused", 10s));
    CHECK(c.Get("/latest/meta-data/autoscaling/target-lifecycle-state", aws)->body == "Warmed:Pending");

    // Each step is read into its service's route; a step that is not an object is refused.
    auto parsed = forewarn::testing::parse_scenario(
        R"({"steps": [{"at": "1s", "alibaba_spot": {}}, {"at": "2s", "tencent_spot": {"in": "1m"}},
                      {"at": "3s", "aws_lifecycle": {"state": "InService"}}]})");
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->steps.size() == 3);
    using kind = forewarn::testing::scenario_step::kind;
    CHECK(parsed->steps[0].what == kind::alibaba);
    CHECK(parsed->steps[0].route == "alibaba/spot");
    CHECK(parsed->steps[1].what == kind::tencent);
    CHECK(parsed->steps[1].route == "tencent/spot");
    CHECK(parsed->steps[2].what == kind::aws);
    CHECK(parsed->steps[2].route == "aws/lifecycle");
    for (const char* bad : {R"({"steps":[{"at":"1s","alibaba_spot":"soon"}]})", R"({"steps":[{"at":"1s","tencent_spot":[]}]})",
                            R"({"steps":[{"at":"1s","aws_lifecycle":"Terminated"}]})"}) {
        INFO(bad);
        auto refused = forewarn::testing::parse_scenario(bad);
        REQUIRE_FALSE(refused.has_value());
        CHECK(refused.error().field.rfind("steps[0]", 0) == 0);
    }
}

}  // namespace test_emulator
