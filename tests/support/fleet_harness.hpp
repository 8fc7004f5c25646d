// SPDX-License-Identifier: MIT
#pragma once

// What the fleet budget's tests share, on testing::harness: VMs named vm0..vmN-1, pollers that are
// ready at once and approve their own events through a coordinator, a Reboot per VM, and how many
// of the scenario's events are Started now. Used by tests/unit/test_fleet.cpp (the fake) and
// tests/integration/test_fleet_etcd.cpp (real etcd), so both run the same fleet.

#include <forewarn/poller/coordinator.hpp>
#include <forewarn/testing/harness.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace forewarn_test {

/// A scenario with VMs vm0 .. vm<n-1>.
inline forewarn::testing::scenario_config fleet_vms(int n) {
    forewarn::testing::scenario_config c;
    c.vms.clear();
    for (int i = 0; i < n; ++i) {
        forewarn::testing::vm_identity v;
        v.name = "vm" + std::to_string(i);
        c.vms.push_back(v);
    }
    return c;
}

/// Handlers whose prepare says ready at once.
inline forewarn::poller_handlers ready_at_once() {
    forewarn::poller_handlers h;
    h.on_prepare = [](const forewarn::change&, forewarn::approval_handle a) { a.ready(); };
    return h;
}

/// An Azure poller for `vm` that approves its own events once `coordinator` admits them.
inline void add_fleet_poller(forewarn::testing::harness& h, const std::string& vm,
                             std::shared_ptr<forewarn::approval_coordinator> coordinator,
                             forewarn::poller_handlers handlers = ready_at_once()) {
    forewarn::poller_options o;
    o.approval.scope = forewarn::approval_scope::own;
    o.coordinator = std::move(coordinator);
    h.add_azure_poller(vm, std::move(handlers), o);
}

/// A Reboot "REBOOT-<i>" for each vm<i>, i < n, announced at once (15 min notice), `impact` long.
inline void add_reboots(forewarn::testing::harness& h, int n, std::chrono::milliseconds impact) {
    for (int i = 0; i < n; ++i) {
        forewarn::testing::azure_event_spec s;
        s.id = "REBOOT-" + std::to_string(i);
        s.type = "Reboot";
        s.resources = {"vm" + std::to_string(i)};
        s.impact = impact;
        h.scenario().add_azure_event(s);
    }
}

/// How many of the scenario's Azure events are Started now.
inline std::size_t started_events(forewarn::testing::harness& h) {
    const auto all = h.scenario().azure_events();
    return static_cast<std::size_t>(std::count_if(all.begin(), all.end(), [](const forewarn::testing::azure_event_state& e) {
        return e.state == forewarn::testing::azure_event_state::phase::started;
    }));
}

}  // namespace forewarn_test
