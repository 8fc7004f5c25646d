// SPDX-License-Identifier: MIT
// The default rules of tools/watch/kubernetes/node_actions.hpp: which event types take the node
// out of service, and the condition's reason for each. What they do to a Node is
// tests/kubernetes/check_agent_node.py's, against a real API server.
#include "kubernetes/node_actions.hpp"

#include "catch.hpp"

#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace test_node_actions {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::event_type;
using watch::kubernetes::condition_reason;
using watch::kubernetes::disruptive;

TEST_CASE("every event type is disruptive but live migration, freeze and rebalance, and has its own CamelCase reason") {
    const event_type all[] = {event_type::unknown,      event_type::freeze,         event_type::reboot,    event_type::redeploy,
                              event_type::preempt,      event_type::terminate,      event_type::live_migrate,
                              event_type::host_terminate, event_type::preempted,    event_type::maintenance,
                              event_type::retirement,   event_type::stop,           event_type::hibernate, event_type::rebalance};
    std::set<std::string> reasons;
    for (const auto t : all) {
        INFO(forewarn::to_string(t));
        const bool expected = t != event_type::live_migrate && t != event_type::freeze && t != event_type::rebalance;
        CHECK(disruptive(t) == expected);
        const std::string r = condition_reason(t);
        REQUIRE_FALSE(r.empty());
        CHECK(r[0] >= 'A');
        CHECK(r[0] <= 'Z');
        CHECK(r.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == std::string::npos);
        reasons.insert(r);
    }
    CHECK(reasons.size() == sizeof all / sizeof all[0]);  // no two types share a reason
    CHECK(condition_reason(event_type::live_migrate) == "LiveMigrate");
    CHECK(condition_reason(event_type::reboot) == "Reboot");
}

TEST_CASE("the node's record of events: set, kept beside others, removed, and started afresh when malformed") {
    using watch::kubernetes::records_of;
    using watch::kubernetes::with_record;
    const std::string one = with_record(nullptr, "A", std::string(R"({"kind":"prepare","event":{"id":"A"}})"));
    CHECK(records_of(one) == std::vector<std::string>{R"({"kind":"prepare","event":{"id":"A"}})"});
    const std::string two = with_record(&one, "B", std::string(R"({"kind":"prepare","event":{"id":"B"}})"));
    CHECK(records_of(two).size() == 2);
    // Set again: replaced, not doubled.
    CHECK(records_of(with_record(&two, "A", std::string(R"({"kind":"prepare","event":{"id":"A","x":1}})"))).size() == 2);
    const std::string back = with_record(&two, "B", std::nullopt);
    CHECK(back == one);
    CHECK(with_record(&one, "A", std::nullopt).empty());  // none left: the annotation goes
    // Someone else's value, or a record that is not an object: never a crash.
    const std::string junk = "not json";
    CHECK(records_of(junk).empty());
    CHECK(records_of(with_record(&junk, "C", std::string(R"({"event":{"id":"C"}})"))).size() == 1);
    CHECK(records_of(R"({"A":"text","B":{"event":{"id":"B"}}})").size() == 1);
    CHECK(with_record(nullptr, "D", std::string("[1,2]")).empty());
}

TEST_CASE("the rules: defaults per type, a rules document on top of them, and every mistake in it named") {
    using watch::kubernetes::node_rules;
    const node_rules defaults;
    CHECK(defaults.of(event_type::reboot).taint);
    CHECK(defaults.of(event_type::reboot).cordon);
    CHECK(defaults.of(event_type::reboot).drain);
    CHECK(defaults.of(event_type::reboot).effect == "NoSchedule");
    CHECK_FALSE(defaults.of(event_type::freeze).takes_out());
    CHECK_FALSE(defaults.of(event_type::live_migrate).takes_out());

    auto r = node_rules::parse(R"({"freeze":{"taint":true,"effect":"PreferNoSchedule"},"reboot":{"drain":false},
                                   "preempted":{"taint":false,"cordon":false,"drain":false}})");
    REQUIRE(r);
    CHECK(r->of(event_type::freeze).taint);
    CHECK_FALSE(r->of(event_type::freeze).cordon);  // left out: the type's default
    CHECK(r->of(event_type::freeze).effect == "PreferNoSchedule");
    CHECK(r->of(event_type::reboot).cordon);
    CHECK_FALSE(r->of(event_type::reboot).drain);
    CHECK_FALSE(r->of(event_type::preempted).takes_out());
    CHECK(r->of(event_type::redeploy).drain);  // not named: untouched

    for (const char* bad : {"", "[]", R"({"reboot":true})", R"({"rebot":{}})", R"({"reboot":{"drain":"yes"}})",
                            R"({"reboot":{"effect":"NoWay"}})", R"({"reboot":{"evict":true}})"}) {
        INFO(bad);
        auto e = node_rules::parse(bad);
        REQUIRE_FALSE(e);
        CHECK(e.error().message.find("the Kubernetes rules") != std::string::npos);
    }
    CHECK(node_rules::parse(R"({"rebot":{}})").error().message.find("\"rebot\" is not an event type") != std::string::npos);
    CHECK(node_rules::parse(R"({"reboot":{"evict":true}})").error().message.find("\"evict\"") != std::string::npos);

    node_rules flags;
    flags.drain_also({event_type::freeze});
    CHECK(flags.of(event_type::freeze).drain);
    CHECK(flags.of(event_type::freeze).cordon);
    flags.no_drain();
    CHECK_FALSE(flags.of(event_type::freeze).drain);
    CHECK_FALSE(flags.of(event_type::reboot).drain);
    CHECK(flags.of(event_type::reboot).cordon);
    CHECK(node_rules::from_file("/nonexistent/rules.json").error().code == forewarn::errc::io_error);
}

TEST_CASE("docs/kubernetes.md's rules example is a rules document the agent takes, and means what the page says") {
    std::ifstream in(FOREWARN_DOCS_DIR "/kubernetes.md");
    REQUIRE(in);
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto section = page.find("## The rules");
    REQUIRE(section != std::string::npos);
    const auto open = page.find("```json\n", section);
    REQUIRE(open != std::string::npos);
    const auto close = page.find("```", open + 8);
    REQUIRE(close != std::string::npos);
    auto rules = watch::kubernetes::node_rules::parse(page.substr(open + 8, close - open - 8));
    REQUIRE(rules);
    CHECK(rules->of(event_type::freeze).taint);
    CHECK(rules->of(event_type::freeze).effect == "PreferNoSchedule");
    CHECK_FALSE(rules->of(event_type::retirement).drain);
    CHECK(rules->of(event_type::retirement).cordon);
    CHECK_FALSE(rules->of(event_type::preempted).takes_out());
}

}  // namespace test_node_actions
