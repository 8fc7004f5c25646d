// SPDX-License-Identifier: MIT
// The poller's health part (detail/poller/health.hpp): the counters behind health().
#include <forewarn/detail/poller/health.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace test_health {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::clock;
using forewarn::document;
using forewarn::errc;
using forewarn::error;
using forewarn::event;
using forewarn::detail::health_record;

TEST_CASE("health: a document ends a run of failures and gives the events, key errors and time", "[health]") {
    health_record h;
    h.failed();
    h.failed();
    auto s = h.snapshot(true);
    CHECK(s.running);
    CHECK(s.failures == 2);
    CHECK(s.consecutive_failures == 2);
    CHECK_FALSE(s.last_success);

    document d;
    d.events.resize(3);
    d.key_errors.push_back(error(errc::parse_error, "bad key"));
    const clock::wall_time_point wall{std::chrono::seconds(1700000000)};
    const clock::time_point now{5s};
    h.polled(d, wall, now);
    s = h.snapshot(false);
    CHECK_FALSE(s.running);
    CHECK(s.polls == 1);
    CHECK(s.failures == 2);
    CHECK(s.consecutive_failures == 0);
    CHECK(s.last_success == wall);
    CHECK(s.last_success_at == now);
    CHECK(s.events == 3);
    REQUIRE(s.key_errors.size() == 1);
    CHECK(s.key_errors[0].message == "bad key");

    d.key_errors.clear();
    h.polled(d, wall, now);
    CHECK(h.snapshot(false).key_errors.empty());  // the key answered again
}

TEST_CASE("health: errors, the name and approvals", "[health]") {
    health_record h;
    h.noted(error(errc::timeout, "slow"));
    h.set_self("vm0");
    h.awaiting({"A", "B"});
    h.awaiting({"B"}, true);
    const auto s = h.snapshot(true);
    REQUIRE(s.last_error);
    CHECK(s.last_error->code == errc::timeout);
    CHECK(s.self == "vm0");
    CHECK(h.self() == "vm0");
    CHECK(s.awaiting_approval == std::vector<std::string>{"B"});
    CHECK(s.approvals == 1);
}

}  // namespace test_health
