// SPDX-License-Identifier: MIT
#include <forewarn/poller/approval.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace test_approval {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::approval_options;
using forewarn::approval_policy;
using forewarn::approval_scope;
using forewarn::document;
using forewarn::event;
using forewarn::event_source;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::leader_election;
using forewarn::leader_rule;
using namespace std::chrono_literals;
using ids = std::vector<std::string>;

namespace {

event make_event(std::string id, std::vector<std::string> resources, event_source source = event_source::platform,
                 event_type type = event_type::reboot, event_status status = event_status::scheduled) {
    event e;
    e.id = std::move(id);
    e.type = type;
    e.status = status;
    e.resources = std::move(resources);
    e.source = source;
    e.duration_in_seconds = -1;
    return e;
}

document make_doc(std::vector<event> events) {
    document d;
    d.origin = forewarn::cloud::azure;
    d.incarnation = "1";
    d.events = std::move(events);
    return d;
}

approval_policy make_policy(approval_scope scope, std::string self) {
    approval_options o;
    o.scope = scope;
    approval_policy p(o);
    p.set_self(std::move(self));
    return p;
}

// A time on the poller's monotonic clock, `d` after its epoch.
forewarn::clock::time_point at(std::chrono::nanoseconds d) { return forewarn::clock::time_point(d); }

}  // namespace

TEST_CASE("approval_policy: nothing is approved before the prepare handler says ready", "[approval]") {
    auto p = make_policy(approval_scope::own, "vm_0");
    const auto d = make_doc({make_event("A", {"vm_0"})});
    p.observe(d, at(0s));
    CHECK(p.due(d, at(0s)).empty());
    p.mark_ready("A");
    p.mark_ready("A");  // idempotent
    CHECK(p.is_ready("A"));
    CHECK(p.due(d, at(0s)) == ids{"A"});
    p.mark_approved({"A"});
    CHECK(p.was_approved("A"));
    CHECK(p.due(d, at(1s)).empty());  // at most once
    p.mark_ready("A");
    CHECK(p.due(d, at(2s)).empty());
}

TEST_CASE("approval_policy: never an event that does not name this VM (own and leader)", "[approval]") {
    for (auto scope : {approval_scope::own, approval_scope::leader}) {
        auto p = make_policy(scope, "vm_0");
        const auto d = make_doc({make_event("A", {"vm_5", "vm_6"}, event_source::user)});
        p.observe(d, at(0s));
        p.mark_ready("A");
        CHECK(p.due(d, at(1h)).empty());
    }
}

TEST_CASE("approval_policy: never approves nothing, all approves anything ready", "[approval]") {
    const auto d = make_doc({make_event("A", {"vm_5"}), make_event("B", {})});
    auto never = make_policy(approval_scope::never, "vm_0");
    never.observe(d, at(0s));
    never.mark_ready("A");
    CHECK(never.due(d, at(0s)).empty());
    CHECK_FALSE(never.needs_identity());

    auto all = make_policy(approval_scope::all, "");
    CHECK_FALSE(all.needs_identity());
    all.observe(d, at(0s));
    all.mark_ready("A");
    all.mark_ready("B");
    CHECK(all.due(d, at(0s)) == ids{"A", "B"});
}

TEST_CASE("approval_policy: Started and unknown-status events are never approved", "[approval]") {
    auto p = make_policy(approval_scope::own, "vm_0");
    auto unknown = make_event("U", {"vm_0"});
    unknown.status = event_status::unknown;
    const auto d = make_doc({make_event("S", {"vm_0"}, event_source::platform, event_type::reboot, event_status::started),
                             unknown});
    p.observe(d, at(0s));
    p.mark_ready("S");
    p.mark_ready("U");
    CHECK(p.due(d, at(0s)).empty());
}

