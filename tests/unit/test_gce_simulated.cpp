// SPDX-License-Identifier: MIT
// gce::basic_metadata_client against the scenario engine (testing::simulated_transport): the same
// GCE rules as forewarn-emulator, in-process, on a manual clock (no sleeping).
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>

#include "catch.hpp"

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

namespace test_gce_simulated {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::cloud;
using forewarn::document;
using forewarn::errc;
using forewarn::event_type;
using forewarn::result;
using forewarn::testing::scenario;
using forewarn::testing::simulated_transport;
namespace gce = forewarn::gce;

namespace {

using client = gce::basic_metadata_client<simulated_transport>;

gce::client_options sim_options() {
    gce::client_options o;
    o.endpoint = "http://169.254.169.254";
    o.rate_limit = false;
    o.retry.initial_backoff = 1ms;
    o.retry.max_backoff = 2ms;
    return o;
}

gce::client_options sim_options(std::chrono::seconds watch_timeout) {
    auto o = sim_options();
    o.watch_timeout = watch_timeout;
    return o;
}

// Runs next() (after a first document: the hanging GETs) on a thread; a call that hangs where it
// must not is cancelled after a bounded real-time wait, so a broken client fails the test
// instead of hanging it.
struct async_wait {
    explicit async_wait(client& c) : c_(c), f_(std::async(std::launch::async, [&c] { return c.next(); })) {}
    result<document> get() {
        if (f_.wait_for(10s) != std::future_status::ready) {
            c_.cancel();
            FAIL_CHECK("next() did not return");
        }
        return f_.get();
    }
    client& c_;
    std::future<result<document>> f_;
};

}  // namespace

TEST_CASE("simulated: fetch reads both keys - the incarnation is their ETags", "[gce][simulated]") {
    auto s = std::make_shared<scenario>();
    client c(sim_options(), simulated_transport(s));
    auto doc = c.fetch();
    REQUIRE(doc);
    CHECK(doc->origin == cloud::gce);
    CHECK(doc->events.empty());
    CHECK(doc->incarnation ==
          s->gce_etag("instance/maintenance-event") + "/" + s->gce_etag("instance/preempted"));
}

TEST_CASE("simulated: identity comes from the scenario's VM", "[gce][simulated]") {
    auto s = std::make_shared<scenario>();
    client c(sim_options(), simulated_transport(s));
    auto id = c.identity();
    REQUIRE(id);
    CHECK(id->name == s->config().vms[0].name);
    CHECK(id->id == s->config().vms[0].gce_id);
    CHECK_FALSE(id->hostname.empty());
    CHECK_FALSE(id->preemptible);
    CHECK(id->on_host_maintenance == "MIGRATE");
}

TEST_CASE("simulated: next() holds both keys and wakes on either", "[gce][simulated]") {
    const std::string key = GENERATE(std::string("instance/maintenance-event"), std::string("instance/preempted"));
    auto s = std::make_shared<scenario>();
    client c(sim_options(), simulated_transport(s));
    REQUIRE(c.identity());
    auto first = c.fetch();
    REQUIRE(first);
    async_wait w(c);
    REQUIRE(s->wait_until_hanging(2));
    s->set_gce(key, key == "instance/preempted" ? "TRUE" : "MIGRATE_ON_HOST_MAINTENANCE");
    auto next = w.get();
    REQUIRE(next);
    REQUIRE(next->events.size() == 1);
    const auto& e = next->events[0];
    CHECK(e.type == (key == "instance/preempted" ? event_type::preempted : event_type::live_migrate));
    CHECK(e.affects(s->config().vms[0].name));
    CHECK(next->incarnation ==
          s->gce_etag("instance/maintenance-event") + "/" + s->gce_etag("instance/preempted"));
}

TEST_CASE("simulated: timeout_sec passing with no change gives the same snapshot", "[gce][simulated]") {
    auto s = std::make_shared<scenario>();
    client c(sim_options(30s), simulated_transport(s));
    auto first = c.fetch();
    REQUIRE(first);
    s->clear_requests();
    async_wait w(c);
    REQUIRE(s->wait_until_hanging(2));
    s->advance(30s);
    auto same = w.get();
    REQUIRE(same);
    CHECK(*same == *first);
    CHECK(s->requests().size() == 2);  // one hanging GET per key, nothing else
}

TEST_CASE("simulated: a change between two calls is returned at once", "[gce][simulated]") {
    auto s = std::make_shared<scenario>();
    client c(sim_options(), simulated_transport(s));
    auto first = c.fetch();
    REQUIRE(first);
    s->set_gce("instance/maintenance-event", "TERMINATE_ON_HOST_MAINTENANCE");
    async_wait w(c);  // no advance(): only last_etag can make it return
    auto next = w.get();
    REQUIRE(next);
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].type == event_type::host_terminate);
}

