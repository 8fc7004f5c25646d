// SPDX-License-Identifier: MIT
// The drain's reading and arithmetic (tools/watch/kubernetes/drain.hpp, node_actions.hpp), without a
// server: which pods stay, the Eviction bodies of both versions, what each eviction answer means,
// discovery, the grace periods and the deadline. The drain against a real API server is
// tests/kubernetes/check_agent_drain.py's; the v1 answer shapes here are those a 1.22+ server
// sends (the control plane here is 1.20 and serves only policy/v1beta1).
#include "kubernetes/drain.hpp"
#include "kubernetes/node_actions.hpp"

#include "json.hpp"

#include "catch.hpp"

#include <chrono>
#include <string>

namespace test_drain {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace watch::kubernetes;
using namespace std::chrono_literals;

namespace {

std::string pod_json(const std::string& name, const std::string& extra_meta = "", const std::string& spec = "{}",
                     const std::string& status = R"({"phase":"Running"})") {
    return R"({"metadata":{"name":")" + name + R"(","namespace":"apps","uid":"u-)" + name + "\"" + extra_meta + R"(},"spec":)" +
           spec + R"(,"status":)" + status + "}";
}

}  // namespace

TEST_CASE("a node's pods: DaemonSet, mirror and finished pods stay, every other pod is evicted, an unowned one too") {
    const std::string list =
        R"({"kind":"PodList","items":[)" +
        pod_json("ds", R"(,"ownerReferences":[{"kind":"DaemonSet","name":"d","uid":"x","controller":true}])") + "," +
        pod_json("mirror", R"(,"annotations":{"kubernetes.io/config.mirror":"abc"})") + "," +
        pod_json("done", "", "{}", R"({"phase":"Succeeded"})") + "," + pod_json("failed", "", "{}", R"({"phase":"Failed"})") + "," +
        pod_json("web", R"(,"ownerReferences":[{"kind":"ReplicaSet","name":"r","uid":"y","controller":true}])",
                 R"({"terminationGracePeriodSeconds":45})") +
        "," + pod_json("lonely", R"(,"ownerReferences":[{"kind":"DaemonSet","name":"d","uid":"x","controller":false}])") + "," +
        pod_json("pending", "", "{}", R"({"phase":"Pending"})") + "," +
        pod_json("leaving", R"(,"deletionTimestamp":"2026-11-28T10:00:00Z")") + "]}";
    auto pods = parse_pod_list(list);
    REQUIRE(pods);
    REQUIRE(pods->size() == 8);
    CHECK(fate_of((*pods)[0]) == pod_fate::stays_daemon_set);
    CHECK(fate_of((*pods)[1]) == pod_fate::stays_mirror);
    CHECK(fate_of((*pods)[2]) == pod_fate::stays_finished);
    CHECK(fate_of((*pods)[3]) == pod_fate::stays_finished);
    CHECK(fate_of((*pods)[4]) == pod_fate::evict);
    CHECK((*pods)[4].controlled);
    CHECK((*pods)[4].grace == 45);
    CHECK((*pods)[4].key() == "apps/web");
    CHECK((*pods)[4].uid == "u-web");
    // A DaemonSet that does not control the pod (controller: false) does not keep it.
    CHECK(fate_of((*pods)[5]) == pod_fate::evict);
    CHECK_FALSE((*pods)[5].controlled);
    CHECK_FALSE((*pods)[5].grace);
    CHECK(fate_of((*pods)[6]) == pod_fate::evict);
    CHECK((*pods)[7].being_deleted);
}

TEST_CASE("a pod list that is not one is refused, and members of the wrong type are absent, never a crash") {
    CHECK_FALSE(parse_pod_list(""));
    CHECK_FALSE(parse_pod_list("[]"));
    CHECK_FALSE(parse_pod_list(R"({"items":{}})"));
    CHECK(parse_pod_list(R"({"items":[]})")->empty());
    // No name or namespace: skipped. Wrong types: read as absent.
    auto pods = parse_pod_list(R"({"items":[1,"x",{"metadata":{"name":"n"}},
        {"metadata":{"name":"a","namespace":"b","annotations":[],"ownerReferences":{"kind":"DaemonSet"},"deletionTimestamp":null},
         "spec":{"terminationGracePeriodSeconds":"30"},"status":{"phase":7}},
        {"metadata":{"name":"c","namespace":"d"},"spec":{"terminationGracePeriodSeconds":-5}}]})");
    REQUIRE(pods);
    REQUIRE(pods->size() == 2);
    CHECK(fate_of((*pods)[0]) == pod_fate::evict);
    CHECK_FALSE((*pods)[0].being_deleted);
    CHECK_FALSE((*pods)[0].grace);
    CHECK((*pods)[0].phase.empty());
    CHECK_FALSE((*pods)[1].grace);
}

