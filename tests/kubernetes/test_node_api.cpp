// SPDX-License-Identifier: MIT
// The Node's writes (tools/watch/kubernetes/node.hpp) against a real kube-apiserver and etcd on
// loopback (tests/kubernetes/control_plane.py starts them; "[control-plane]" cases run only
// there). The agent's calls use the agent's own token, bound here to the verbs node.hpp needs;
// the admin's token plays the other writers (an administrator, the kubelet).
#include "kubernetes/api.hpp"
#include "kubernetes/node.hpp"

#include "json.hpp"

#include "catch.hpp"
#include "temp_dir.hpp"

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>

namespace test_node_api {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace watch::kubernetes;
using forewarn::http_method;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) FAIL(std::string(name) + " is not set: run under tests/kubernetes/control_plane.py");
    return v;
}

connection with_token(const std::string& token) {
    connection c;
    c.server = env("FOREWARN_TEST_KUBE_SERVER");
    c.ca_file = env("FOREWARN_TEST_KUBE_CA");
    c.token = token_source::fixed(token);
    c.origin = "test";
    return c;
}

api_client& admin() {
    static api_client a(with_token(env("FOREWARN_TEST_KUBE_ADMIN_TOKEN")));
    return a;
}

void must(const forewarn::result<api_answer>& a, const char* what) {
    INFO(what);
    REQUIRE(a);
    INFO(a->body);
    REQUIRE(a->ok());
}

// The verbs node.hpp uses, granted to the agent's user (the manifest's role will be applied here
// instead once it carries them).
void grant_agent() {
    static bool done = false;
    if (done) return;
    must(admin().call(http_method::post, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                      R"({"metadata":{"name":"forewarn-test-node"},"rules":[
                          {"apiGroups":[""],"resources":["nodes"],"verbs":["get","patch"]},
                          {"apiGroups":[""],"resources":["nodes/status"],"verbs":["patch"]},
                          {"apiGroups":[""],"resources":["events"],"verbs":["create"]}]})",
                      json_body),
         "create the role");
    must(admin().call(http_method::post, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                      R"({"metadata":{"name":"forewarn-test-node"},
                          "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"forewarn-test-node"},
                          "subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io",
                                       "name":"system:serviceaccount:forewarn:forewarn-watch"}]})",
                      json_body),
         "bind it");
    done = true;
}

// A node of the test's own, made by the admin.
std::string make_node(const std::string& name) {
    must(admin().call(http_method::post, "/api/v1/nodes", R"({"metadata":{"name":")" + name + R"("}})", json_body),
         "create the node");
    return name;
}

}  // namespace

TEST_CASE("labels, annotations and the cordon: one merge patch, a null removes", "[control-plane]") {
    grant_agent();
    api_client agent(with_token(env("FOREWARN_TEST_KUBE_AGENT_TOKEN")));
    node_api node(agent, make_node("merge-node"));
    must(admin().call(http_method::patch, "/api/v1/nodes/merge-node", R"({"metadata":{"labels":{"team":"db"}}})", merge_patch),
         "the admin's label");

    REQUIRE(node.patch_metadata({{"forewarn/scheduled-maintenance-time", "1795000000"}},
                                {{"forewarn/cordoned-for", "evt-1"}}, true));
    auto n = node.get();
    REQUIRE(n);
    CHECK(n->unschedulable);
    REQUIRE(n->label("forewarn/scheduled-maintenance-time"));
    CHECK(*n->label("forewarn/scheduled-maintenance-time") == "1795000000");
    REQUIRE(n->annotation("forewarn/cordoned-for"));
    CHECK(*n->annotation("forewarn/cordoned-for") == "evt-1");
    REQUIRE(n->label("team"));  // someone else's label stays

    REQUIRE(node.patch_metadata({{"forewarn/scheduled-maintenance-time", std::nullopt}}, {{"forewarn/cordoned-for", std::nullopt}},
                                false));
    n = node.get();
    REQUIRE(n);
    CHECK_FALSE(n->unschedulable);
    CHECK_FALSE(n->label("forewarn/scheduled-maintenance-time"));
    CHECK_FALSE(n->annotation("forewarn/cordoned-for"));
    CHECK(n->label("team"));
}

TEST_CASE("a condition is merged by type: the kubelet's own conditions stay", "[control-plane]") {
    grant_agent();
    api_client agent(with_token(env("FOREWARN_TEST_KUBE_AGENT_TOKEN")));
    node_api node(agent, make_node("condition-node"));
    must(admin().call(http_method::patch, "/api/v1/nodes/condition-node/status",
                      R"({"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status"}]}})",
                      strategic_merge_patch),
         "the kubelet's condition");

    REQUIRE(node.set_condition({"MaintenancePlanned", "True", "Reboot", "evt-1 at 2026-11-28T10:00:00Z"}));
    REQUIRE(node.set_condition({"DrainInProgress", "True", "Reboot", "evt-1"}));
    auto n = node.get();
    REQUIRE(n);
    REQUIRE(n->condition("Ready"));
    CHECK(n->condition("Ready")->status == "True");
    REQUIRE(n->condition("MaintenancePlanned"));
    CHECK(n->condition("MaintenancePlanned")->reason == "Reboot");
    REQUIRE(n->condition("DrainInProgress"));

    REQUIRE(node.set_condition({"MaintenancePlanned", "False", "MaintenanceOver", "over"}, &*n));
    n = node.get();
    REQUIRE(n);
    CHECK(n->condition("MaintenancePlanned")->status == "False");
    CHECK(n->condition("Ready"));
    CHECK(n->condition("DrainInProgress"));
}

