// SPDX-License-Identifier: MIT
#include <forewarn/azure/vocabulary.hpp>
#include <forewarn/event.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>

namespace test_event {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::cloud;
using forewarn::document;
using forewarn::event;
using forewarn::event_source;
using forewarn::event_status;
using forewarn::event_type;

TEST_CASE("to_string names every enumerator in lower case", "[event]") {
    CHECK(forewarn::to_string(cloud::azure) == "azure");
    CHECK(forewarn::to_string(cloud::gce) == "gce");
    CHECK(forewarn::to_string(cloud::none) == "none");
    CHECK(forewarn::to_string(event_type::unknown) == "unknown");
    CHECK(forewarn::to_string(event_type::freeze) == "freeze");
    CHECK(forewarn::to_string(event_type::reboot) == "reboot");
    CHECK(forewarn::to_string(event_type::redeploy) == "redeploy");
    CHECK(forewarn::to_string(event_type::preempt) == "preempt");
    CHECK(forewarn::to_string(event_type::terminate) == "terminate");
    CHECK(forewarn::to_string(event_type::live_migrate) == "live_migrate");
    CHECK(forewarn::to_string(event_type::host_terminate) == "host_terminate");
    CHECK(forewarn::to_string(event_type::preempted) == "preempted");
    CHECK(forewarn::to_string(event_status::unknown) == "unknown");
    CHECK(forewarn::to_string(event_status::scheduled) == "scheduled");
    CHECK(forewarn::to_string(event_status::started) == "started");
    CHECK(forewarn::to_string(event_source::unknown) == "unknown");
    CHECK(forewarn::to_string(event_source::platform) == "platform");
    CHECK(forewarn::to_string(event_source::user) == "user");
    // Usable at compile time.
    static_assert(forewarn::to_string(event_type::freeze) == "freeze");
}

TEST_CASE("Azure wire strings map to enumerators, case-insensitively", "[event]") {
    CHECK(forewarn::azure::event_type_of("Freeze") == event_type::freeze);
    CHECK(forewarn::azure::event_type_of("Reboot") == event_type::reboot);
    CHECK(forewarn::azure::event_type_of("Redeploy") == event_type::redeploy);
    CHECK(forewarn::azure::event_type_of("Preempt") == event_type::preempt);
    CHECK(forewarn::azure::event_type_of("Terminate") == event_type::terminate);
    CHECK(forewarn::azure::event_type_of("tErMiNaTe") == event_type::terminate);
    CHECK(forewarn::azure::event_type_of("") == event_type::unknown);
    CHECK(forewarn::azure::event_type_of("Freeze ") == event_type::unknown);
    CHECK(forewarn::azure::event_type_of("LiveMigration") == event_type::unknown);
    CHECK(forewarn::azure::event_status_of("Scheduled") == event_status::scheduled);
    CHECK(forewarn::azure::event_status_of("STARTED") == event_status::started);
    CHECK(forewarn::azure::event_status_of("Completed") == event_status::unknown);
    CHECK(forewarn::azure::event_source_of("Platform") == event_source::platform);
    CHECK(forewarn::azure::event_source_of("user") == event_source::user);
    CHECK(forewarn::azure::event_source_of("Customer") == event_source::unknown);
    static_assert(forewarn::azure::event_type_of("Reboot") == event_type::reboot);
}

TEST_CASE("event::affects matches a resource name exactly", "[event]") {
    event e;
    e.resources = {"WestNO_0", "WestNO_1"};
    CHECK(e.affects("WestNO_0"));
    CHECK(e.affects("WestNO_1"));
    CHECK_FALSE(e.affects("westno_0"));  // case-sensitive, as Azure sends it
    CHECK_FALSE(e.affects("WestNO_"));
    CHECK_FALSE(e.affects("WestNO_10"));
    CHECK_FALSE(e.affects(""));
    CHECK_FALSE(event{}.affects("WestNO_0"));
}

TEST_CASE("event::duration: absent and -1 are unknown, others are seconds", "[event]") {
    event e;
    CHECK_FALSE(e.duration().has_value());
    e.duration_in_seconds = -1;
    CHECK_FALSE(e.duration().has_value());
    e.duration_in_seconds = -7;
    CHECK_FALSE(e.duration().has_value());
    e.duration_in_seconds = 0;
    CHECK(e.duration() == std::chrono::seconds(0));
    e.duration_in_seconds = 5;
    CHECK(e.duration() == std::chrono::seconds(5));
}

TEST_CASE("event equality looks at every field", "[event]") {
    event a;
    a.id = "x";
    a.type = event_type::freeze;
    a.raw_type = "Freeze";
    a.status = event_status::scheduled;
    a.raw_status = "Scheduled";
    a.resources = {"vm0"};
    a.not_before = std::chrono::system_clock::time_point(std::chrono::seconds(10));
    a.source = event_source::platform;
    a.duration_in_seconds = 5;
    CHECK(a == a);
    auto changed = [&](auto mutate) {
        event b = a;
        mutate(b);
        return b != a;
    };
    CHECK(changed([](event& b) { b.id = "y"; }));
    CHECK(changed([](event& b) { b.type = event_type::reboot; }));
    CHECK(changed([](event& b) { b.raw_type = "freeze"; }));
    CHECK(changed([](event& b) { b.status = event_status::started; }));
    CHECK(changed([](event& b) { b.raw_status = "Started"; }));
    CHECK(changed([](event& b) { b.resource_type = "VirtualMachine"; }));
    CHECK(changed([](event& b) { b.resources.push_back("vm1"); }));
    CHECK(changed([](event& b) { b.not_before.reset(); }));
    CHECK(changed([](event& b) { b.description = "d"; }));
    CHECK(changed([](event& b) { b.source.reset(); }));
    CHECK(changed([](event& b) { b.raw_source = "Platform"; }));
    CHECK(changed([](event& b) { b.duration_in_seconds = -1; }));
}

TEST_CASE("document::find and equality", "[event]") {
    document d;
    d.origin = cloud::azure;
    d.incarnation = "3";
    event e;
    e.id = "a";
    d.events.push_back(e);
    e.id = "b";
    d.events.push_back(e);
    REQUIRE(d.find("b") != nullptr);
    CHECK(d.find("b")->id == "b");
    CHECK(d.find("c") == nullptr);
    CHECK(d.find("") == nullptr);
    document other = d;
    CHECK(other == d);
    other.incarnation = "4";
    CHECK(other != d);
    other = d;
    other.origin = cloud::gce;
    CHECK(other != d);
    other = d;
    std::swap(other.events[0], other.events[1]);
    CHECK(other != d);  // order is part of the snapshot
}

}  // namespace test_event