TEST_CASE("approval_policy: an event that says it cannot be approved is never due, nor waited for", "[approval]") {
    approval_options o;
    o.scope = approval_scope::own;
    o.window = forewarn::approval_window::parse("02:00-03:00").value();
    approval_policy p(o);
    p.set_self("vm_0");
    auto spot = make_event("S", {"vm_0"}, event_source::user);
    spot.approvable = false;
    auto asg = make_event("T", {"vm_0"});
    asg.approvable = true;
    auto plain = make_event("P", {"vm_0"});  // not said: approvable
    const auto d = make_doc({spot, asg, plain});
    p.observe(d, at(0s));
    for (const char* id : {"S", "T", "P"}) p.mark_ready(id);
    const auto inside = std::chrono::system_clock::time_point{} + 2h + 30min;
    CHECK(p.due(d, at(0s), inside) == ids{"T", "P"});
    // Outside the window only T and P wait for its opening; S alone would not set a deadline.
    const auto outside = std::chrono::system_clock::time_point{} + 4h;
    CHECK(p.next_deadline(d, at(0s), outside).has_value());
    CHECK_FALSE(p.next_deadline(make_doc({spot}), at(0s), outside).has_value());
}

TEST_CASE("approval_policy: several due events go out together, in document order", "[approval]") {
    auto p = make_policy(approval_scope::own, "vm_0");
    const auto d = make_doc({make_event("C", {"vm_0"}), make_event("A", {"vm_0"}), make_event("B", {"vm_1"})});
    p.observe(d, at(0s));
    p.mark_ready("A");
    p.mark_ready("B");
    p.mark_ready("C");
    CHECK(p.due(d, at(0s)) == ids{"C", "A"});
}

TEST_CASE("approval_policy: user events and short Freezes at once when asked", "[approval]") {
    approval_options o;
    o.scope = approval_scope::own;
    o.approve_user_events = true;
    o.approve_freeze_shorter_than = 9s;
    approval_policy p(o);
    p.set_self("vm_0");
    auto freeze = [](std::string id, std::int64_t seconds) {
        auto e = make_event(std::move(id), {"vm_0"}, event_source::platform, event_type::freeze);
        e.duration_in_seconds = seconds;
        return e;
    };
    auto no_duration = freeze("F-none", 0);
    no_duration.duration_in_seconds.reset();
    const auto d = make_doc({make_event("U", {"vm_0"}, event_source::user), freeze("F5", 5), freeze("F0", 0),
                             freeze("F9", 9), freeze("F-1", -1), no_duration,
                             make_event("R", {"vm_0"}, event_source::platform),
                             make_event("U-other", {"vm_7"}, event_source::user)});
    p.observe(d, at(0s));
    // The seed: 0 <= DurationInSeconds < 9. Unknown durations and other VMs' events never.
    CHECK(p.due(d, at(0s)) == ids{"U", "F5", "F0"});
}

TEST_CASE("approval_policy: at-once rules are off by default", "[approval]") {
    auto p = make_policy(approval_scope::own, "vm_0");
    auto f = make_event("F", {"vm_0"}, event_source::user, event_type::freeze);
    f.duration_in_seconds = 1;
    const auto d = make_doc({f});
    p.observe(d, at(0s));
    CHECK(p.due(d, at(0s)).empty());
}

TEST_CASE("approval_policy: leader scope, the leader approves, the follower waits for the grace", "[approval]") {
    approval_options o;
    o.scope = approval_scope::leader;
    o.follower_grace = 30s;
    approval_policy leader(o);
    leader.set_self("vm_0");
    approval_policy follower(o);
    follower.set_self("vm_1");
    const auto d = make_doc({make_event("U", {"vm_0", "vm_1"}, event_source::user),
                             make_event("P", {"vm_0", "vm_1"}, event_source::platform)});
    leader.observe(d, at(100s));
    follower.observe(d, at(100s));
    for (auto* p : {&leader, &follower}) {
        p->mark_ready("U");
        p->mark_ready("P");
    }
    CHECK(leader.due(d, at(100s)) == ids{"U", "P"});
    CHECK(follower.due(d, at(100s)).empty());
    CHECK(follower.next_deadline(d, at(100s)) == at(130s));
    CHECK(leader.next_deadline(d, at(100s)) == std::nullopt);
    CHECK(follower.due(d, at(129s)).empty());
    CHECK(follower.due(d, at(130s)) == ids{"U"});  // never the platform event
}

