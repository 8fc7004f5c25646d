// SPDX-License-Identifier: MIT
#include <forewarn/diff.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace test_diff {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::change;
using forewarn::change_kind;
using forewarn::cloud;
using forewarn::document;
using forewarn::event;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::recover_reason;

namespace {

event make_event(std::string id, event_status status, event_type type = event_type::reboot) {
    event e;
    e.id = std::move(id);
    e.type = type;
    e.raw_type = "Reboot";
    e.status = status;
    e.raw_status = status == event_status::started ? "Started" : "Scheduled";
    e.resource_type = "VirtualMachine";
    e.resources = {"vm_0", "vm_1"};
    e.description = "host maintenance";
    e.duration_in_seconds = 5;
    if (status == event_status::scheduled)
        e.not_before = std::chrono::system_clock::time_point(std::chrono::seconds(1649716018));
    return e;
}

document make_doc(std::string incarnation, std::vector<event> events, cloud origin = cloud::azure) {
    document d;
    d.origin = origin;
    d.incarnation = std::move(incarnation);
    d.events = std::move(events);
    return d;
}

std::vector<change_kind> kinds(const std::vector<change>& changes) {
    std::vector<change_kind> out;
    for (const auto& c : changes) out.push_back(c.kind);
    return out;
}

}  // namespace

TEST_CASE("diff: a new Scheduled event is prepare, a new Started event is started", "[diff]") {
    const document empty = make_doc("", {});
    const auto changes = forewarn::diff(
        empty, make_doc("1", {make_event("A", event_status::scheduled), make_event("B", event_status::started)}));
    REQUIRE(kinds(changes) == std::vector<change_kind>{change_kind::prepare, change_kind::started});
    CHECK(changes[0].event.id == "A");
    CHECK(changes[1].event.id == "B");
    CHECK(changes[0].reason == recover_reason::none);
    CHECK_FALSE(changes[0].previous.has_value());
    CHECK(changes[0].origin == cloud::azure);
    CHECK(changes[0].incarnation == "1");
}

TEST_CASE("diff: an event of unknown status is prepared, never dropped", "[diff]") {
    event e = make_event("A", event_status::unknown);
    e.raw_status = "Paused";
    const auto changes = forewarn::diff(make_doc("", {}), make_doc("1", {e}));
    REQUIRE(kinds(changes) == std::vector<change_kind>{change_kind::prepare});
    CHECK(changes[0].event.raw_status == "Paused");
}

TEST_CASE("diff: Scheduled -> Started is started, with the previous event", "[diff]") {
    const auto a = make_event("A", event_status::scheduled);
    auto b = a;
    b.status = event_status::started;
    b.raw_status = "Started";
    b.not_before.reset();  // Azure sends "" once started
    const auto changes = forewarn::diff(make_doc("1", {a}), make_doc("2", {b}));
    REQUIRE(kinds(changes) == std::vector<change_kind>{change_kind::started});
    REQUIRE(changes[0].previous.has_value());
    CHECK(changes[0].previous->status == event_status::scheduled);
    CHECK(changes[0].event.status == event_status::started);
}

TEST_CASE("diff: a disappeared event is recover - two documents alone never say cancelled", "[diff]") {
    const auto scheduled = make_event("S", event_status::scheduled);
    const auto started = make_event("T", event_status::started);
    const auto changes = forewarn::diff(make_doc("3", {scheduled, started}), make_doc("4", {}));
    REQUIRE(kinds(changes) == std::vector<change_kind>{change_kind::recover, change_kind::recover});
    CHECK(changes[0].event.id == "S");
    // Scheduled then gone: cancelled, or started and ended between the two? Only evidence
    // across documents can tell (change_tracker); the diff says so.
    CHECK(changes[0].reason == recover_reason::unknown);
    CHECK(changes[1].event.id == "T");
    CHECK(changes[1].reason == recover_reason::completed);
    CHECK(changes[1].evidence == "seen Started");
    // The event carried is the one last seen.
    CHECK(changes[0].event == scheduled);
}

