// SPDX-License-Identifier: MIT
// A user's own unit test, outside forewarn's tree, on nothing but forewarn::emulator: a real
// poller over forewarn's Azure client against the in-process emulator, on one manual clock
// (testing::harness): no socket, no sleep. The handlers record; the checks run on this thread
// after each advance(). docs/emulator.md shows this program. Exits non-zero when anything is not
// as expected.
#include <forewarn/testing/harness.hpp>

#include "check.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace {
consumer::checks check{"forewarn-consumer-emulator"};

// What the handlers saw, read by the test's thread (the handlers run on the poller's).
struct seen {
    std::mutex mutex;
    std::vector<std::string> lines;
    void add(std::string s) {
        std::lock_guard<std::mutex> lock(mutex);
        lines.push_back(std::move(s));
    }
    std::vector<std::string> get() {
        std::lock_guard<std::mutex> lock(mutex);
        return lines;
    }
};
}  // namespace

int main() {
    using namespace std::chrono_literals;
    namespace testing = forewarn::testing;

    testing::scenario_config config;
    config.vms[0].name = "WestNO_0";
    testing::harness h(config);  // the emulated services, on a manual clock

    seen log;
    forewarn::poller_handlers on;
    on.on_prepare = [&](const forewarn::change& c, forewarn::approval_handle approval) {
        log.add("prepare " + c.event.id);  // drain here, then:
        approval.ready();
    };
    on.on_started = [&](const forewarn::change& c) { log.add("started " + c.event.id); };
    on.on_recover = [&](const forewarn::change& c) {
        log.add("recover " + c.event.id + " " + std::string(forewarn::to_string(c.reason)));
    };
    auto& poller = h.add_azure_poller("WestNO_0", on);
    check(h.start(), "the poller starts and handles the first (empty) document");
    check(poller.self() == "WestNO_0", "it knows its VM before any event");

    testing::azure_event_spec freeze;
    freeze.id = "C7061BAC-AFDC-4513-B24B-AA5F13A16123";
    h.scenario().add_azure_event(freeze);  // a Freeze for WestNO_0, NotBefore in 15 min

    check(h.advance(1s), "one poll interval later the poller is idle again");
    auto state = h.scenario().azure_event(freeze.id);
    check(state && state->approved_by == "WestNO_0", "the poller approved it once the handler was ready");
    check(state && state->state == testing::azure_event_state::phase::started, "approved, it has Started");

    check(h.run_for(1min), "a minute of polls, one a second");  // past the Freeze's 5 s impact
    state = h.scenario().azure_event(freeze.id);
    check(state && state->state == testing::azure_event_state::phase::removed, "after its impact it is gone");

    const std::vector<std::string> want{"prepare " + freeze.id, "started " + freeze.id, "recover " + freeze.id + " completed"};
    check(log.get() == want, "prepare, started, then recover with reason completed, each once");
    h.stop();
    return check.finish();
}
