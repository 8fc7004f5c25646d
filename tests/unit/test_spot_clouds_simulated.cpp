// SPDX-License-Identifier: MIT
// The Alibaba and Tencent clients through the public API: pollers over them against the emulated
// services (testing::harness, one manual clock), at their default settings.
#include <forewarn/testing/harness.hpp>

#include "catch.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace test_spot_clouds_simulated {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;

namespace {

// What the handlers saw, read on the test's thread after advance().
struct seen {
    std::mutex mutex;
    std::vector<forewarn::change> prepares;
    std::vector<forewarn::error> errors;
    forewarn::poller_handlers handlers() {
        forewarn::poller_handlers on;
        on.on_prepare = [this](const forewarn::change& c, forewarn::approval_handle a) {
            std::lock_guard<std::mutex> lock(mutex);
            prepares.push_back(c);
            a.ready();
        };
        on.on_error = [this](const forewarn::error& e) {
            std::lock_guard<std::mutex> lock(mutex);
            errors.push_back(e);
        };
        return on;
    }
    std::size_t count() {
        std::lock_guard<std::mutex> lock(mutex);
        return prepares.size();
    }
};

}  // namespace

TEST_CASE("alibaba through a poller: the reclaim notice is heard within one spot interval - a forgotten token is renewed",
          "[alibaba][harness]") {
    forewarn::testing::harness h;
    seen s;
    h.add_alibaba_poller("", s.handlers());
    REQUIRE(h.start());
    REQUIRE(h.run_for(3s));
    CHECK(s.count() == 0);
    const auto issued = h.scenario().alibaba_tokens_issued();
    CHECK(issued == 1);
    h.scenario().expire_alibaba_tokens();  // the instance stopped and started: a 401, then a new token
    h.scenario().alibaba_spot(5min);
    const auto posted = h.clock().wall_now();
    REQUIRE(h.advance(1s));  // one default spot_interval
    REQUIRE(s.count() == 1);
    const auto& c = s.prepares[0];
    CHECK(c.event.id == "spot-termination");
    CHECK(c.event.type == forewarn::event_type::preempt);
    REQUIRE(c.event.not_before.has_value());
    CHECK(*c.event.not_before - posted > 4min);
    CHECK(*c.event.not_before - posted <= 5min);
    CHECK(c.event.resources == std::vector<std::string>{"vm0"});
    CHECK(h.scenario().alibaba_tokens_issued() == 2);
    CHECK(s.errors.empty());
}

TEST_CASE("tencent through a poller: the reclaim notice is heard within one spot interval at its instant in UTC",
          "[tencent][harness]") {
    forewarn::testing::harness h;
    seen s;
    h.add_tencent_poller("", s.handlers());
    REQUIRE(h.start());
    REQUIRE(h.run_for(3s));
    CHECK(s.count() == 0);
    h.scenario().tencent_spot(2min);
    const auto posted = h.clock().wall_now();
    REQUIRE(h.advance(1s));  // one default spot_interval
    REQUIRE(s.count() == 1);
    const auto& c = s.prepares[0];
    CHECK(c.event.id == "spot-termination");
    REQUIRE(c.event.not_before.has_value());
    // The emulator writes it in UTC+8 without a zone; read as UTC it would be eight hours later.
    CHECK(*c.event.not_before - posted > 1min);
    CHECK(*c.event.not_before - posted <= 2min);
    CHECK(s.errors.empty());
}

}  // namespace test_spot_clouds_simulated
