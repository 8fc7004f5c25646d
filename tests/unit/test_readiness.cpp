// SPDX-License-Identifier: MIT
// readiness.hpp: whether this VM should take traffic, from the last document.
#include <forewarn/readiness.hpp>

#include "catch.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace test_readiness {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::event;
using forewarn::event_status;

namespace {

const auto now = std::chrono::system_clock::time_point(std::chrono::hours(24 * 20000));

event make(std::string id, event_status status, std::vector<std::string> resources,
           std::optional<std::chrono::system_clock::time_point> not_before = now + 10min) {
    event e;
    e.id = std::move(id);
    e.type = forewarn::event_type::reboot;
    e.status = status;
    e.resources = std::move(resources);
    e.not_before = not_before;
    return e;
}

forewarn::document doc(std::vector<event> events) {
    forewarn::document d;
    d.events = std::move(events);
    return d;
}

}  // namespace

TEST_CASE("readiness: ready with nothing near, not from an event naming this VM until it is gone", "[readiness]") {
    CHECK(forewarn::ready_for_traffic(doc({}), "vm0", now).ready);
    // Another VM's event leaves this one ready.
    CHECK(forewarn::ready_for_traffic(doc({make("O", event_status::scheduled, {"vm1"})}), "vm0", now).ready);
    const auto scheduled = forewarn::ready_for_traffic(doc({make("A", event_status::scheduled, {"vm1", "vm0"})}), "vm0", now);
    CHECK_FALSE(scheduled.ready);
    CHECK(scheduled.event_id == "A");
    CHECK(scheduled.why == "event A (reboot) is scheduled");
    CHECK_FALSE(scheduled.changes_at);
    const auto started = forewarn::ready_for_traffic(doc({make("A", event_status::started, {"vm0"})}), "vm0", now);
    CHECK_FALSE(started.ready);
    CHECK(started.why == "event A (reboot) is under way");
    // GCE and AWS events name no resource: they are this VM's.
    CHECK_FALSE(forewarn::ready_for_traffic(doc({make("G", event_status::scheduled, {})}), "", now).ready);
    // AWS keeps finished events in its list.
    CHECK(forewarn::ready_for_traffic(doc({make("W", event_status::completed, {}), make("X", event_status::cancelled, {})}), "", now)
              .ready);
}

TEST_CASE("readiness: with unready_before, not ready from that long before NotBefore, and says when that comes",
          "[readiness]") {
    forewarn::readiness_options o;
    o.unready_before = 300s;
    const auto e = make("A", event_status::scheduled, {"vm0"}, now + 10min);
    const auto early = forewarn::ready_for_traffic(doc({e}), "vm0", now, o);
    CHECK(early.ready);
    REQUIRE(early.changes_at);
    CHECK(*early.changes_at == now + 5min);
    CHECK(forewarn::ready_for_traffic(doc({e}), "vm0", now + 5min - 1s, o).ready);
    const auto late = forewarn::ready_for_traffic(doc({e}), "vm0", now + 5min, o);
    CHECK_FALSE(late.ready);
    CHECK(late.why == "event A (reboot) is scheduled to start within 300 s");
    // The earliest of several; an event without NotBefore counts from its announcement.
    const auto two = forewarn::ready_for_traffic(doc({e, make("B", event_status::scheduled, {"vm0"}, now + 7min)}), "vm0", now, o);
    REQUIRE(two.changes_at);
    CHECK(*two.changes_at == now + 2min);
    CHECK_FALSE(forewarn::ready_for_traffic(doc({make("N", event_status::scheduled, {"vm0"}, std::nullopt)}), "vm0", now, o).ready);
    // Started is not ready whatever the option says.
    CHECK_FALSE(forewarn::ready_for_traffic(doc({make("S", event_status::started, {"vm0"}, now + 1h)}), "vm0", now, o).ready);
}

}  // namespace test_readiness
