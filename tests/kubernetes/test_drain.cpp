// SPDX-License-Identifier: MIT
// The drain's reading and arithmetic (tools/watch/kubernetes/drain.hpp, node_actions.hpp), without a
// server: which pods stay, the Eviction bodies of both versions, what each eviction answer means,
// discovery, the grace periods and the deadline; and drain::step() itself over a fake API (the
// api_client's transport seam): the grace it sends, a budget's 429 held to the deadline, critical
// pods last. The drain against a real API server is
// tests/kubernetes/check_agent_drain.py's; the v1 answer shapes here are those a 1.22+ server
// sends (the control plane here is 1.20 and serves only policy/v1beta1).
#include "kubernetes/drain.hpp"
#include "kubernetes/node_actions.hpp"

#include "json.hpp"

#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace test_drain {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace watch::kubernetes;
using namespace std::chrono_literals;

namespace {

std::string pod_json(const std::string& name, const std::string& extra_meta = "", const std::string& spec = "{}",
                     const std::string& status = R"({"phase":"Running"})") {
    return R"({"metadata":{"name":")" + name + R"(","namespace":"apps","uid":"u-)" + name + "\"" + extra_meta + R"(},"spec":)" +
           spec + R"(,"status":)" + status + "}";
}

// A node's pods behind a fake API server: GET /api/v1 (discovery), the node's pod list, and an
// eviction per pod that answers `eviction_status` (201: accepted; the pod stays listed until
// gone() takes it, as a pod stays through its grace). Every eviction's body is kept.
class fake_api {
public:
    fake_api() {
        transport_.otherwise([this](const forewarn::http_request& r) { return answer(r); });
    }
    void add(const std::string& name, const std::string& spec, const std::string& owner_kind = "ReplicaSet") {
        std::lock_guard<std::mutex> lock(m_);
        pods_[name] = pod_json(name, R"(,"ownerReferences":[{"kind":")" + owner_kind + R"(","name":"o","uid":"o1","controller":true}])", spec);
    }
    void gone(const std::string& name) {
        std::lock_guard<std::mutex> lock(m_);
        pods_.erase(name);
    }
    void answer_evictions(int status) {
        std::lock_guard<std::mutex> lock(m_);
        eviction_status_ = status;
    }
    /// The pods asked to leave, in order, with the body of each eviction.
    std::vector<std::pair<std::string, std::string>> evictions() const {
        std::lock_guard<std::mutex> lock(m_);
        return evictions_;
    }
    std::vector<std::string> evicted_names() const {
        std::vector<std::string> out;
        for (const auto& e : evictions()) out.push_back(e.first);
        return out;
    }
    api_client client() {
        connection c;
        c.server = "https://api.test";
        c.token = token_source::fixed("t");
        api_options o;
        o.attempts = 1;
        return api_client(std::move(c), api_transport::of(transport_), o);
    }

private:
    forewarn::result<forewarn::http_response> answer(const forewarn::http_request& r) {
        std::lock_guard<std::mutex> lock(m_);
        forewarn::http_response out;
        out.status = 200;
        const std::string path = r.url.substr(std::string("https://api.test").size());
        if (path == "/api/v1") {
            out.body = R"({"kind":"APIResourceList","resources":[{"name":"pods/eviction","kind":"Eviction","group":"policy","version":"v1beta1"}]})";
        } else if (path.rfind("/api/v1/pods?", 0) == 0) {
            std::string items;
            for (const auto& p : pods_) items += (items.empty() ? "" : ",") + p.second;
            out.body = R"({"kind":"PodList","items":[)" + items + "]}";
        } else if (r.method == forewarn::http_method::post && path.size() > 9 && path.substr(path.size() - 9) == "/eviction") {
            const auto start = path.rfind("/pods/") + 6;
            evictions_.emplace_back(path.substr(start, path.size() - 9 - start), r.body);
            out.status = eviction_status_;
            if (eviction_status_ == 429)
                out.body = R"({"kind":"Status","message":"Cannot evict pod as it would violate the pod's disruption budget.",)"
                           R"("details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web needs 2 healthy pods and has 2 currently"}]}})";
        } else {
            out.status = 404;
        }
        return out;
    }

    forewarn::testing::fake_transport transport_;
    mutable std::mutex m_;
    std::map<std::string, std::string> pods_;
    std::vector<std::pair<std::string, std::string>> evictions_;
    int eviction_status_ = 201;
};

const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));

}  // namespace