TEST_CASE("simulated: a maintenance window from NONE to MIGRATE and back", "[gce][simulated]") {
    auto s = std::make_shared<scenario>();
    client c(sim_options(), simulated_transport(s));
    auto doc = c.fetch();
    REQUIRE(doc);
    forewarn::testing::scenario_step begin;
    begin.what = forewarn::testing::scenario_step::kind::gce_set;
    begin.at = 10s;
    begin.gce_values.emplace_back("instance/maintenance-event", std::string("MIGRATE_ON_HOST_MAINTENANCE"));
    auto end = begin;
    end.at = 70s;
    end.gce_values.clear();
    end.gce_values.emplace_back("instance/maintenance-event", std::string("NONE"));
    s->add_step(begin);
    s->add_step(end);

    async_wait w1(c);
    REQUIRE(s->wait_until_hanging(2));
    s->advance(10s);
    auto during = w1.get();
    REQUIRE(during);
    REQUIRE(during->events.size() == 1);
    CHECK(during->events[0].id == "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE");

    async_wait w2(c);
    REQUIRE(s->wait_until_hanging(2));
    s->advance(60s);  // within the 60 s watch_timeout: the change, not the timeout, answers
    auto after = w2.get();
    REQUIRE(after);
    CHECK(after->events.empty());
}

TEST_CASE("simulated: a 503 on the watch is retried", "[gce][simulated]") {
    auto s = std::make_shared<scenario>();
    client c(sim_options(), simulated_transport(s));
    auto first = c.fetch();
    REQUIRE(first);
    forewarn::testing::fault_spec f;
    f.what = forewarn::testing::fault_spec::kind::status;
    f.status = 503;
    f.service = "gce";
    f.path = "maintenance-event";
    f.count = 1;
    s->inject_fault(f);
    s->clear_requests();
    async_wait w(c);
    REQUIRE(s->wait_until_hanging(2));
    s->set_gce("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE");
    auto next = w.get();
    REQUIRE(next);
    REQUIRE(next->events.size() == 1);
    int maintenance_watches = 0;
    for (const auto& r : s->requests())
        if (r.target.find("maintenance-event?wait_for_change=true") != std::string::npos) ++maintenance_watches;
    CHECK(maintenance_watches == 2);
}

TEST_CASE("simulated: cancel ends the hanging next() - reset makes the client usable", "[gce][simulated]") {
    auto s = std::make_shared<scenario>();
    client c(sim_options(), simulated_transport(s));
    auto first = c.fetch();
    REQUIRE(first);
    async_wait w(c);
    REQUIRE(s->wait_until_hanging(2));
    c.cancel();
    auto r = w.get();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::cancelled);
    c.reset();
    REQUIRE(c.fetch());
}

TEST_CASE("simulated: upcoming-maintenance from the 503 to a watched window to ONGOING to gone",
          "[gce][simulated][upcoming]") {
    auto s = std::make_shared<scenario>();
    REQUIRE(s->set_gce_upcoming("no_notifications"));
    client c(sim_options(30s), simulated_transport(s));
    auto first = c.fetch();
    REQUIRE(first);
    CHECK(first->events.empty());

    // Before the first notification (a 503, no ETag) the key is read with each document only:
    // a window shows up with the next one, here when timeout_sec passes.
    const std::string window = R"({"can_reschedule":"true","maintenance_reasons":["PLANNED_UPDATE"],)"
                               R"("maintenance_status":"PENDING","type":"SCHEDULED",)"
                               R"("window_start_time":"2026-12-03T10:00:00Z","window_end_time":"2026-12-03T14:00:00Z"})";
    REQUIRE(s->set_gce_upcoming(window));
    {
        async_wait w(c);
        REQUIRE(s->wait_until_hanging(2));  // maintenance-event and preempted
        s->advance(30s);
        auto doc = w.get();
        REQUIRE(doc);
        REQUIRE(doc->events.size() == 1);
        const auto& e = doc->events[0];
        CHECK(e.id == "upcoming-maintenance");
        CHECK(e.status == forewarn::event_status::scheduled);
        CHECK(e.affects(s->config().vms[0].name));
        CHECK(doc->incarnation == s->gce_etag("instance/maintenance-event") + "/" + s->gce_etag("instance/preempted") +
                                      "/" + s->gce_etag("instance/upcoming-maintenance"));
    }
    // Now it has an ETag: a hanging GET of its own answers the change at once.
    std::string ongoing = window;
    ongoing.replace(ongoing.find("PENDING"), 7, "ONGOING");
    {
        async_wait w(c);
        REQUIRE(s->wait_until_hanging(3));
        REQUIRE(s->set_gce_upcoming(ongoing));
        auto doc = w.get();
        REQUIRE(doc);
        REQUIRE(doc->events.size() == 1);
        CHECK(doc->events[0].status == forewarn::event_status::started);
    }
    {
        async_wait w(c);
        REQUIRE(s->wait_until_hanging(3));
        REQUIRE(s->set_gce_upcoming("empty"));
        auto doc = w.get();
        REQUIRE(doc);
        CHECK(doc->events.empty());
    }
    CHECK_FALSE(s->set_gce_upcoming("soon"));
    CHECK_FALSE(s->set_gce_upcoming("{not json"));
}

TEST_CASE("simulated: upcoming-maintenance absent (404) is asked once, then never again", "[gce][simulated][upcoming]") {
    auto s = std::make_shared<scenario>();
    client c(sim_options(30s), simulated_transport(s));
    REQUIRE(c.fetch());
    REQUIRE(c.fetch());
    std::size_t asked = 0;
    for (const auto& r : s->requests()) asked += r.target.find("upcoming-maintenance") != std::string::npos;
    CHECK(asked == 1);
}

}  // namespace test_gce_simulated