TEST_CASE("diff: gone after NotBefore by the service's Date: completed", "[diff]") {
    auto scheduled = make_event("S", event_status::scheduled);
    scheduled.not_before = std::chrono::system_clock::time_point(std::chrono::seconds(1000));
    auto after = make_doc("4", {});
    after.service_time = std::chrono::system_clock::time_point(std::chrono::seconds(1000));
    auto changes = forewarn::diff(make_doc("3", {scheduled}), after);
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].reason == recover_reason::completed);
    after.service_time = std::chrono::system_clock::time_point(std::chrono::seconds(999));
    changes = forewarn::diff(make_doc("3", {scheduled}), after);
    CHECK(changes[0].reason == recover_reason::unknown);
}

TEST_CASE("diff: an event that vanishes from a document whose source says that means over completed - the cloud "
          "alone decides nothing",
          "[diff]") {
    event m;
    m.id = "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE";
    m.type = event_type::live_migrate;
    m.raw_type = "MIGRATE_ON_HOST_MAINTENANCE";
    m.status = event_status::scheduled;
    auto after = make_doc("e2/p1", {}, cloud::gce);
    after.vanished_means_completed = true;
    auto changes = forewarn::diff(make_doc("e1/p1", {m}, cloud::gce), after);
    REQUIRE(kinds(changes) == std::vector<change_kind>{change_kind::recover});
    CHECK(changes[0].reason == recover_reason::completed);
    CHECK(changes[0].evidence == "the service ends every notice by clearing it");
    after.vanished_means_completed = false;  // a GCE document that does not say so: no guess
    changes = forewarn::diff(make_doc("e1/p1", {m}, cloud::gce), after);
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].reason == recover_reason::unknown);
}

TEST_CASE("diff: a change of NotBefore, resources, duration or description is updated", "[diff]") {
    const auto a = make_event("A", event_status::scheduled);
    auto check_updated = [&](const event& b) {
        const auto changes = forewarn::diff(make_doc("1", {a}), make_doc("2", {b}));
        REQUIRE(kinds(changes) == std::vector<change_kind>{change_kind::updated});
        REQUIRE(changes[0].previous.has_value());
        CHECK(*changes[0].previous == a);
        CHECK(changes[0].event == b);
    };
    auto b = a;
    b.not_before = *a.not_before + std::chrono::minutes(5);
    check_updated(b);
    b = a;
    b.resources.push_back("vm_2");
    check_updated(b);
    b = a;
    b.duration_in_seconds = -1;
    check_updated(b);
    b = a;
    b.description = "changed";
    check_updated(b);
    b = a;
    b.not_before.reset();
    check_updated(b);
}

TEST_CASE("diff: Started -> Scheduled is an update, not a second start", "[diff]") {
    const auto a = make_event("A", event_status::started);
    const auto b = make_event("A", event_status::scheduled);
    CHECK(kinds(forewarn::diff(make_doc("1", {a}), make_doc("2", {b}))) ==
          std::vector<change_kind>{change_kind::updated});
}

TEST_CASE("diff: the same incarnation is no work, even if the content was tampered with", "[diff]") {
    const auto a = make_event("A", event_status::scheduled);
    CHECK(forewarn::diff(make_doc("7", {a}), make_doc("7", {a})).empty());
    // The protocol says same incarnation, same content: diff trusts it and does no work.
    CHECK(forewarn::diff(make_doc("7", {a}), make_doc("7", {})).empty());
}

TEST_CASE("diff: the same content under a new incarnation is no change", "[diff]") {
    const auto a = make_event("A", event_status::scheduled);
    CHECK(forewarn::diff(make_doc("7", {a}), make_doc("8", {a})).empty());
}

TEST_CASE("diff: an incarnation that goes down is diffed by content, never replayed", "[diff]") {
    const auto a = make_event("A", event_status::scheduled);
    const auto b = make_event("B", event_status::scheduled);
    // The service was disabled and enabled again: incarnation starts over at 1.
    const auto changes = forewarn::diff(make_doc("41", {a}), make_doc("1", {a, b}));
    REQUIRE(kinds(changes) == std::vector<change_kind>{change_kind::prepare});
    CHECK(changes[0].event.id == "B");
    CHECK(forewarn::diff(make_doc("41", {a, b}), make_doc("1", {a, b})).empty());
}