TEST_CASE("approval_policy: the grace counts from when the event was first seen", "[approval]") {
    approval_options o;
    o.scope = approval_scope::leader;
    approval_policy p(o);
    p.set_self("vm_1");
    auto u = make_event("U", {"vm_0", "vm_1"}, event_source::user);
    p.observe(make_doc({u}), at(10s));
    auto moved = u;
    moved.description = "updated";
    p.observe(make_doc({moved}), at(25s));  // an update does not restart the grace
    p.mark_ready("U");
    CHECK(p.due(make_doc({moved}), at(39s)).empty());
    CHECK(p.due(make_doc({moved}), at(40s)) == ids{"U"});
}

TEST_CASE("approval_policy: a gone event is forgotten, and readiness for unknown ids is ignored", "[approval]") {
    auto p = make_policy(approval_scope::own, "vm_0");
    const auto d = make_doc({make_event("A", {"vm_0"})});
    p.observe(d, at(0s));
    p.mark_ready("A");
    p.mark_approved({"A"});
    CHECK(p.approved_ids() == ids{"A"});
    p.observe(make_doc({}), at(1s));
    CHECK_FALSE(p.was_approved("A"));
    CHECK(p.approved_ids().empty());
    p.mark_ready("never-seen");
    CHECK_FALSE(p.is_ready("never-seen"));
}

TEST_CASE("approval_policy: needs_identity until self is known", "[approval]") {
    approval_options o;
    o.scope = approval_scope::leader;
    approval_policy p(o);
    CHECK(p.needs_identity());
    const auto d = make_doc({make_event("A", {"vm_0"})});
    p.observe(d, at(0s));
    p.mark_ready("A");
    CHECK(p.due(d, at(0s)).empty());
    p.set_self("vm_0");
    CHECK_FALSE(p.needs_identity());
    CHECK(p.due(d, at(0s)) == ids{"A"});
}

TEST_CASE("approval_policy: scale-set Terminate is approved only by the VM it names", "[approval]") {
    // Each instance of a scale set sees the Terminate events of others; each must approve its own.
    const auto d = make_doc({make_event("T0", {"ss_0"}, event_source::platform, event_type::terminate),
                             make_event("T1", {"ss_1"}, event_source::platform, event_type::terminate)});
    for (const char* self : {"ss_0", "ss_1"}) {
        auto p = make_policy(approval_scope::own, self);
        p.observe(d, at(0s));
        p.mark_ready("T0");
        p.mark_ready("T1");
        CHECK(p.due(d, at(0s)) == ids{std::string("T") + self[3]});
    }
}

TEST_CASE("approval_policy: to_string of scopes", "[approval]") {
    CHECK(forewarn::to_string(approval_scope::never) == "never");
    CHECK(forewarn::to_string(approval_scope::own) == "own");
    CHECK(forewarn::to_string(approval_scope::leader) == "leader");
    CHECK(forewarn::to_string(approval_scope::all) == "all");
}

namespace {
// 2026-11-23 was a Monday; a wall time on that week, in UTC.
std::chrono::system_clock::time_point monday(int hour, int minute = 0) {
    return std::chrono::system_clock::time_point(std::chrono::hours(24 * 20780) + std::chrono::hours(hour) +
                                                 std::chrono::minutes(minute));
}
}  // namespace

TEST_CASE("approval_window: parses HH:MM-HH:MM[/DAYS][ UTC+HH:MM], refuses anything else", "[approval][window]") {
    auto w = forewarn::approval_window::parse("22:00-04:00/mon-fri UTC+01:00");
    REQUIRE(w);
    CHECK(w->start_minute == 22 * 60);
    CHECK(w->end_minute == 4 * 60);
    CHECK(w->days == 0x1f);
    CHECK(w->utc_offset == 60min);
    CHECK(w->to_string() == "22:00-04:00/mon,tue,wed,thu,fri UTC+01:00");
    CHECK(forewarn::approval_window::parse("09:30-17:00")->to_string() == "09:30-17:00 UTC");
    CHECK(forewarn::approval_window::parse("09:30-17:00/sat,sun UTC")->days == 0x60);
    CHECK(forewarn::approval_window::parse("00:00-00:00/fri-mon")->days == 0x71);  // a range across the week's end
    for (const char* bad : {"", "9:30-17:00", "24:00-01:00", "09:30", "09:30-17:60", "09:30-17:00/funday",
                            "09:30-17:00/", "09:30-17:00 Europe/Berlin", "09:30-17:00 UTC+15:00", "09:30-17:00 UTC+1"}) {
        INFO(bad);
        auto r = forewarn::approval_window::parse(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == forewarn::errc::invalid_argument);
    }
}

