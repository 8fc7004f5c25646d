// SPDX-License-Identifier: MIT
// change_tracker: the recover reason decided from evidence, one rule at a time, and partial
// delivery. (The poller's state-file round trip of the same evidence is in test_poller.cpp.)
#include <forewarn/poller/change_tracker.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace test_change_tracker {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::change;
using forewarn::change_kind;
using forewarn::change_tracker;
using forewarn::cloud;
using forewarn::document;
using forewarn::event;
using forewarn::event_status;
using forewarn::recover_reason;
using forewarn::tracking_options;

namespace {

const forewarn::clock::wall_time_point epoch = forewarn::clock::wall_time_point(std::chrono::hours(24 * 20000));

event scheduled(std::string id, std::chrono::seconds notice = 15min) {
    event e;
    e.id = std::move(id);
    e.type = forewarn::event_type::reboot;
    e.status = event_status::scheduled;
    e.resources = {"vm_0"};
    e.not_before = epoch + notice;
    return e;
}

document doc(std::vector<event> events, std::optional<forewarn::clock::wall_time_point> service_time = std::nullopt,
             cloud origin = cloud::azure) {
    document d;
    d.origin = origin;
    d.events = std::move(events);
    d.service_time = service_time;
    return d;
}

// A tracker and a time line: `at(t)` observes a document t after the epoch, on both clocks.
struct rig {
    change_tracker tracker;
    explicit rig(tracking_options o = {}) : tracker(with_boot(std::move(o))) {}
    static tracking_options with_boot(tracking_options o) {
        if (o.boot_id.empty()) o.boot_id = "boot-a";
        return o;
    }
    std::vector<change> at(std::chrono::milliseconds t, const document& d) {
        auto changes = tracker.track(d, {forewarn::clock::time_point(t), epoch + t});
        tracker.delivered(changes.size());
        return changes;
    }
    // Polls the same document every second from `from` to `to`: watched without a gap.
    void watch(std::chrono::milliseconds from, std::chrono::milliseconds to, const document& d) {
        for (auto t = from; t <= to; t += 1s) at(t, d);
    }
};

change only_recover(const std::vector<change>& changes) {
    REQUIRE(changes.size() == 1);
    REQUIRE(changes[0].kind == change_kind::recover);
    return changes[0];
}

}  // namespace

TEST_CASE("tracker: vanished before NotBefore while watched without a gap: cancelled", "[tracker]") {
    rig r;
    r.watch(0s, 10s, doc({scheduled("A")}));
    const auto c = only_recover(r.at(11s, doc({})));
    CHECK(c.reason == recover_reason::cancelled);
    CHECK(c.evidence == "vanished before NotBefore while watched without a gap");
}

TEST_CASE("tracker: seen Started: completed, whatever the timing", "[tracker]") {
    rig r;
    auto a = scheduled("A");
    r.at(0s, doc({a}));
    a.status = event_status::started;
    a.not_before.reset();  // Azure sends "" once Started
    r.at(1s, doc({a}));
    const auto c = only_recover(r.at(2s, doc({})));
    CHECK(c.reason == recover_reason::completed);
    CHECK(c.evidence == "seen Started");
}

TEST_CASE("tracker: NotBefore passed by the service's clock, though ours says it has not", "[tracker]") {
    rig r;
    r.at(0s, doc({scheduled("A", 30s)}, epoch));
    // Our clock says 2 s passed; the service's Date says 40 s: its clock decides.
    const auto c = only_recover(r.at(2s, doc({}, epoch + 40s)));
    CHECK(c.reason == recover_reason::completed);
    CHECK(c.evidence == "NotBefore had passed by the service's clock when it vanished");
}

TEST_CASE("tracker: NotBefore not passed by the service's clock, though ours says it has", "[tracker]") {
    rig r;
    for (int i = 0; i <= 3; ++i) r.at(std::chrono::seconds(i), doc({scheduled("A", 4s)}, epoch + std::chrono::seconds(i)));
    // Our wall clock says 4 s (NotBefore); the service's answer is dated 3.5 s: before it.
    const auto c = only_recover(r.at(4s, doc({}, epoch + 3500ms)));
    CHECK(c.reason == recover_reason::cancelled);
}

TEST_CASE("tracker: NotBefore passed by our clock when the service sends no Date", "[tracker]") {
    rig r;
    r.watch(0s, 30s, doc({scheduled("A", 30s)}));
    const auto c = only_recover(r.at(31s, doc({})));
    CHECK(c.reason == recover_reason::completed);
    CHECK(c.evidence == "NotBefore had passed by this VM's clock when it vanished");
}

TEST_CASE("tracker: approved by this VM: completed (an approved event starts at once)", "[tracker]") {
    rig r;
    r.at(0s, doc({scheduled("A")}));
    r.tracker.mark_approved({"A"});
    CHECK(r.tracker.approved("A"));
    const auto c = only_recover(r.at(1s, doc({})));
    CHECK(c.reason == recover_reason::completed);
    CHECK(c.evidence == "approved by this VM");
}

