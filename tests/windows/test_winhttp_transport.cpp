// SPDX-License-Identifier: MIT
// winhttp_transport and the clients over it (the Windows default), against forewarn-emulator
// running natively on loopback (tests/windows/run.sh passes its address in FOREWARN_EMULATOR_URL).
#include <forewarn/forewarn.hpp>

#include "catch.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <type_traits>

namespace test_winhttp_transport {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::errc;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::winhttp_transport;

namespace {

std::string emulator() {
    const char* url = std::getenv("FOREWARN_EMULATOR_URL");
    REQUIRE(url != nullptr);  // run through tests/windows/run.sh, which starts the emulator
    return url;
}

http_request get(const std::string& path, std::chrono::milliseconds timeout = 5s) {
    http_request r;
    r.url = emulator() + path;
    r.timeout = timeout;
    return r;
}

// A control-API call (POST with a JSON body, or DELETE as the emulator spells it).
void control(const std::string& route, const std::string& body, bool del = false) {
    winhttp_transport t;
    http_request r = get("/emulator/v1/" + route);
    r.method = http_method::post;
    r.body = body;
    r.headers.push_back({"Content-Type", "application/json"});
    if (del) r.headers.push_back({"X-Http-Method", "DELETE"});
    auto a = t.send(r);
    REQUIRE(a);
    INFO(a->body);
    REQUIRE(a->status / 100 == 2);
}

const std::string azure_path = "/metadata/scheduledevents?api-version=2020-07-01";

}  // namespace

TEST_CASE("the default transport on Windows is WinHTTP") {
    STATIC_REQUIRE(std::is_same_v<forewarn::default_transport, winhttp_transport>);
    STATIC_REQUIRE(std::is_same_v<forewarn::azure::scheduled_events_client::transport_type, winhttp_transport>);
}

TEST_CASE("a GET reads status, headers and body, and the connection is kept alive") {
    control("reset", "{}");
    winhttp_transport t;
    for (int i = 0; i < 3; ++i) {
        auto r = get(azure_path);
        r.headers.push_back({"Metadata", "true"});
        auto a = t.send(r);
        REQUIRE(a);
        CHECK(a->status == 200);
        CHECK(a->body.find("\"DocumentIncarnation\"") != std::string::npos);
        CHECK(a->header("Date") != nullptr);
        CHECK(a->header("content-type") != nullptr);  // names compare case-insensitively
    }
    // Kept alive: at most one new connection for the three (Wine shares its pool between the
    // sessions of a process, so one opened by an earlier transport may serve these: 0).
    CHECK(t.connections_opened() <= 1);
}

TEST_CASE("a PATCH carries its body and its name") {
    control("reset", "{}");
    winhttp_transport t;
    http_request r = get("/forewarn-test/patch");
    r.method = http_method::patch;
    r.body = R"({"spec":{"unschedulable":true}})";
    r.headers.push_back({"Content-Type", "application/merge-patch+json"});
    auto a = t.send(r);
    REQUIRE(a);  // whatever status: the emulator's request log says what arrived
    auto log = t.send(get("/emulator/v1/requests"));
    REQUIRE(log);
    INFO(log->body);
    CHECK(log->body.find(R"("method":"PATCH")") != std::string::npos);
    CHECK(log->body.find(R"(unschedulable)") != std::string::npos);
}

TEST_CASE("an error status is an answer, not a failure") {
    winhttp_transport t;
    auto a = t.send(get(azure_path));  // no Metadata: true
    REQUIRE(a);
    CHECK(a->status == 400);
}

TEST_CASE("the body cap: by Content-Length, and while reading") {
    control("reset", "{}");
    winhttp_transport t;
    auto r = get(azure_path);
    r.headers.push_back({"Metadata", "true"});
    r.max_body = 10;
    auto a = t.send(r);
    REQUIRE_FALSE(a);
    CHECK(a.error().code == errc::body_too_large);
}

TEST_CASE("a server that closes mid-body is a transport error") {
    control("reset", "{}");
    control("faults", R"({"kind":"close_mid_body","service":"azure","bytes":5})");
    winhttp_transport t;
    auto r = get(azure_path);
    r.headers.push_back({"Metadata", "true"});
    auto a = t.send(r);
    REQUIRE_FALSE(a);
    CHECK(a.error().code == errc::transport);
    control("faults", "{}", true);
}

TEST_CASE("a refused connection, a bad URL, a forbidden header: clear errors") {
    winhttp_transport t;
    http_request refused;
    refused.url = "http://127.0.0.1:1/";
    refused.timeout = 3s;
    auto a = t.send(refused);
    REQUIRE_FALSE(a);
    CHECK((a.error().code == errc::transport || a.error().code == errc::timeout));
    CHECK(a.error().message.find("127.0.0.1:1") != std::string::npos);

    http_request ftp;
    ftp.url = "ftp://127.0.0.1/";
    CHECK(t.send(ftp).error().code == errc::invalid_argument);
    auto xff = get("/");
    xff.headers.push_back({"X-Forwarded-For", "1.2.3.4"});
    CHECK(t.send(xff).error().code == errc::invalid_argument);
    auto bad_value = get("/");
    bad_value.headers.push_back({"Metadata", "true\r\nInjected: 1"});
    CHECK(t.send(bad_value).error().code == errc::invalid_argument);
}

TEST_CASE("a delayed answer past the total timeout is errc::timeout") {
    control("reset", "{}");
    control("faults", R"({"kind":"delay","duration":"5s","service":"azure"})");
    winhttp_transport t;
    auto r = get(azure_path, 500ms);
    r.headers.push_back({"Metadata", "true"});
    auto a = t.send(r);
    REQUIRE_FALSE(a);
    CHECK(a.error().code == errc::timeout);
    control("faults", "{}", true);
}

TEST_CASE("a hanging GET longer than the connect timeout is not cut by it") {
    control("reset", "{}");
    winhttp_transport t;
    auto first = t.send(get("/computeMetadata/v1/instance/maintenance-event"));
    REQUIRE(first);
    auto r = get("/computeMetadata/v1/instance/maintenance-event?wait_for_change=true&timeout_sec=3", 10s);
    r.headers.push_back({"Metadata-Flavor", "Google"});
    r.connect_timeout = 1s;
    auto a = t.send(r);  // the emulator answers after 3 s with the same value
    INFO((a ? std::string() : a.error().describe()));
    REQUIRE(a);
    CHECK(a->status == 200);
}

TEST_CASE("cancel() ends a 60 s hanging GET at once, and the transport may go right after") {
    control("reset", "{}");
    auto t = std::make_unique<winhttp_transport>();
    auto r = get("/computeMetadata/v1/instance/maintenance-event?wait_for_change=true&timeout_sec=60", 70s);
    r.headers.push_back({"Metadata-Flavor", "Google"});
    // The first answer comes at once (no ETag yet): ask it, then hang on its ETag.
    auto first = t->send(get("/computeMetadata/v1/instance/maintenance-event"));
    REQUIRE(first);
    auto hang = std::async(std::launch::async, [&] { return t->send(r); });
    REQUIRE(hang.wait_for(500ms) == std::future_status::timeout);  // it hangs
    const auto asked = std::chrono::steady_clock::now();
    t->cancel();
    REQUIRE(hang.wait_for(30s) == std::future_status::ready);  // not the server's 60 s
    const auto took = std::chrono::steady_clock::now() - asked;
    auto a = hang.get();
    REQUIRE_FALSE(a);
    CHECK(a.error().code == errc::cancelled);
    std::printf("cancel() of a hanging GET returned after %.1f ms\n",
                std::chrono::duration<double, std::milli>(took).count());
    // Sticky until reset().
    CHECK(t->send(get(azure_path)).error().code == errc::cancelled);
    t->reset();
    // WinHTTP's late callbacks for the closed request find their own state, not the transport.
    t.reset();
    winhttp_transport next;
    auto again = get(azure_path);
    again.headers.push_back({"Metadata", "true"});
    CHECK(next.send(again));
}

TEST_CASE("a program that names no transport approves its event on Windows") {
    control("reset", "{}");
    control("azure/events", R"({"EventId":"WIN-1","EventType":"Reboot","notice":"15m","Resources":["vm0"]})");
    forewarn::azure::client_options o;
    o.endpoint = emulator();
    o.self_name = "vm0";
    forewarn::azure::scheduled_events_client client(o);  // no transport named: WinHTTP
    auto doc = client.fetch();
    REQUIRE(doc);
    REQUIRE(doc->events.size() == 1);
    CHECK(doc->events[0].id == "WIN-1");
    REQUIRE(client.approve({"WIN-1"}));

    winhttp_transport t;
    auto state = t.send(get("/emulator/v1/state"));
    REQUIRE(state);
    INFO(state->body);
    CHECK(state->body.find("\"approved_by\"") != std::string::npos);
    auto after = client.fetch();
    REQUIRE(after);
    REQUIRE(after->events.size() == 1);
    CHECK(after->events[0].status == forewarn::event_status::started);
}

}  // namespace test_winhttp_transport