TEST_CASE("approval_window: inside or not, across midnight, the days it opens on, an offset", "[approval][window]") {
    const auto night = forewarn::approval_window::parse("22:00-04:00/fri").value();
    CHECK(night.contains(monday(23) + 24h * 4));     // Friday 23:00 (Monday + 4 days)
    CHECK(night.contains(monday(3) + 24h * 5));      // Saturday 03:00: Friday's window still open
    CHECK_FALSE(night.contains(monday(4) + 24h * 5));  // Saturday 04:00: closed
    CHECK_FALSE(night.contains(monday(23) + 24h * 3));  // Thursday 23:00: not a day it opens on
    CHECK(night.next_open(monday(12)) == monday(22) + 24h * 4);
    const auto day = forewarn::approval_window::parse("09:00-17:00 UTC+02:00").value();
    CHECK(day.contains(monday(7)));        // 09:00 at UTC+2
    CHECK_FALSE(day.contains(monday(15)));  // 17:00 at UTC+2
    CHECK(day.next_open(monday(16)) == monday(7) + 24h);
    const auto always = forewarn::approval_window::parse("00:00-00:00").value();
    CHECK(always.contains(monday(0)));
    CHECK(always.contains(monday(23, 59)));
}

TEST_CASE("approval_policy: a window holds early approvals back until it opens, and says when that is",
          "[approval][window]") {
    approval_options o;
    o.scope = approval_scope::own;
    o.window = forewarn::approval_window::parse("22:00-04:00").value();
    approval_policy p(o);
    p.set_self("vm_0");
    const auto d = make_doc({make_event("A", {"vm_0"})});
    p.observe(d, at(0s));
    p.mark_ready("A");
    CHECK(p.due(d, at(1s), monday(12)).empty());
    CHECK(p.due(d, at(1s)).empty());  // no wall time: never with a window
    const auto next = p.next_deadline(d, at(1s), monday(12));
    REQUIRE(next);
    CHECK(*next >= at(1s) + 10h);
    CHECK(*next <= at(1s) + 10h + 1s);
    CHECK(p.due(d, at(1s) + 10h, monday(22)) == ids{"A"});
    CHECK(p.due(d, at(1s) + 10h, monday(2) + 24h) == ids{"A"});
}

// approval_options::unready_for: the load balancer's hold.
namespace {
approval_policy held_policy(std::chrono::seconds unready_for, std::chrono::seconds unready_before = 0s,
                            approval_scope scope = approval_scope::own) {
    approval_options o;
    o.scope = scope;
    o.unready_for = unready_for;
    o.readiness.unready_before = unready_before;
    approval_policy p(o);
    p.set_self("vm_0");
    return p;
}
}  // namespace

TEST_CASE("approval_policy: unready_for holds a ready event until this VM has been not ready that long",
          "[approval][unready_for]") {
    auto p = held_policy(3s);
    const auto wall = monday(12);
    const auto d = make_doc({make_event("A", {"vm_0"})});
    p.observe(d, at(10s), wall);  // announced: not ready from now
    REQUIRE(p.unready_since(at(10s)));
    CHECK(*p.unready_since(at(10s)) == at(10s));
    p.mark_ready("A");  // the prepare handler is quick: the hold is what waits
    CHECK(p.held(d.events[0], at(10s)));
    CHECK(p.due(d, at(10s), wall).empty());
    CHECK(p.due(d, at(12s), wall + 2s).empty());
    const auto next = p.next_deadline(d, at(12s), wall + 2s);
    REQUIRE(next);
    CHECK(*next == at(13s));  // a source that waits long asks again when the hold ends
    CHECK(p.due(d, at(13s), wall + 3s) == ids{"A"});
    p.observe(d, at(14s), wall + 4s);  // a later document does not restart the count
    CHECK(*p.unready_since(at(14s)) == at(10s));
}

