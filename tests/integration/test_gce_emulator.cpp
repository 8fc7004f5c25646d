// SPDX-License-Identifier: MIT
// gce::metadata_client and detect_cloud end to end: curl_transport against forewarn-emulator.
#include <forewarn/transport/curl.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/gce/metadata_client.hpp>

#include "catch.hpp"

#if defined(FOREWARN_EMULATOR_PATH)

#include "emulator_process.hpp"

#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <optional>
#include <string>
#include <thread>

namespace test_gce_emulator {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::cloud;
using forewarn::document;
using forewarn::errc;
using forewarn::event_type;
using forewarn::result;
namespace gce = forewarn::gce;

namespace {

gce::client_options emulator_options(const forewarn_test::emulator_process& emu,
                                     std::chrono::seconds watch_timeout = 60s) {
    gce::client_options o;
    o.watch_timeout = watch_timeout;
    o.endpoint = emu.base_url();
    o.rate_limit = false;
    o.retry.initial_backoff = 5ms;
    o.retry.max_backoff = 20ms;
    o.watch_margin = 2s;
    return o;
}

// POST to the emulator's control API; true on 200.
bool control(const forewarn_test::emulator_process& emu, const std::string& route, const std::string& json) {
    httplib::Client cli("127.0.0.1", emu.port());
    auto r = cli.Post(("/emulator/v1/" + route).c_str(), json, "application/json");
    return r && r->status == 200;
}

// Waits (bounded) until the emulator holds `n` hanging GETs, as its state says.
bool wait_hanging(const forewarn_test::emulator_process& emu, int n) {
    httplib::Client cli("127.0.0.1", emu.port());
    for (int i = 0; i < 2000; ++i) {
        auto r = cli.Get("/emulator/v1/state");
        if (r && r->status == 200) {
            const auto at = r->body.find("\"hanging\":");
            if (at != std::string::npos && std::atoi(r->body.c_str() + at + 10) >= n) return true;
        }
        std::this_thread::sleep_for(5ms);
    }
    return false;
}

}  // namespace

TEST_CASE("emulator: identity, a first document, and a change of either key during the hanging GETs", "[gce][emulator]") {
    const std::string key = GENERATE(std::string("instance/maintenance-event"), std::string("instance/preempted"));
    forewarn_test::emulator_process emu({"--quiet"});
    gce::metadata_client c(emulator_options(emu));
    auto id = c.identity();
    REQUIRE(id);
    CHECK_FALSE(id->name.empty());
    auto first = c.next();
    REQUIRE(first);
    CHECK(first->events.empty());

    auto pending = std::async(std::launch::async, [&] { return c.next(); });
    REQUIRE(wait_hanging(emu, 2));  // one hanging GET per key
    const std::string value = key == "instance/preempted" ? "TRUE" : "MIGRATE_ON_HOST_MAINTENANCE";
    REQUIRE(control(emu, "gce", "{\"" + key + "\":\"" + value + "\"}"));
    if (pending.wait_for(20s) != std::future_status::ready) c.cancel();  // a broken watch fails, not hangs
    auto next = pending.get();
    REQUIRE(next);
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].type == (key == "instance/preempted" ? event_type::preempted : event_type::live_migrate));
    CHECK(next->events[0].affects(id->name));
}

TEST_CASE("emulator: upcoming-maintenance over HTTP - read as JSON, then a hanging GET of its own",
          "[gce][emulator][upcoming]") {
    forewarn_test::emulator_process emu({"--quiet"});
    // Set through the control API as the key's value (a JSON string holding the window's JSON).
    auto set_window = [&](const std::string& status) {
        const std::string window = R"({\"type\":\"SCHEDULED\",\"maintenance_status\":\")" + status +
                                   R"(\",\"window_start_time\":\"2026-12-03T10:00:00Z\"})";
        return control(emu, "gce", "{\"instance/upcoming-maintenance\":\"" + window + "\"}");
    };
    REQUIRE(set_window("PENDING"));
    gce::metadata_client c(emulator_options(emu));
    auto first = c.next();
    REQUIRE(first);
    REQUIRE(first->events.size() == 1);
    CHECK(first->events[0].id == "upcoming-maintenance");
    CHECK(first->events[0].status == forewarn::event_status::scheduled);

    auto pending = std::async(std::launch::async, [&] { return c.next(); });
    REQUIRE(wait_hanging(emu, 3));  // maintenance-event, preempted and upcoming-maintenance
    REQUIRE(set_window("ONGOING"));
    if (pending.wait_for(20s) != std::future_status::ready) c.cancel();
    auto next = pending.get();
    REQUIRE(next);
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].status == forewarn::event_status::started);
}

TEST_CASE("emulator: a change between two calls is not lost", "[gce][emulator]") {
    forewarn_test::emulator_process emu({"--quiet"});
    gce::metadata_client c(emulator_options(emu, 600s));
    auto first = c.next();
    REQUIRE(first);
    REQUIRE(control(emu, "gce", R"({"instance/maintenance-event":"TERMINATE_ON_HOST_MAINTENANCE"})"));
    auto next = c.next();  // last_etag: answered at once (else ctest's timeout, long before 600 s, fails it)
    REQUIRE(next);
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].type == event_type::host_terminate);
}

TEST_CASE("emulator: a 503 mid-watch is retried - timeout_sec ends a watch with the same document", "[gce][emulator]") {
    forewarn_test::emulator_process emu({"--quiet"});
    gce::metadata_client c(emulator_options(emu, 1s));
    auto first = c.next();
    REQUIRE(first);
    REQUIRE(control(emu, "faults", R"({"kind":"status","status":503,"service":"gce","path":"maintenance-event","count":1})"));
    auto same = c.next();
    REQUIRE(same);
    CHECK(*same == *first);
}

TEST_CASE("emulator: cancel ends the hanging GETs", "[gce][emulator]") {
    forewarn_test::emulator_process emu({"--quiet"});
    gce::metadata_client c(emulator_options(emu, 600s));
    REQUIRE(c.next());
    auto pending = std::async(std::launch::async, [&] { return c.next(); });
    REQUIRE(wait_hanging(emu, 2));
    c.cancel();
    auto r = pending.get();  // an uncancelled watch holds for 600 s: ctest's timeout fails the test first
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::cancelled);
}

TEST_CASE("emulator: detect_cloud sees both services of the emulator", "[detect][emulator]") {
    forewarn_test::emulator_process emu({"--quiet"});
    forewarn::detect_options o;
    o.azure_endpoint = o.gce_endpoint = emu.base_url();
    auto d = forewarn::detect_cloud(o);
    REQUIRE(d);
    CHECK(d->gce);
    CHECK(d->azure);
    CHECK(d->found == cloud::azure);
    o.probe_azure = false;
    auto g = forewarn::detect_cloud(o);
    REQUIRE(g);
    CHECK(g->found == cloud::gce);
}

}  // namespace test_gce_emulator

#endif  // FOREWARN_EMULATOR_PATH
