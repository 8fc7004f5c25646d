// SPDX-License-Identifier: MIT
// The poller's identity part (detail/poller/identity.hpp): this VM's name, asked again after a growing
// pause while the source cannot tell.
#include <forewarn/detail/poller/identity.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace test_identity {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::clock;
using forewarn::errc;
using forewarn::error;
using forewarn::result;
using forewarn::detail::identity_lookup;

TEST_CASE("identity: a failure is asked again after 1 s, then 2 s, 4 s, ... at most a minute", "[identity]") {
    identity_lookup id;
    clock::time_point now{};
    int asks = 0;
    auto failing = [&]() -> result<std::string> {
        ++asks;
        return error(errc::timeout, "no answer");
    };
    auto first = id.learn(now, true, failing);
    REQUIRE(asks == 1);
    REQUIRE_FALSE(first);
    CHECK(first.error().message == "cannot learn this VM's name, so nothing is approved yet: no answer");
    std::vector<std::chrono::milliseconds> pauses;  // from each failed ask to the next ask
    for (int round = 0; round < 9; ++round) {
        const int before = asks;
        auto step = 0ms;
        while (asks == before && step < 10min) {
            step += 250ms;
            (void)id.learn(now + step, true, failing);
        }
        pauses.push_back(step);
        now += step;
    }
    CHECK(pauses == std::vector<std::chrono::milliseconds>{1000ms, 2000ms, 4000ms, 8000ms, 16000ms, 32000ms, 60000ms,
                                                          60000ms, 60000ms});
}

TEST_CASE("identity: once learned it is never asked again - a cancelled ask changes nothing", "[identity]") {
    identity_lookup id;
    const clock::time_point now{};
    auto cancelled = id.learn(now, false, []() -> result<std::string> { return error(errc::cancelled, "stop"); });
    REQUIRE_FALSE(cancelled);
    CHECK(cancelled.error().code == errc::cancelled);
    int asks = 0;
    auto named = [&]() -> result<std::string> {
        ++asks;
        return std::string("vm0");
    };
    auto r = id.learn(now, false, named);  // no pause after a cancellation
    REQUIRE(r);
    REQUIRE(*r);
    CHECK(**r == "vm0");
    CHECK(id.known());
    CHECK(id.name() == "vm0");
    auto again = id.learn(now + 1h, false, named);
    REQUIRE(again);
    CHECK_FALSE(*again);
    CHECK(asks == 1);

    identity_lookup other;
    auto e = other.learn(now, false, []() -> result<std::string> { return error(errc::not_found, "no name"); });
    REQUIRE_FALSE(e);
    CHECK(e.error().message == "cannot learn this VM's name (self() stays empty): no name");
}

}  // namespace test_identity