TEST_CASE("a taint is added once, and a taint someone adds between our read and write survives", "[control-plane]") {
    grant_agent();
    api_client agent(with_token(env("FOREWARN_TEST_KUBE_AGENT_TOKEN")));
    node_api node(agent, make_node("taint-node"));
    const taint ours{"forewarn/maintenance", "reboot", "NoSchedule"};

    // Another writer's taint lands after our read of the node and before our write.
    bool raced = false;
    node.before_taint_write([&] {
        if (raced) return;
        raced = true;
        must(admin().call(http_method::patch, "/api/v1/nodes/taint-node",
                          R"({"spec":{"taints":[{"key":"other/admin","effect":"NoExecute"}]}})", strategic_merge_patch),
             "the other writer's taint");
    });
    auto added = node.add_taint(ours);
    INFO(added.error().describe());
    REQUIRE(added);
    CHECK(*added);
    CHECK(raced);
    CHECK(node.conflicts() == 1);  // our first write failed its resourceVersion test
    auto n = node.get();
    REQUIRE(n);
    CHECK(n->has_taint("other/admin", "NoExecute"));
    CHECK(n->has_taint("forewarn/maintenance", "NoSchedule"));
    CHECK(n->taints.size() == 2);

    CHECK_FALSE(node.add_taint(ours).value());  // there already: no second taint
    REQUIRE(node.get().value().taints.size() == 2);
    CHECK(node.remove_taint("forewarn/maintenance", "NoSchedule").value());
    CHECK_FALSE(node.remove_taint("forewarn/maintenance", "NoSchedule").value());
    n = node.get();
    REQUIRE(n);
    CHECK(n->taints.size() == 1);
    CHECK(n->has_taint("other/admin", "NoExecute"));
}

TEST_CASE("an Event about the node: in default, named by the node, its text kept as data", "[control-plane]") {
    grant_agent();
    api_client agent(with_token(env("FOREWARN_TEST_KUBE_AGENT_TOKEN")));
    node_api node(agent, make_node("event-node"));
    REQUIRE(node.get());  // the uid the Event names
    const std::string message = std::string("evt \"1\"\n\\ at 2026-11-28T10:00:00Z, bad byte \xff here");
    REQUIRE(node.post_event({"MaintenanceScheduled", message, false}));
    auto list = admin().call(http_method::get, "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Devent-node");
    must(list, "list the events");
    auto doc = watch::parse_json(list->body);
    REQUIRE(doc);
    const auto& items = (*doc)["items"];
    REQUIRE(items.IsArray());
    REQUIRE(items.Size() == 1);
    CHECK(std::string(items[0]["reason"].GetString()) == "MaintenanceScheduled");
    CHECK(std::string(items[0]["type"].GetString()) == "Normal");
    CHECK(std::string(items[0]["involvedObject"]["kind"].GetString()) == "Node");
    CHECK(std::string(items[0]["source"]["component"].GetString()) == "forewarn-watch");
    CHECK(std::string(items[0]["message"].GetString()) == "evt \"1\"\n\\ at 2026-11-28T10:00:00Z, bad byte \xef\xbf\xbd here");
}

TEST_CASE("the token file replaced while the client runs: the next call carries the new token, and a 401 reads it again",
          "[control-plane]") {
    grant_agent();
    forewarn_test::temp_dir dir("kube-token");
    const std::string agent_token = env("FOREWARN_TEST_KUBE_AGENT_TOKEN"), admin_token = env("FOREWARN_TEST_KUBE_ADMIN_TOKEN");
    const auto put = [&](const std::string& text) { std::ofstream(dir.file("token"), std::ios::trunc) << text; };
    put(agent_token);
    connection c = with_token("");
    c.token = token_source::file(dir.file("token"));
    api_client client(c);
    // Only the admin may list namespaces: the status says whose token went.
    CHECK(client.call(http_method::get, "/api/v1/namespaces").value().status == 403);
    put(admin_token + "\n");  // another size: seen before the call
    CHECK(client.call(http_method::get, "/api/v1/namespaces").value().status == 200);

    // A token the server refuses, written so that size and time do not show it changed: only the
    // 401 makes the client read the file again.
    const auto back_dated = [&] {  // the same time for both files below, long past
        struct timespec t[2];
        t[0].tv_sec = t[1].tv_sec = std::time(nullptr) - 100;
        t[0].tv_nsec = t[1].tv_nsec = 0;
        REQUIRE(::utimensat(AT_FDCWD, dir.file("token").c_str(), t, 0) == 0);
    };
    std::string wrong = admin_token;  // as long as the right one
    wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
    put(wrong + "\n");
    back_dated();
    CHECK(client.call(http_method::get, "/api/v1/namespaces").value().status == 401);  // read again, still wrong
    const std::size_t reads = c.token.reads();
    put(admin_token + "\n");
    back_dated();
    CHECK(client.call(http_method::get, "/api/v1/namespaces").value().status == 200);
    CHECK(c.token.reads() == reads + 1);  // the read the 401 asked for
}

}  // namespace test_node_api
