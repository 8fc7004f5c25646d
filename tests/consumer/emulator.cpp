// SPDX-License-Identifier: MIT
// A user's own unit test, outside forewarn's tree, on nothing but forewarn::emulator: forewarn's
// Azure client against the in-process emulator (no socket, no sleep), from Scheduled through the
// approval to Started; exits non-zero when anything is not as expected.
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/testing/simulated_transport.hpp>

#include "check.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace {
consumer::checks check{"forewarn-consumer-emulator"};
}  // namespace

int main() {
    namespace testing = forewarn::testing;
    testing::scenario_config config;
    config.rate_limit = 0;  // this test is not about IMDS's 5 requests/s
    config.vms[0].name = "WestNO_0";
    auto s = std::make_shared<testing::scenario>(config);
    testing::simulated_transport transport(s);

    forewarn::azure::client_options options;
    options.rate_limit = false;  // the token bucket would wait in real time
    forewarn::azure::basic_scheduled_events_client<testing::simulated_transport> client(options, transport);

    testing::azure_event_spec freeze;
    freeze.id = "C7061BAC-AFDC-4513-B24B-AA5F13A16123";
    s->add_azure_event(freeze);

    auto doc = client.fetch();
    check(doc.has_value(), "fetch succeeds");
    if (doc) {
        check(doc->events.size() == 1, "one event");
        check(!doc->events.empty() && doc->events[0].status == forewarn::event_status::scheduled, "it is Scheduled");
        check(!doc->events.empty() && doc->events[0].affects("WestNO_0"), "it names this VM");
    }
    check(client.approve({freeze.id}).has_value(), "the approval is accepted");
    doc = client.fetch();
    check(doc && doc->events.size() == 1 && doc->events[0].status == forewarn::event_status::started,
          "approved, it has Started");

    s->advance(std::chrono::minutes(1));  // past the Freeze's 5 s impact
    doc = client.fetch();
    check(doc && doc->events.empty(), "after its impact it is gone");

    return check.finish();
}
