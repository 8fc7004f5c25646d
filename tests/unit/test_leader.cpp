// SPDX-License-Identifier: MIT
#include <forewarn/poller/leader.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace test_leader {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

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

}  // namespace

TEST_CASE("leader_election: the first listed name leads by default", "[leader]") {
    const leader_election el;
    const auto e = make_event("A", {"web_3", "web_1", "web_2"});
    CHECK(el.leader(e) == "web_3");
    CHECK(el.is_leader(e, "web_3"));
    CHECK_FALSE(el.is_leader(e, "web_1"));
    CHECK_FALSE(el.is_leader(e, "other"));
    CHECK_FALSE(el.is_leader(e, ""));
}

TEST_CASE("leader_election: lowest_name elects the lowest name whatever the order", "[leader]") {
    const leader_election el(leader_rule::lowest_name);
    const auto e = make_event("A", {"web_3", "web_1", "web_2"});
    CHECK(el.leader(e) == "web_1");
    CHECK(el.is_leader(e, "web_1"));
    CHECK_FALSE(el.is_leader(e, "web_3"));
}

TEST_CASE("leader_election: an event naming nobody has no leader", "[leader]") {
    const leader_election el;
    const auto e = make_event("A", {});
    CHECK(el.leader(e).empty());
    CHECK_FALSE(el.is_leader(e, ""));
    CHECK_FALSE(el.may_approve(e, "vm", 1h));
}

TEST_CASE("leader_election: a follower approves a user event only after the grace", "[leader]") {
    const leader_election el(leader_rule::first_listed, 30s);
    const auto user = make_event("U", {"vm_0", "vm_1"}, event_source::user);
    const auto platform = make_event("P", {"vm_0", "vm_1"}, event_source::platform);
    CHECK(el.may_approve(user, "vm_0", 0s));  // the leader at once
    CHECK_FALSE(el.may_approve(user, "vm_1", 29s));
    CHECK(el.may_approve(user, "vm_1", 30s));
    CHECK_FALSE(el.may_approve(platform, "vm_1", 1h));  // platform events: leader and NotBefore only
    CHECK_FALSE(el.may_approve(user, "vm_9", 1h));      // not named: never
    auto started = user;
    started.status = event_status::started;
    CHECK_FALSE(el.may_approve(started, "vm_1", 1h));
}

}  // namespace test_leader