TEST_CASE("discovery: the Eviction's version is the one /api/v1 lists for pods/eviction") {
    const char* v1 = R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
        {"name":"pods","kind":"Pod","verbs":["get"]},
        {"name":"pods/eviction","kind":"Eviction","group":"policy","version":"v1","verbs":["create"]}]})";
    const char* v1beta1 = R"({"resources":[{"name":"pods/eviction","singularName":"","namespaced":true,"group":"policy",
        "version":"v1beta1","kind":"Eviction","verbs":["create"]}]})";
    CHECK(eviction_version(v1).value() == "policy/v1");
    CHECK(eviction_version(v1beta1).value() == "policy/v1beta1");
    auto none = eviction_version(R"({"resources":[{"name":"pods","kind":"Pod"}]})");
    REQUIRE_FALSE(none);
    CHECK(none.error().message.find("cannot evict") != std::string::npos);
    auto other = eviction_version(R"({"resources":[{"name":"pods/eviction","kind":"Eviction","group":"policy","version":"v2"}]})");
    REQUIRE_FALSE(other);
    CHECK(other.error().message.find("policy/v2") != std::string::npos);
    CHECK_FALSE(eviction_version("not json"));
    CHECK_FALSE(eviction_version(R"({"resources":7})"));
}

TEST_CASE("both Eviction bodies name the pod and carry the grace period asked") {
    pod_view p;
    p.namespace_name = "apps";
    p.name = "web-0";
    for (const std::string version : {"policy/v1", "policy/v1beta1"}) {
        INFO(version);
        auto doc = watch::parse_json(eviction_body(version, p, 12));
        REQUIRE(doc);
        const rapidjson::Value& e = *doc;
        CHECK(std::string(e["apiVersion"].GetString()) == version);
        CHECK(std::string(e["kind"].GetString()) == "Eviction");
        CHECK(std::string(e["metadata"]["name"].GetString()) == "web-0");
        CHECK(std::string(e["metadata"]["namespace"].GetString()) == "apps");
        CHECK(e["deleteOptions"]["gracePeriodSeconds"].GetInt64() == 12);
        auto plain = watch::parse_json(eviction_body(version, p, std::nullopt));
        REQUIRE(plain);
        const rapidjson::Value& q = *plain;
        CHECK_FALSE(q.HasMember("deleteOptions"));
    }
    // A name from the network is data: quotes stay inside the string.
    p.name = "a\"b";
    auto doc = watch::parse_json(eviction_body("policy/v1", p, 1));
    REQUIRE(doc);
    const rapidjson::Value& e = *doc;
    CHECK(std::string(e["metadata"]["name"].GetString()) == "a\"b");
}

TEST_CASE("eviction answers: 200/201 evicted, 429 refused with the budget's words, 404 gone, anything else failed") {
    CHECK(read_eviction_answer({201, R"({"kind":"Status","status":"Success"})"}).what == eviction_answer::kind::evicted);
    CHECK(read_eviction_answer({200, ""}).what == eviction_answer::kind::evicted);
    CHECK(read_eviction_answer({404, R"({"kind":"Status","reason":"NotFound"})"}).what == eviction_answer::kind::gone);
    // 1.20's answer, as recorded here (v1 servers send the same Status).
    const auto refused = read_eviction_answer(
        {429, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web needs 2 healthy pods and has 2 currently"}]},"code":429})"});
    CHECK(refused.what == eviction_answer::kind::refused);
    CHECK(refused.why == "The disruption budget web needs 2 healthy pods and has 2 currently");
    // Without a cause, the Status message; without a body, the status.
    CHECK(read_eviction_answer({429, R"({"message":"too many requests"})"}).why == "too many requests");
    CHECK(read_eviction_answer({429, ""}).why == "429 Too Many Requests");
    const auto failed = read_eviction_answer({500, R"({"kind":"Status","message":"etcdserver: request timed out"})"});
    CHECK(failed.what == eviction_answer::kind::failed);
    CHECK(failed.why.find("500") != std::string::npos);
    CHECK(failed.why.find("etcdserver: request timed out") != std::string::npos);
    CHECK(read_eviction_answer({403, "forbidden"}).what == eviction_answer::kind::failed);
}

TEST_CASE("grace: the pod's own, 30 s when unset, capped at the time left, never below 1") {
    CHECK(capped_grace(5, 100s) == 5);
    CHECK(capped_grace(std::nullopt, 100s) == 30);
    CHECK(capped_grace(600, 50s) == 50);
    CHECK(capped_grace(std::nullopt, 7s) == 7);
    CHECK(capped_grace(0, 50s) == 1);
    CHECK(capped_grace(600, 0s) == 1);
    CHECK(capped_grace(600, -20s) == 1);
}

TEST_CASE("the drain's deadline: NotBefore less the hook deadline and the margin, or the timeout from its start") {
    const auto start = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
    forewarn::event e;
    e.not_before = start + 75s;
    CHECK(drain_deadline(e, start, 15s, 10s, 120s) == start + 50s);  // the grace case of check_agent_drain.py
    e.not_before = start + 15min;
    CHECK(drain_deadline(e, start, 15s, 10s, 120s) == start + 15min - 25s);
    e.not_before.reset();  // Spot, Auto Scaling: no time
    CHECK(drain_deadline(e, start, 15s, 10s, 120s) == start + 120s);
    CHECK(drain_deadline(e, start, 15s, 10s, 30s) == start + 30s);
}

}  // namespace test_drain
