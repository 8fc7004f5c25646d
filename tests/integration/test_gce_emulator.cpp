// SPDX-License-Identifier: MIT
// gce::metadata_client and detect_cloud end to end: curl_transport against forewarn-emulator.
#include <forewarn/curl_transport.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/gce/metadata_client.hpp>

#include "catch.hpp"

#if defined(FOREWARN_EMULATOR_PATH)

#include "emulator_process.hpp"

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <optional>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using forewarn::cloud;
using forewarn::document;
using forewarn::errc;
using forewarn::event_type;
using forewarn::result;
namespace gce = forewarn::gce;
using steady = std::chrono::steady_clock;

namespace {

gce::client_options emulator_options(const forewarn_test::emulator_process& emu) {
    gce::client_options o;
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

// The emulator logs a request when it answers, so a test cannot see a watch start hanging. A
// short pause lets it get there before the change; if it has not, last_etag still makes the
// watch return at once, so the assertions hold either way (only the latency figure would lie).
void let_watches_hang() { std::this_thread::sleep_for(300ms); }

}  // namespace

TEST_CASE("emulator: fetch, identity and a change of either key during wait_for_change", "[gce][emulator]") {
    const std::string key = GENERATE(std::string("instance/maintenance-event"), std::string("instance/preempted"));
    forewarn_test::emulator_process emu({"--quiet"});
    gce::metadata_client c(emulator_options(emu));
    auto id = c.identity();
    REQUIRE(id);
    CHECK_FALSE(id->name.empty());
    auto first = c.fetch();
    REQUIRE(first);
    CHECK(first->events.empty());

    auto pending = std::async(std::launch::async, [&] {
        auto r = c.wait_for_change(*first, 60s);
        return std::make_pair(std::move(r), steady::now());
    });
    let_watches_hang();
    const auto changed_at = steady::now();
    const std::string value = key == "instance/preempted" ? "TRUE" : "MIGRATE_ON_HOST_MAINTENANCE";
    REQUIRE(control(emu, "gce", "{\"" + key + "\":\"" + value + "\"}"));
    if (pending.wait_for(20s) != std::future_status::ready) c.cancel();
    auto [next, returned_at] = pending.get();
    REQUIRE(next);
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].type == (key == "instance/preempted" ? event_type::preempted : event_type::live_migrate));
    CHECK(next->events[0].affects(id->name));
    const double ms = std::chrono::duration<double, std::milli>(returned_at - changed_at).count();
    CHECK(ms < 10000);
    std::printf("gce emulator: change of %s reached the caller %.2f ms after the control POST was sent\n", key.c_str(), ms);
}

TEST_CASE("emulator: a change between two calls is not lost", "[gce][emulator]") {
    forewarn_test::emulator_process emu({"--quiet"});
    gce::metadata_client c(emulator_options(emu));
    auto first = c.fetch();
    REQUIRE(first);
    REQUIRE(control(emu, "gce", R"({"instance/maintenance-event":"TERMINATE_ON_HOST_MAINTENANCE"})"));
    const auto start = steady::now();
    auto next = c.wait_for_change(*first, 60s);
    REQUIRE(next);
    CHECK(steady::now() - start < 10s);
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].type == event_type::host_terminate);
}

TEST_CASE("emulator: a 503 mid-watch is retried; timeout_sec is honoured", "[gce][emulator]") {
    forewarn_test::emulator_process emu({"--quiet"});
    gce::metadata_client c(emulator_options(emu));
    auto first = c.fetch();
    REQUIRE(first);
    REQUIRE(control(emu, "faults", R"({"kind":"status","status":503,"service":"gce","path":"maintenance-event","count":1})"));
    const auto start = steady::now();
    auto same = c.wait_for_change(*first, 1s);
    const double waited = std::chrono::duration<double, std::milli>(steady::now() - start).count();
    REQUIRE(same);
    CHECK(*same == *first);
    CHECK(waited >= 900);
    CHECK(waited < 10000);
    std::printf("gce emulator: wait_for_change(timeout_sec=1), one 503 retried, returned after %.0f ms\n", waited);
}

TEST_CASE("emulator: cancel ends wait_for_change promptly", "[gce][emulator]") {
    forewarn_test::emulator_process emu({"--quiet"});
    gce::metadata_client c(emulator_options(emu));
    auto first = c.fetch();
    REQUIRE(first);
    auto pending = std::async(std::launch::async, [&] {
        auto r = c.wait_for_change(*first, 60s);
        return std::make_pair(std::move(r), steady::now());
    });
    let_watches_hang();
    const auto cancelled_at = steady::now();
    c.cancel();
    REQUIRE(pending.wait_for(20s) == std::future_status::ready);
    auto [r, returned_at] = pending.get();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::cancelled);
    const double ms = std::chrono::duration<double, std::milli>(returned_at - cancelled_at).count();
    CHECK(ms < 5000);
    std::printf("gce emulator: cancel() ended wait_for_change in %.2f ms\n", ms);
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

#endif  // FOREWARN_EMULATOR_PATH
