// SPDX-License-Identifier: MIT
// pause_meter on a testing::manual_clock: a jump of time with no look between is a pause the
// monotonic clock saw; a step of the wall clock alone is one the wall clock saw; nothing is
// counted while no event is watched. The poller's use of it (which events, the recover change)
// is tested in test_poller.cpp.
#include <forewarn/poller/pause_meter.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace test_pause_meter {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::pause_meter;
using forewarn::testing::manual_clock;

TEST_CASE("pause_meter: a jump of time with no look between is a pause the monotonic clock saw", "[pause_meter]") {
    manual_clock clock;
    pause_meter m(clock, 100ms);
    REQUIRE(m.watch({"E1"}));
    REQUIRE(clock.wait_idle());
    CHECK(clock.threads() == 1);
    for (int i = 0; i < 5; ++i) REQUIRE(clock.advance_and_wait(100ms));  // on time: nothing late
    REQUIRE(clock.advance_and_wait(3s));  // the VM froze: time moved, nothing ran
    for (int i = 0; i < 3; ++i) REQUIRE(clock.advance_and_wait(100ms));
    auto seen = m.take("E1");
    REQUIRE(seen);
    CHECK(seen->monotonic_gap == 2900ms);  // 3 s after the last look, due 100 ms after it
    CHECK(seen->wall_jump == 0ms);
    CHECK(seen->longest == 2900ms);
    CHECK(seen->seen_by() == "monotonic");
    CHECK(seen->looks == 10);  // the thread's nine, and take()'s last
    CHECK(seen->watched == 3800ms);
    CHECK_FALSE(m.take("E1"));  // taken: forgotten
    m.stop();
    CHECK(clock.threads() == 0);
}

TEST_CASE("pause_meter: the wall clock stepped forward against the monotonic one is a pause the wall clock saw",
          "[pause_meter]") {
    manual_clock clock;
    pause_meter m(clock, 100ms);
    REQUIRE(m.watch({"E1"}));
    REQUIRE(clock.wait_idle());
    REQUIRE(clock.advance_and_wait(100ms));
    clock.step_wall(4s);  // the monotonic clock stood still while paused; time sync catches up
    REQUIRE(clock.advance_and_wait(100ms));
    clock.step_wall(-2s);  // a step back is no pause
    REQUIRE(clock.advance_and_wait(100ms));
    auto seen = m.take("E1");
    REQUIRE(seen);
    CHECK(seen->wall_jump == 4s);
    CHECK(seen->monotonic_gap == 0ms);
    CHECK(seen->longest == 4s);
    CHECK(seen->seen_by() == "wall");
}

TEST_CASE("pause_meter: only watched time counts - each event from its own start, until it is no longer watched",
          "[pause_meter]") {
    manual_clock clock;
    pause_meter m(clock, 100ms);
    CHECK_FALSE(m.take("E1"));  // never watched
    REQUIRE(clock.advance_and_wait(10s));  // nothing watched: no thread, nothing measured
    CHECK(clock.threads() == 0);
    REQUIRE(m.watch({"E1"}));
    REQUIRE(clock.wait_idle());
    REQUIRE(clock.advance_and_wait(1s));  // E1 alone sees a pause of 0.9 s
    REQUIRE(m.watch({"E1", "E2"}));       // E2 begins now: that pause is before it
    REQUIRE(clock.advance_and_wait(100ms));
    REQUIRE(m.watch({"E2"}));  // E1 no longer Started: kept, not looked at any more
    CHECK(m.watching() == 1);
    REQUIRE(clock.advance_and_wait(2s));  // a pause of 1.9 s only E2 lives through
    REQUIRE(m.watch({}));
    CHECK(m.watching() == 0);
    REQUIRE(clock.advance_and_wait(5s));  // watched by nobody: no pause for anyone
    auto e1 = m.take("E1");
    auto e2 = m.take("E2");
    REQUIRE(e1);
    REQUIRE(e2);
    CHECK(e1->longest == 900ms);
    CHECK(e2->longest == 1900ms);
    CHECK(e2->watched == 2100ms);
}

TEST_CASE("pause_meter: take() looks once more first - a pause just before the recover is not lost",
          "[pause_meter]") {
    manual_clock clock;
    pause_meter m(clock, 1s);
    REQUIRE(m.watch({"E1"}));
    REQUIRE(clock.wait_idle());
    clock.advance(5s);  // the meter's thread has not looked yet when the recover comes
    auto seen = m.take("E1");
    REQUIRE(seen);
    CHECK(seen->longest == 4s);
    REQUIRE(clock.wait_idle());
}

TEST_CASE("pause_meter: the time it was stopped is no pause - watch() after stop() looks on from then", "[pause_meter]") {
    manual_clock clock;
    pause_meter m(clock, 100ms);
    REQUIRE(m.watch({"E1", "E2"}));
    REQUIRE(clock.wait_idle());
    REQUIRE(clock.advance_and_wait(100ms));
    m.stop();  // the poller stopped, E1 and E2 still Started
    CHECK(clock.threads() == 0);
    clock.advance(3s);
    CHECK_FALSE(m.take("E2"));  // no thread: a caller's looks are its cadence apart, no measure
    REQUIRE(clock.advance_and_wait(10s));
    REQUIRE(m.watch({"E1"}));  // started again, E1 still Started: the thread again, a new time line
    REQUIRE(clock.wait_idle());
    CHECK(clock.threads() == 1);
    REQUIRE(clock.advance_and_wait(100ms));
    REQUIRE(clock.advance_and_wait(2s));  // a pause after the restart is seen
    auto seen = m.take("E1");
    REQUIRE(seen);
    CHECK(seen->longest == 1900ms);
}

TEST_CASE("pause_meter: the events under way that name this VM (or none) are the ones watched", "[pause_meter]") {
    using forewarn::document;
    using forewarn::event;
    using forewarn::event_status;
    using forewarn::event_type;
    manual_clock clock;
    pause_meter m(clock, 100ms);
    auto make = [](std::string id, event_status s, event_type t, std::vector<std::string> resources) {
        event e;
        e.id = std::move(id);
        e.status = s;
        e.type = t;
        e.resources = std::move(resources);
        return e;
    };
    document d;
    d.events = {make("started-mine", event_status::started, event_type::reboot, {"vm0"}),
                make("started-other", event_status::started, event_type::reboot, {"vm1"}),
                make("started-no-vm", event_status::started, event_type::freeze, {}),
                make("scheduled-mine", event_status::scheduled, event_type::reboot, {"vm0"}),
                make("migration", event_status::scheduled, event_type::live_migrate, {"vm0"})};
    REQUIRE(m.watch_under_way(d, "vm0"));
    CHECK(m.watching() == 2);  // started-mine, started-no-vm: a live migration is not under way by itself
    d.under_way_when_announced = {event_type::live_migrate};  // the source's word (GCE)
    REQUIRE(m.watch_under_way(d, "vm0"));
    CHECK(m.watching() == 3);
    REQUIRE(m.watch_under_way(d, ""));  // the name not known yet: only what names no VM
    CHECK(m.watching() == 1);
    m.stop();
}

}  // namespace test_pause_meter