TEST_CASE("drain::step sends each pod's grace capped at the time left to the deadline, never its own when longer") {
    fake_api api;
    api.add("slow", R"({"terminationGracePeriodSeconds":300})");
    api.add("quick", R"({"terminationGracePeriodSeconds":5})");
    auto client = api.client();
    drain d(client, "node-1", t0 + 20s);
    auto r = d.step(t0);
    REQUIRE(r);
    CHECK(*r == drain::state::draining);  // both asked, both still listed
    const auto ev = api.evictions();
    REQUIRE(ev.size() == 2);
    for (const auto& e : ev) {
        INFO(e.first << ": " << e.second);
        const auto doc = watch::parse_json(e.second);
        REQUIRE(doc);
        const auto grace = (*doc)["deleteOptions"]["gracePeriodSeconds"].GetInt64();
        CHECK(grace == (e.first == "slow" ? 20 : 5));
    }
    CHECK(d.grace_given().at("apps/slow") == 20);
    api.gone("slow");
    api.gone("quick");
    r = d.step(t0 + 1s);
    REQUIRE(r);
    CHECK(*r == drain::state::drained);
    CHECK(api.evictions().size() == 2);  // nothing asked twice
}

TEST_CASE("drain::step: a budget's 429 is asked again until the deadline, never counted as gone, and named at the end") {
    fake_api api;
    api.add("web", "{}");
    api.answer_evictions(429);
    auto client = api.client();
    drain d(client, "node-1", t0 + 10s, 2s);
    for (int s = 0; s < 10; ++s) {
        auto r = d.step(t0 + std::chrono::seconds(s));
        REQUIRE(r);
        CHECK(*r == drain::state::draining);
    }
    CHECK(api.evictions().size() == 5);  // every 2 s: at 0, 2, 4, 6 and 8 s
    CHECK(d.evicted() == 0);
    CHECK(d.refusals() == 5);
    auto r = d.step(t0 + 10s);
    REQUIRE(r);
    CHECK(*r == drain::state::timed_out);
    REQUIRE(d.left().size() == 1);
    CHECK(d.left()[0].key == "apps/web");
    CHECK(d.left()[0].reason == "The disruption budget web needs 2 healthy pods and has 2 currently");
}

TEST_CASE("drain::step evicts critical pods last: after every other pod is gone, or at once when their grace would not fit") {
    const std::string node_critical = R"({"priorityClassName":"system-node-critical"})";
    const std::string high = R"({"priority":2000001000})";
    SECTION("the others first") {
        fake_api api;
        api.add("web", "{}");
        api.add("dns", node_critical);
        api.add("proxy", high);
        api.add("agent", "{}", "DaemonSet");  // stays, and does not hold the critical pods back
        auto client = api.client();
        drain d(client, "node-1", t0 + 600s);
        REQUIRE(d.step(t0));
        CHECK(api.evicted_names() == std::vector<std::string>{"web"});
        REQUIRE(d.step(t0 + 1s));  // web evicted, not gone yet: still first
        CHECK(api.evicted_names() == std::vector<std::string>{"web"});
        api.gone("web");
        auto r = d.step(t0 + 2s);
        REQUIRE(r);
        CHECK(*r == drain::state::draining);
        auto names = api.evicted_names();
        std::sort(names.begin() + 1, names.end());
        CHECK(names == std::vector<std::string>{"web", "dns", "proxy"});
        api.gone("dns");
        api.gone("proxy");
        r = d.step(t0 + 3s);
        REQUIRE(r);
        CHECK(*r == drain::state::drained);
    }
    SECTION("near the deadline, at once: their own grace (30 s unset) and two rounds no longer fit") {
        fake_api api;
        api.add("web", "{}");
        api.add("dns", node_critical);
        auto client = api.client();
        drain d(client, "node-1", t0 + 34s);  // 30 s + 2 x 2 s
        REQUIRE(d.step(t0));
        auto names = api.evicted_names();
        std::sort(names.begin(), names.end());
        CHECK(names == std::vector<std::string>{"dns", "web"});
    }
    SECTION("a pod whose class is only called critical by its user is an ordinary pod") {
        fake_api api;
        api.add("web", R"({"priorityClassName":"my-critical","priority":1000000000})");
        api.add("other", "{}");
        auto client = api.client();
        drain d(client, "node-1", t0 + 600s);
        REQUIRE(d.step(t0));
        CHECK(api.evictions().size() == 2);
    }
}

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