TEST_CASE("tracker: a gap in watching before NotBefore: unknown, never cancelled", "[tracker]") {
    SECTION("a VM paused by a short Freeze (both clocks jump 6 s at a 1 s cadence)") {
        rig r;
        r.watch(0s, 10s, doc({scheduled("A")}));
        const auto c = only_recover(r.at(16s, doc({})));
        CHECK(c.reason == recover_reason::unknown);
        CHECK(c.evidence == "a gap of 6.0 s in watching");
    }
    SECTION("only the service's clock shows the gap (our monotonic clock stood still)") {
        rig r;
        for (int i = 0; i <= 5; ++i) r.at(std::chrono::seconds(i), doc({scheduled("A")}, epoch + std::chrono::seconds(i)));
        const auto c = only_recover(r.at(6s, doc({}, epoch + 20s)));
        CHECK(c.reason == recover_reason::unknown);
    }
    SECTION("an emulator running 60 times faster than real time is no gap; a jump beyond its own cadence is") {
        rig r;
        for (int i = 0; i <= 10; ++i)
            r.at(std::chrono::seconds(i), doc({scheduled("A", 1h)}, epoch + std::chrono::minutes(i)));
        CHECK(only_recover(r.at(11s, doc({}, epoch + 11min))).reason == recover_reason::cancelled);
        rig jump;
        for (int i = 0; i <= 10; ++i)
            jump.at(std::chrono::seconds(i), doc({scheduled("A", 1h)}, epoch + std::chrono::minutes(i)));
        const auto c = only_recover(jump.at(11s, doc({}, epoch + 14min)));
        CHECK(c.reason == recover_reason::unknown);
        CHECK(c.evidence == "a gap of 240.0 s in watching by the service's clock");
    }
    SECTION("an explicit max_gap wins over the learned cadence") {
        tracking_options o;
        o.max_gap = 30s;
        rig r(o);
        r.watch(0s, 10s, doc({scheduled("A")}));
        const auto c = only_recover(r.at(26s, doc({})));
        CHECK(c.reason == recover_reason::cancelled);
    }
}

TEST_CASE("tracker: the learned gap follows the cadence of the documents", "[tracker]") {
    rig r;
    CHECK(r.tracker.max_gap() == 2s);  // nothing learned yet: the floor
    r.watch(0s, 10s, doc({}));
    CHECK(r.tracker.max_gap() == 3s);  // 1 s cadence: twice that plus a second
    for (int i = 1; i <= 8; ++i) r.at(10s + std::chrono::seconds(5 * i), doc({}));
    CHECK(r.tracker.max_gap() == 11s);  // 5 s cadence (an AWS-like poll)
}

TEST_CASE("tracker: a reboot since the event was seen: completed", "[tracker]") {
    rig before;
    before.at(0s, doc({scheduled("A")}));
    auto saved = before.tracker.save();
    REQUIRE(saved.events.size() == 1);
    CHECK(saved.events[0].boot_id == "boot-a");

    tracking_options o;
    o.boot_id = "boot-b";
    rig after(o);
    after.tracker.restore(saved);
    const auto c = only_recover(after.at(1s, doc({})));
    CHECK(c.reason == recover_reason::completed);
    CHECK(c.evidence == "this VM rebooted since it saw the event");
}

TEST_CASE("tracker: restored and the same boot, before NotBefore: unknown", "[tracker]") {
    rig before;
    before.watch(0s, 5s, doc({scheduled("A")}));
    auto saved = before.tracker.save();
    rig after;  // boot-a again: the process restarted, the VM did not
    after.tracker.restore(saved);
    const auto c = only_recover(after.at(6s, doc({})));
    CHECK(c.reason == recover_reason::unknown);
    // An event the restored process sees again is watched from then on.
    rig again;
    again.tracker.restore(saved);
    again.watch(6s, 9s, doc({scheduled("A")}));
    CHECK(only_recover(again.at(10s, doc({}))).reason == recover_reason::cancelled);
}

TEST_CASE("tracker: final statuses from the service decide, and are recovered once", "[tracker]") {
    rig r;
    auto a = scheduled("A");
    auto b = scheduled("B");
    r.at(0s, doc({a, b}));
    a.status = event_status::completed;
    b.status = event_status::cancelled;
    auto changes = r.at(1s, doc({a, b}));
    REQUIRE(changes.size() == 2);
    CHECK(changes[0].reason == recover_reason::completed);
    CHECK(changes[0].evidence == "the service says it completed");
    CHECK(changes[1].reason == recover_reason::cancelled);
    CHECK(r.at(2s, doc({a, b})).empty());  // still listed: nothing more
    CHECK(r.at(3s, doc({})).empty());      // then dropped from the list: nothing more
    // Seen for the first time already final (history in the list): nothing at all.
    auto old = scheduled("OLD");
    old.status = event_status::completed;
    CHECK(r.at(4s, doc({old})).empty());
}

TEST_CASE("tracker: events complete when cleared from a source whose documents say a vanished event is over",
          "[tracker]") {
    rig r;
    event m;
    m.id = "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE";
    m.type = forewarn::event_type::live_migrate;
    m.status = event_status::scheduled;
    r.at(0s, doc({m}, std::nullopt, cloud::gce));
    auto cleared = doc({}, std::nullopt, cloud::gce);
    cleared.vanished_means_completed = true;
    const auto c = only_recover(r.at(90s, cleared));
    CHECK(c.reason == recover_reason::completed);
    CHECK(c.evidence == "the service ends every notice by clearing it");
}

TEST_CASE("tracker: partial delivery keeps what was not delivered for the next document", "[tracker]") {
    rig r;
    r.at(0s, doc({}));
    auto changes = r.tracker.track(doc({scheduled("A"), scheduled("B"), scheduled("C")}),
                                   {forewarn::clock::time_point(1s), epoch + 1s});
    REQUIRE(changes.size() == 3);
    r.tracker.delivered(1);  // a stop() after A's handler
    CHECK(r.tracker.delivered_document().events.size() == 1);
    auto rest = r.at(2s, doc({scheduled("A"), scheduled("B"), scheduled("C")}));
    REQUIRE(rest.size() == 2);
    CHECK(rest[0].event.id == "B");
    CHECK(rest[1].event.id == "C");
}

}  // namespace test_change_tracker
