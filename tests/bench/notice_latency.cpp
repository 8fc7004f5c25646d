// SPDX-License-Identifier: MIT
// How soon a notice reaches on_prepare at default settings, and what watching costs in requests,
// on the in-process emulator and a manual clock (testing::harness): model time, so the figures
// are the cadence's own (no network, no scheduler noise) and the same on every machine.
//
//   forewarn-bench-notice-latency
//
// AWS: a Spot instance-action appears at 50 points spread over the client's cadence; the time
// from its appearance to on_prepare, and the requests per second at rest. GCE: an
// upcoming-maintenance window appears on a VM whose key answered the 503 "no notifications"
// (no ETag), at 50 points; the time to on_prepare. Alibaba and Tencent: a Spot reclaim notice at
// 50 points, the same way. Prints numbers; asserts nothing.
#include <forewarn/testing/harness.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace testing = forewarn::testing;

namespace {

double ms(forewarn::clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void report(const char* what, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto at = [&](double q) { return v[static_cast<std::size_t>(q * double(v.size() - 1))]; };
    std::printf("%-44s n=%zu  min %.0f ms  median %.0f ms  p90 %.0f ms  max %.0f ms\n", what, v.size(), v.front(),
                at(0.5), at(0.9), v.back());
}

// Time from `appear()` to the first on_prepare, `offset` into a steady run of the poller that
// `add` adds; steps of 10 ms of model time.
template <class Add, class Appear>
double latency(Add add, Appear appear, forewarn::clock::duration offset) {
    testing::harness h;
    std::atomic<bool> prepared{false};
    forewarn::poller_handlers on;
    on.on_prepare = [&](const forewarn::change&, forewarn::approval_handle a) {
        prepared = true;
        a.ready();
    };
    add(h, on);
    if (!h.start() || !h.run_for(10s) || !h.run_for(offset, 10ms)) return -1;
    const auto appeared = h.clock().now();
    appear(h);
    while (!prepared && h.clock().now() - appeared < 120s)
        if (!h.advance(10ms)) return -1;
    return ms(h.clock().now() - appeared);
}

}  // namespace

int main() {
    constexpr int samples = 50;
    std::vector<double> spot, upcoming, alibaba, tencent;
    for (int i = 0; i < samples; ++i) {
        const auto offset = std::chrono::milliseconds(i * 5000 / samples);  // over the 5 s cadence
        spot.push_back(latency([](testing::harness& h, const forewarn::poller_handlers& on) { h.add_aws_poller("", on); },
                               [](testing::harness& h) { h.scenario().aws_spot(); }, offset));
        upcoming.push_back(latency(
            [](testing::harness& h, const forewarn::poller_handlers& on) {
                h.scenario().set_gce_upcoming("no_notifications");
                h.add_gce_poller("", on);
            },
            [](testing::harness& h) {
                h.scenario().set_gce_upcoming(
                    R"({"type":"SCHEDULED","maintenance_status":"PENDING","window_start_time":"2026-12-03T10:00:00Z",)"
                    R"("window_end_time":"2026-12-03T14:00:00Z"})");
            },
            offset));
        alibaba.push_back(latency([](testing::harness& h, const forewarn::poller_handlers& on) { h.add_alibaba_poller("", on); },
                                  [](testing::harness& h) { h.scenario().alibaba_spot(); }, offset));
        tencent.push_back(latency([](testing::harness& h, const forewarn::poller_handlers& on) { h.add_tencent_poller("", on); },
                                  [](testing::harness& h) { h.scenario().tencent_spot(); }, offset));
    }
    report("AWS Spot instance-action -> on_prepare", spot);
    report("GCE upcoming-maintenance (after 503) -> on_prepare", upcoming);
    report("Alibaba spot termination-time -> on_prepare", alibaba);
    report("Tencent spot termination-time -> on_prepare", tencent);

    // Requests per second at rest, over 10 minutes of model time after the first minute.
    auto rate = [](std::function<void(testing::harness&)> add) {
        testing::harness h;
        add(h);
        h.start();
        h.run_for(60s);
        h.scenario().clear_requests();
        h.run_for(600s);
        return double(h.scenario().requests().size()) / 600.0;
    };
    std::printf("requests per second at rest: AWS %.2f, GCE (upcoming 503) %.2f, GCE (all keys watched) %.3f, Azure %.2f, "
                "Alibaba %.2f, Tencent %.2f\n",
                rate([](testing::harness& h) { h.add_aws_poller("", {}); }),
                rate([](testing::harness& h) {
                    h.scenario().set_gce_upcoming("no_notifications");
                    h.add_gce_poller("", {});
                }),
                rate([](testing::harness& h) {
                    h.scenario().set_gce_upcoming("empty");
                    h.add_gce_poller("", {});
                }),
                rate([](testing::harness& h) { h.add_azure_poller("", {}); }),
                rate([](testing::harness& h) { h.add_alibaba_poller("", {}); }),
                rate([](testing::harness& h) { h.add_tencent_poller("", {}); }));
    return 0;
}