TEST_CASE("approval_policy: unready_for and a slow prepare run at once (the later of the two decides)",
          "[approval][unready_for]") {
    auto p = held_policy(3s);
    const auto wall = monday(12);
    const auto d = make_doc({make_event("A", {"vm_0"})});
    p.observe(d, at(0s), wall);
    CHECK(p.due(d, at(3s), wall + 3s).empty());  // the hold is over, the handler is not ready
    p.observe(d, at(4s), wall + 4s);
    p.mark_ready("A");  // a 4 s hook
    CHECK(p.due(d, at(4s), wall + 4s) == ids{"A"});
}

TEST_CASE("approval_policy: the hold starts again when this VM was ready in between", "[approval][unready_for]") {
    auto p = held_policy(3s);
    const auto wall = monday(12);
    const auto with = make_doc({make_event("A", {"vm_0"})});
    const auto without = make_doc({});
    p.observe(with, at(0s), wall);
    p.observe(without, at(2s), wall + 2s);  // the event went away: ready again
    CHECK_FALSE(p.unready_since(at(2s)));
    p.observe(with, at(5s), wall + 5s);  // announced again
    p.mark_ready("A");
    CHECK(p.due(with, at(7s), wall + 7s).empty());  // 2 s of the new 3 s
    CHECK(p.due(with, at(8s), wall + 8s) == ids{"A"});
}

TEST_CASE("approval_policy: with unready_before, the hold counts from NotBefore less it, between documents too",
          "[approval][unready_for]") {
    auto p = held_policy(3s, 60s);
    const auto wall = monday(12);
    auto e = make_event("A", {"vm_0"});
    e.not_before = wall + 100s;  // not ready from wall + 40 s
    const auto d = make_doc({e});
    p.observe(d, at(0s), wall);
    p.mark_ready("A");
    CHECK_FALSE(p.unready_since(at(0s)));      // still ready
    CHECK(p.due(d, at(0s), wall).empty());     // and so held: the hold is all ahead
    const auto next = p.next_deadline(d, at(0s), wall);
    REQUIRE(next);
    CHECK(*next == at(43s));                   // turned not ready at 40 s, held 3 s
    CHECK(p.due(d, at(42s), wall + 42s).empty());
    REQUIRE(p.unready_since(at(42s)));         // by time alone, no document since
    CHECK(*p.unready_since(at(42s)) == at(40s));
    CHECK(p.due(d, at(43s), wall + 43s) == ids{"A"});
    p.observe(d, at(50s), wall + 50s);         // the next document keeps the moment it turned
    CHECK(*p.unready_since(at(50s)) == at(40s));
}

TEST_CASE("approval_policy: unready_for holds only events that make this VM not ready", "[approval][unready_for]") {
    auto p = held_policy(3s, 0s, approval_scope::all);
    const auto wall = monday(12);
    const auto d = make_doc({make_event("N", {"vm_1"})});  // a neighbour's event: this VM stays ready
    p.observe(d, at(0s), wall);
    p.mark_ready("N");
    CHECK_FALSE(p.held(d.events[0], at(0s)));
    CHECK(p.due(d, at(0s), wall) == ids{"N"});
}

TEST_CASE("approval_policy: unready_for 0 holds nothing and tracks nothing", "[approval][unready_for]") {
    auto p = held_policy(0s);
    const auto d = make_doc({make_event("A", {"vm_0"})});
    p.observe(d, at(0s), monday(12));
    p.mark_ready("A");
    CHECK_FALSE(p.unready_since(at(0s)));
    CHECK_FALSE(p.held(d.events[0], at(0s)));
    CHECK(p.due(d, at(0s), monday(12)) == ids{"A"});
    CHECK_FALSE(p.next_deadline(d, at(0s), monday(12)));
}

}  // namespace test_approval
