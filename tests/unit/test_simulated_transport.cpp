// SPDX-License-Identifier: MIT
// testing::simulated_transport: the scenario engine behind the transport interface, driven by
// forewarn's own Azure and GCE clients. Time moves only by advance(); nothing sleeps.
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/testing/simulated_transport.hpp>

#include "catch.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace test_simulated_transport {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::errc;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::http_request;
using forewarn::testing::azure_event_spec;
using forewarn::testing::fault_spec;
using forewarn::testing::scenario;
using forewarn::testing::scenario_config;
using forewarn::testing::simulated_transport;
namespace azure = forewarn::azure;

namespace {

std::shared_ptr<scenario> make_scenario() {
    scenario_config c;
    c.rate_limit = 0;
    c.vms[0].name = "WestNO_0";
    c.vms.push_back({});
    c.vms[1].name = "WestNO_1";
    return std::make_shared<scenario>(c);
}

azure::client_options azure_options() {
    azure::client_options o;
    o.endpoint = "http://169.254.169.254";
    o.rate_limit = false;
    o.retry.max_attempts = 3;
    o.retry.initial_backoff = 1ms;
    o.retry.max_backoff = 2ms;
    return o;
}

/**
 * Sends `r` on a thread, advances the clock by `before` (the send must still be waiting: it is
 * checked) and then by `last`, and returns the send's result.
 */
forewarn::result<forewarn::http_response> send_after(forewarn::testing::manual_clock& clock, simulated_transport& t,
                                                    const http_request& r, std::chrono::milliseconds before,
                                                    std::chrono::milliseconds last) {
    std::atomic<bool> done{false};
    forewarn::result<forewarn::http_response> got = forewarn::error(errc::transport, "not sent");
    clock.thread_started();
    std::thread th([&] {
        got = t.send(r);
        done = true;
        clock.thread_ended();
    });
    REQUIRE(clock.wait_idle());
    REQUIRE(clock.advance_and_wait(before));
    CHECK_FALSE(done);
    REQUIRE(clock.advance_and_wait(last));
    th.join();
    return got;
}

http_request azure_get() {
    http_request r;
    r.url = "http://169.254.169.254/metadata/scheduledevents?api-version=2020-07-01";
    r.headers.push_back({"Metadata", "true"});
    return r;
}

}  // namespace

static_assert(forewarn::is_transport_v<simulated_transport>);

TEST_CASE("the Azure client follows a Freeze from Scheduled through approval to removal", "[simulated_transport][azure]") {
    auto s = make_scenario();
    simulated_transport t(s);
    azure::basic_scheduled_events_client<simulated_transport> client(azure_options(), t);

    auto doc = client.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->events.empty());
    CHECK(doc->incarnation == "1");

    azure_event_spec spec;
    spec.resources = {"WestNO_0", "WestNO_1"};
    const std::string id = s->add_azure_event(spec);
    doc = client.fetch();
    REQUIRE(doc.has_value());
    REQUIRE(doc->events.size() == 1);
    CHECK(doc->events[0].id == id);
    CHECK(doc->events[0].type == event_type::freeze);
    CHECK(doc->events[0].status == event_status::scheduled);
    REQUIRE(doc->events[0].not_before.has_value());
    CHECK(*doc->events[0].not_before == s->wall_epoch() + 15min);
    CHECK(doc->events[0].affects("WestNO_1"));

    auto who = client.identity();
    REQUIRE(who.has_value());
    CHECK(who->name == "WestNO_0");

    REQUIRE(client.approve({id}).has_value());
    doc = client.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->events[0].status == event_status::started);
    CHECK_FALSE(doc->events[0].not_before.has_value());
    CHECK(doc->incarnation == "3");

    s->advance(5s);
    doc = client.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->events.empty());

    // every request carried Metadata: true and no X-Forwarded-For
    for (const auto& r : s->requests()) {
        INFO(r.target);
        REQUIRE(forewarn::find_header(r.headers, "Metadata"));
        CHECK(*forewarn::find_header(r.headers, "Metadata") == "true");
        CHECK_FALSE(forewarn::find_header(r.headers, "X-Forwarded-For"));
    }
}

TEST_CASE("per-VM identity: the same scenario seen from another VM", "[simulated_transport][azure]") {
    auto s = make_scenario();
    azure::basic_scheduled_events_client<simulated_transport> second(azure_options(), simulated_transport(s, "WestNO_1"));
    auto who = second.identity();
    REQUIRE(who.has_value());
    CHECK(who->name == "WestNO_1");
    // an approval by one VM starts the event for all
    azure_event_spec spec;
    spec.resources = {"WestNO_0", "WestNO_1"};
    const std::string id = s->add_azure_event(spec);
    REQUIRE(second.approve({id}).has_value());
    azure::basic_scheduled_events_client<simulated_transport> first(azure_options(), simulated_transport(s));
    auto doc = first.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->events[0].status == event_status::started);
}

