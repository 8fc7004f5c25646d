// SPDX-License-Identifier: MIT
// The fleet budget's rule (fleet.hpp) and the in-process fake (testing/fake_fleet.hpp), with real
// pollers over the emulated Azure service on one manual clock.
#include <forewarn/fleet.hpp>
#include <forewarn/testing/fake_fleet.hpp>
#include <forewarn/testing/harness.hpp>

#include "catch.hpp"
#include "fleet_harness.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace test_fleet {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::slot_state;
using forewarn::detail::slot_admits;
using forewarn::detail::slot_entry;
using forewarn::testing::azure_event_spec;
using forewarn::testing::azure_event_state;
using forewarn::testing::fake_fleet;
using forewarn::testing::harness;
using namespace std::chrono_literals;

TEST_CASE("fleet rule: slots in request order, busy members counted, forced ones too", "[fleet]") {
    const std::vector<slot_entry> q{{"a", slot_state::holding, 1}, {"b", slot_state::waiting, 2}, {"c", slot_state::waiting, 3}};
    CHECK(slot_admits(q, "b", 2));
    CHECK_FALSE(slot_admits(q, "c", 2));  // b asked first
    CHECK(slot_admits(q, "c", 3));
    CHECK_FALSE(slot_admits(q, "b", 1));
    CHECK_FALSE(slot_admits(q, "nobody", 5));  // no entry: must queue first
    // Order is create order, not the order given.
    const std::vector<slot_entry> shuffled{{"c", slot_state::waiting, 3}, {"b", slot_state::waiting, 2}};
    CHECK(slot_admits(shuffled, "b", 1));
    CHECK_FALSE(slot_admits(shuffled, "c", 1));
    // A forced member (started without approval) counts, even when it came last.
    const std::vector<slot_entry> forced{{"b", slot_state::waiting, 2}, {"z", slot_state::forced, 9}};
    CHECK_FALSE(slot_admits(forced, "b", 1));
    CHECK(slot_admits(forced, "b", 2));
}

TEST_CASE("fleet: member names become key parts as data", "[fleet]") {
    using forewarn::detail::encode_key_part;
    CHECK(encode_key_part("vm_1") == "vm_1");
    CHECK(encode_key_part("../x") == "..%2Fx");
    CHECK(encode_key_part("a b%\n") == "a%20b%25%0A");
}

using forewarn_test::add_fleet_poller;
using forewarn_test::add_reboots;
using forewarn_test::fleet_vms;
using forewarn_test::ready_at_once;
using forewarn_test::started_events;

TEST_CASE("fake fleet: ten VMs, ten Reboots at once, budget 2: never more than 2 down, all ten done early",
          "[fleet][simulated]") {
    harness h(fleet_vms(10));
    fake_fleet fleet(2);
    for (int i = 0; i < 10; ++i) add_fleet_poller(h, "vm" + std::to_string(i), fleet.member());
    REQUIRE(h.start());
    add_reboots(h, 10, 60s);
    std::size_t most = 0;
    for (int second = 0; second < 600; ++second) {  // 10 min: well before the 15 min NotBefore
        REQUIRE(h.advance(1s));
        most = std::max(most, started_events(h));
    }
    CHECK(most == 2);  // the budget was used, and never passed
    CHECK(fleet.max_in_maintenance_seen() == 2);
    for (const auto& e : h.scenario().azure_events()) {
        INFO(e.id);
        CHECK(e.state == azure_event_state::phase::removed);
        CHECK(e.approved_by == e.resources.front());  // each approved early by its own VM
    }
    CHECK(fleet.slots_taken() == 10);
    CHECK(fleet.in_maintenance() == 0);  // every slot given back at recover
}

TEST_CASE("fake fleet: a member cut off from the budget never approves early - the event goes at NotBefore",
          "[fleet][simulated]") {
    harness h(fleet_vms(1));
    fake_fleet fleet(2);
    fleet.set_unreachable(true);
    std::mutex m;
    std::vector<std::string> errors;
    auto handlers = ready_at_once();
    handlers.on_error = [&](const forewarn::error& e) {
        std::lock_guard<std::mutex> lock(m);
        errors.push_back(e.message);
    };
    add_fleet_poller(h, "vm0", fleet.member(), handlers);
    REQUIRE(h.start());
    azure_event_spec s;
    s.id = "REBOOT";
    s.type = "Reboot";
    h.scenario().add_azure_event(s);
    REQUIRE(h.run_for(14min));
    CHECK(h.scenario().azure_event("REBOOT")->state == azure_event_state::phase::scheduled);
    CHECK(h.scenario().azure_event("REBOOT")->approved_by.empty());
    {
        std::lock_guard<std::mutex> lock(m);
        CHECK_FALSE(errors.empty());  // reported, not silent
    }
    REQUIRE(h.run_for(2min));  // NotBefore passes: the platform starts it without us
    CHECK(h.scenario().azure_event("REBOOT")->state != azure_event_state::phase::scheduled);
    CHECK(h.scenario().azure_event("REBOOT")->approved_by.empty());
}

TEST_CASE("fake fleet: an event the platform starts without approval takes a slot beyond the budget",
          "[fleet][simulated]") {
    harness h(fleet_vms(2));
    fake_fleet fleet(1);
    for (const char* vm : {"vm0", "vm1"}) add_fleet_poller(h, vm, fleet.member());
    REQUIRE(h.start());
    azure_event_spec a;
    a.id = "A";
    a.type = "Reboot";
    a.resources = {"vm0"};
    a.impact = 120s;
    h.scenario().add_azure_event(a);
    REQUIRE(h.advance(1s));
    REQUIRE(h.advance(1s));
    CHECK(fleet.slot_of("vm0") == slot_state::holding);
    azure_event_spec b;  // a hardware failure on vm1: Started at once
    b.id = "B";
    b.type = "Reboot";
    b.resources = {"vm1"};
    b.started = true;
    b.impact = 30s;
    h.scenario().add_azure_event(b);
    REQUIRE(h.advance(1s));
    REQUIRE(h.advance(1s));
    CHECK(fleet.slot_of("vm1") == slot_state::forced);
    CHECK(fleet.in_maintenance() == 2);  // beyond K = 1: counted all the same
    for (const auto& m : fleet.view()) {  // each member shows its own event, not the other's
        INFO(m.name);
        REQUIRE(m.events.size() == 1);
        CHECK(m.events.front().id == (m.name == "vm0" ? "A" : "B"));
    }
    REQUIRE(h.run_for(3min));
    CHECK(fleet.in_maintenance() == 0);
    const auto view = fleet.view();
    CHECK(view.size() == 2);
}

}  // namespace test_fleet
