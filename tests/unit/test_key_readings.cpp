// SPDX-License-Identifier: MIT
// detail::key_readings (client_base.hpp): each key's last good reading and last error, and the
// document made of them; then the same through a small client of its own (keyed_client.hpp):
// which failures stay a key's own and which fail the document.
#include <forewarn/detail/client_base.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"
#include "keyed_client.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace test_key_readings {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::cloud;
using forewarn::errc;
using forewarn::error;
using forewarn::event;
using forewarn::detail::key_plan;
using forewarn::detail::key_reading;
using forewarn::detail::key_readings;
using forewarn::testing::manual_clock;
using forewarn_test::key_server;
using forewarn_test::keyed_client;
using forewarn_test::next_call;

namespace {

event named(std::string id, std::vector<std::string> resources = {}) {
    event e;
    e.id = std::move(id);
    e.resources = std::move(resources);
    return e;
}

key_reading reading(std::vector<event> events, std::string tag = {},
                    std::optional<std::chrono::system_clock::time_point> service_time = std::nullopt) {
    key_reading r;
    r.events = std::move(events);
    r.tag = std::move(tag);
    r.service_time = service_time;
    return r;
}

std::vector<std::string> ids(const forewarn::document& d) {
    std::vector<std::string> out;
    for (const auto& e : d.events) out.push_back(e.id);
    return out;
}

// Every key was asked (a lambda object: function_ref refers to it, and takes no function pointer).
const auto every_key = [](std::size_t) { return true; };

const std::chrono::system_clock::time_point t1{1700000000s}, t2{1700000100s};

}  // namespace

TEST_CASE("key_readings: the document holds the events in key order, the non-empty tags joined by '/', the first "
          "service time",
          "[key_readings]") {
    key_readings r(3);
    // Kept in another order than the keys': the document is in key order all the same.
    r.keep(2, reading({named("w")}, "t2", t2));
    r.keep(0, reading({named("x")}));
    r.keep(1, reading({named("y"), named("z")}, "t1", t1));
    auto doc = r.compose(cloud::aws, every_key, "");
    REQUIRE(doc);
    CHECK(doc->origin == cloud::aws);
    CHECK(ids(*doc) == std::vector<std::string>{"x", "y", "z", "w"});
    CHECK(doc->incarnation == "t1/t2");  // key 0's empty tag is left out, not an empty part
    REQUIRE(doc->service_time);
    CHECK(*doc->service_time == t1);  // key 0 had none: the first key that has one
    CHECK(doc->key_errors.empty());
}

TEST_CASE("key_readings: events without resources are given the owner - the others keep theirs", "[key_readings]") {
    key_readings r(1);
    r.keep(0, reading({named("mine"), named("theirs", {"vm-9"})}));
    auto doc = r.compose(cloud::gce, every_key, "vm-1");
    REQUIRE(doc);
    REQUIRE(doc->events.size() == 2);
    CHECK(doc->events[0].resources == std::vector<std::string>{"vm-1"});
    CHECK(doc->events[1].resources == std::vector<std::string>{"vm-9"});
    auto anonymous = r.compose(cloud::gce, every_key, "");
    REQUIRE(anonymous);
    CHECK(anonymous->events[0].resources.empty());
}

TEST_CASE("key_readings: a failing key keeps its last good reading, its error in key_errors - the document fails only "
          "when no asked key holds a good one",
          "[key_readings]") {
    key_readings r(2);
    r.keep(0, reading({named("a")}, "ta"));
    r.keep(1, reading({named("b")}, "tb"));
    REQUIRE(r.compose(cloud::aws, every_key, ""));
    r.commit();

    const error broken(errc::http_status, "k1: HTTP 500", 500);
    r.keep(1, broken);
    auto doc = r.compose(cloud::aws, every_key, "");
    REQUIRE(doc);
    CHECK(ids(*doc) == std::vector<std::string>{"a", "b"});  // key 1's last good events
    CHECK(doc->incarnation == "ta/tb");
    REQUIRE(doc->key_errors.size() == 1);
    CHECK(doc->key_errors[0].http_status == 500);

    // Key 0 failing too: nothing good to deliver, the first failing key's error.
    r.keep(0, error(errc::parse_error, "k0: not a list"));
    auto none = r.compose(cloud::aws, every_key, "");
    REQUIRE_FALSE(none);
    CHECK(none.error().code == errc::parse_error);

    // A good key that is not asked (planned off) does not make a document either.
    r.keep(0, reading({named("a")}, "ta"));
    auto off = r.compose(cloud::aws, [](std::size_t k) { return k != 0; }, "");
    REQUIRE_FALSE(off);
    CHECK(off.error().http_status == 500);
    auto on = r.compose(cloud::aws, every_key, "");
    REQUIRE(on);
    CHECK(on->key_errors.size() == 1);
}