TEST_CASE("retryable faults are absorbed by the client's retries, others surface", "[simulated_transport][azure][fault]") {
    auto s = make_scenario();
    azure::basic_scheduled_events_client<simulated_transport> client(azure_options(), simulated_transport(s));
    fault_spec f;
    f.status = 503;
    f.count = 2;
    s->inject_fault(f);
    CHECK(client.fetch().has_value());  // two 503s, then 200

    fault_spec bad;
    bad.what = fault_spec::kind::malformed_json;
    s->inject_fault(bad);
    auto doc = client.fetch();
    REQUIRE_FALSE(doc.has_value());
    CHECK(doc.error().code == errc::parse_error);

    fault_spec empty;
    empty.what = fault_spec::kind::empty_body;
    s->inject_fault(empty);
    doc = client.fetch();
    REQUIRE_FALSE(doc.has_value());
    CHECK(doc.error().code == errc::empty_body);
}

TEST_CASE("fault directives become transport errors after the time they take on the clock", "[simulated_transport][fault]") {
    forewarn::testing::manual_clock clock;
    auto s = std::make_shared<scenario>(scenario_config{}, clock);
    simulated_transport t(s);
    http_request r = azure_get();
    r.timeout = 5s;

    fault_spec close;
    close.what = fault_spec::kind::close_mid_body;
    s->inject_fault(close);
    auto res = t.send(r);  // no delay: at once
    REQUIRE_FALSE(res.has_value());
    CHECK(res.error().code == errc::transport);

    fault_spec stall;
    stall.what = fault_spec::kind::stall;
    s->inject_fault(stall);
    res = send_after(clock, t, r, 4999ms, 1ms);  // the request's 5 s timeout, not a moment before
    REQUIRE_FALSE(res.has_value());
    CHECK(res.error().code == errc::timeout);

    fault_spec delay;
    delay.what = fault_spec::kind::delay;
    delay.duration = 4s;
    delay.count = 1;
    s->inject_fault(delay);
    CHECK(send_after(clock, t, r, 3999ms, 1ms).has_value());  // shorter than the timeout: answered after it
    delay.duration = 5s;
    s->inject_fault(delay);
    res = send_after(clock, t, r, 4999ms, 1ms);
    REQUIRE_FALSE(res.has_value());
    CHECK(res.error().code == errc::timeout);

    r.max_body = 10;
    res = t.send(r);
    REQUIRE_FALSE(res.has_value());
    CHECK(res.error().code == errc::body_too_large);
}

TEST_CASE("the slow first call: a short timeout fails, the client's long first-call timeout waits it out", "[simulated_transport][azure]") {
    forewarn::testing::manual_clock clock;
    scenario_config c;
    c.rate_limit = 0;
    c.enablement_delay = 2min;
    auto s = std::make_shared<scenario>(c, clock);
    simulated_transport t(s);
    http_request r = azure_get();
    r.timeout = 10s;
    auto res = send_after(clock, t, r, 9s, 1s);
    REQUIRE_FALSE(res.has_value());
    CHECK(res.error().code == errc::timeout);
    r.timeout = 150s;
    CHECK(send_after(clock, t, r, 1min, 1min).has_value());  // 2 min after the first call
}

TEST_CASE("cancel is sticky across copies and wakes a hanging watch - reset clears it", "[simulated_transport][gce]") {
    auto s = make_scenario();
    simulated_transport t(s);
    simulated_transport copy = t;
    http_request watch;
    watch.url = "http://metadata.google.internal/computeMetadata/v1/instance/maintenance-event?wait_for_change=true";
    watch.headers.push_back({"Metadata-Flavor", "Google"});
    watch.timeout = 1h;
    forewarn::result<forewarn::http_response> got = forewarn::error(errc::transport, "not yet");
    std::thread waiter([&] { got = copy.send(watch); });
    REQUIRE(s->wait_until_hanging(1));
    const auto started = std::chrono::steady_clock::now();
    t.cancel();
    waiter.join();
    CHECK(std::chrono::steady_clock::now() - started < 10s);  // generous: it was woken, not timed out
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error().code == errc::cancelled);
    CHECK(copy.send(azure_get()).error().code == errc::cancelled);
    t.reset();
    CHECK(copy.send(azure_get()).has_value());
}
// The GCE client against the engine (hanging GETs through a live migration) is test_gce_simulated.cpp's.

}  // namespace test_simulated_transport