TEST_CASE("diff: empty incarnations never short-circuit", "[diff]") {
    const auto a = make_event("A", event_status::scheduled);
    CHECK(kinds(forewarn::diff(make_doc("", {}), make_doc("", {a}))) == std::vector<change_kind>{change_kind::prepare});
}

TEST_CASE("diff: a duplicated id in one document gives one change", "[diff]") {
    const auto a = make_event("A", event_status::scheduled);
    auto a2 = a;
    a2.description = "duplicate";
    const auto changes = forewarn::diff(make_doc("", {}), make_doc("1", {a, a2}));
    REQUIRE(changes.size() == 1);
    CHECK(changes[0].event.description == a.description);
    // And it disappears once.
    const auto gone = forewarn::diff(make_doc("1", {a, a2}), make_doc("2", {}));
    REQUIRE(gone.size() == 1);
    CHECK(gone[0].kind == change_kind::recover);
}

TEST_CASE("diff: order is current document order, then disappeared events in previous order", "[diff]") {
    const auto a = make_event("A", event_status::scheduled);
    const auto b = make_event("B", event_status::scheduled);
    const auto c = make_event("C", event_status::scheduled);
    auto a_started = a;
    a_started.status = event_status::started;
    const auto d = make_event("D", event_status::started);
    const auto changes = forewarn::diff(make_doc("1", {a, b, c}), make_doc("2", {d, a_started}));
    REQUIRE(kinds(changes) == std::vector<change_kind>{change_kind::started, change_kind::started,
                                                        change_kind::recover, change_kind::recover});
    CHECK(changes[0].event.id == "D");
    CHECK(changes[1].event.id == "A");
    CHECK(changes[2].event.id == "B");
    CHECK(changes[3].event.id == "C");
}

TEST_CASE("diff: a whole life cycle gives each callback exactly once", "[diff]") {
    auto e = make_event("A", event_status::scheduled);
    std::vector<document> docs;
    docs.push_back(make_doc("0", {}));
    docs.push_back(make_doc("1", {e}));
    docs.push_back(make_doc("1", {e}));  // polled again, nothing new
    auto moved = e;
    moved.not_before = *e.not_before + std::chrono::minutes(10);
    docs.push_back(make_doc("2", {moved}));
    auto started = moved;
    started.status = event_status::started;
    started.not_before.reset();
    docs.push_back(make_doc("3", {started}));
    docs.push_back(make_doc("4", {}));
    std::vector<change_kind> all;
    for (std::size_t i = 1; i < docs.size(); ++i)
        for (const auto& c : forewarn::diff(docs[i - 1], docs[i])) all.push_back(c.kind);
    CHECK(all == std::vector<change_kind>{change_kind::prepare, change_kind::updated, change_kind::started,
                                          change_kind::recover});
}

TEST_CASE("diff: many events stay fast (hashing, not quadratic)", "[diff]") {
    document before = make_doc("1", {});
    document after = make_doc("2", {});
    for (int i = 0; i < 20000; ++i) {
        before.events.push_back(make_event("id-" + std::to_string(i), event_status::scheduled));
        after.events.push_back(make_event("id-" + std::to_string(i + 10000), event_status::scheduled));
    }
    const auto changes = forewarn::diff(before, after);
    std::size_t prepares = 0, recovers = 0;
    for (const auto& c : changes) {
        if (c.kind == change_kind::prepare) ++prepares;
        if (c.kind == change_kind::recover) ++recovers;
    }
    CHECK(prepares == 10000);
    CHECK(recovers == 10000);
    CHECK(changes.size() == 20000);
}

TEST_CASE("diff: to_string names", "[diff]") {
    CHECK(forewarn::to_string(change_kind::prepare) == "prepare");
    CHECK(forewarn::to_string(change_kind::started) == "started");
    CHECK(forewarn::to_string(change_kind::recover) == "recover");
    CHECK(forewarn::to_string(change_kind::updated) == "updated");
    CHECK(forewarn::to_string(recover_reason::completed) == "completed");
    CHECK(forewarn::to_string(recover_reason::cancelled) == "cancelled");
    CHECK(forewarn::to_string(recover_reason::none) == "none");
}

}  // namespace test_diff