TEST_CASE("key_readings: keep says a document is due when a reading differs from the last composed one or a key "
          "starts failing - never for the same again",
          "[key_readings]") {
    key_readings r(1);
    CHECK(r.keep(0, reading({named("a")}, "t1")));
    r.commit();
    CHECK_FALSE(r.keep(0, reading({named("a")}, "t1")));
    CHECK(r.keep(0, reading({named("a")}, "t2")));  // the tag is part of the content
    CHECK(r.keep(0, reading({named("b")}, "t1")));  // so are the events
    CHECK_FALSE(r.keep(0, reading({named("a")}, "t1")));  // compared with the composed one, not the last kept
    CHECK(r.keep(0, error(errc::http_status, "HTTP 500", 500)));   // starts failing: its error is to be heard
    CHECK_FALSE(r.keep(0, error(errc::http_status, "HTTP 502", 502)));  // still failing
    CHECK(r.keep(0, reading({named("a")}, "t1")));  // good again, though the same as composed
}

TEST_CASE("key readings through a client: a status or a body that does not parse is the key's own - its last good "
          "events are delivered with the other keys', its error named",
          "[key_readings]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a", "ta");
    server->set(1, "b", "tb");
    keyed_client<2> c(server, clock, {key_plan::poll(1s), key_plan::poll(1s)});
    REQUIRE(c.fetch());

    for (int status : {500, 400}) {
        INFO(status);
        key_server::key failing;
        failing.status = status;
        server->set(1, failing);
        auto doc = c.fetch();
        REQUIRE(doc);
        CHECK(ids(*doc) == std::vector<std::string>{"a", "b"});
        REQUIRE(doc->key_errors.size() == 1);
        CHECK(doc->key_errors[0].http_status == status);
        CHECK(doc->key_errors[0].url == "http://keys.test/k1?lane=0");
    }
    server->set(1, "!", "tb");
    auto unparsed = c.fetch();
    REQUIRE(unparsed);
    CHECK(ids(*unparsed) == std::vector<std::string>{"a", "b"});
    REQUIRE(unparsed->key_errors.size() == 1);
    CHECK(unparsed->key_errors[0].code == errc::parse_error);

    server->set(1, "b2", "tb2");
    auto healed = c.fetch();
    REQUIRE(healed);
    CHECK(ids(*healed) == std::vector<std::string>{"a", "b2"});
    CHECK(healed->key_errors.empty());
}

TEST_CASE("key readings through a client: a 401, 403 or 429, or a request that never got an answer, fails the "
          "whole document",
          "[key_readings]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a", "ta");
    server->set(1, "b", "tb");
    keyed_client<2> c(server, clock, {key_plan::poll(1s), key_plan::poll(1s)});
    REQUIRE(c.fetch());
    for (int status : {401, 403, 429}) {
        INFO(status);
        key_server::key refused;
        refused.status = status;
        server->set(1, refused);
        auto doc = c.fetch();
        REQUIRE_FALSE(doc);
        CHECK(doc.error().http_status == status);
    }
    server->set(1, "b", "tb");
    c.transport().respond(200, "a");  // key 0
    c.transport().fail(error(errc::timeout, "timed out"));  // key 1
    auto lost = c.fetch();
    REQUIRE_FALSE(lost);
    CHECK(lost.error().code == errc::timeout);
    REQUIRE(c.fetch());
}

TEST_CASE("key readings through a client: a key that starts failing ends its round at once - one that keeps failing "
          "does not end the next",
          "[key_readings]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a", "ta");
    server->set(1, "b", "tb");
    keyed_client<2> c(server, clock, {key_plan::poll(1s), key_plan::poll(4s)});
    REQUIRE(c.next());
    key_server::key failing;
    failing.status = 503;
    server->set(0, failing);
    {
        next_call call(c, clock);
        REQUIRE(clock.wait_idle());  // the call waits on the clock: time moves from here
        REQUIRE(clock.advance_and_wait(1s));
        REQUIRE(call.done());
        auto doc = call.get();
        REQUIRE(doc);
        CHECK(ids(*doc) == std::vector<std::string>{"a", "b"});
        REQUIRE(doc->key_errors.size() == 1);
        CHECK(doc->key_errors[0].http_status == 503);
    }
    next_call call(c, clock);
    REQUIRE(clock.wait_idle());  // the call waits on the clock: time moves from here
    REQUIRE(clock.advance_and_wait(1s));
    CHECK_FALSE(call.done());  // the same failure again is no news
    REQUIRE(clock.advance_and_wait(3s));
    REQUIRE(call.done());  // the round ends when key 1 was asked
    auto doc = call.get();
    REQUIRE(doc);
    CHECK(doc->key_errors.size() == 1);
}

}  // namespace test_key_readings
