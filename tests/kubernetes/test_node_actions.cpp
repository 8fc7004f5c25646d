// SPDX-License-Identifier: MIT
// The default rules of tools/watch/kubernetes/node_actions.hpp: which event types take the node
// out of service, and the condition's reason for each; and, over a fake API server (the
// api_client's transport seam), what node_actions and node_api write: a neighbour's event never
// reaches the node, its own is tainted and cordoned, an event an earlier run recorded is resumed
// without a second record or Event, and a taint another writer adds between node_api's read and
// write survives (the resourceVersion test). What they do to a real Node is
// tests/kubernetes/check_agent_node.py's, against a real API server.
#include "kubernetes/node.hpp"
#include "kubernetes/node_actions.hpp"

#include <forewarn/detail/json.hpp>
#include <forewarn/json.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace test_node_actions {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::event_type;
using watch::kubernetes::condition_reason;
using watch::kubernetes::disruptive;
using namespace std::chrono_literals;

namespace {

// One Node behind a fake API server, as much of it as node_api reads and writes: its labels,
// annotations, cordon and taints, and a resourceVersion that moves with every write. A JSON patch
// whose `test` of /metadata/resourceVersion fails is a 422, as kube-apiserver answers it. Also
// discovery, an empty pod list and Events. Every request is kept.
class fake_node_api {
public:
    fake_node_api() {
        transport_.otherwise([this](const forewarn::http_request& r) { return answer(r); });
    }
    watch::kubernetes::api_client client() { return watch::kubernetes::api_client(conn(), transport(), options()); }
    static watch::kubernetes::connection conn() {
        watch::kubernetes::connection c;
        c.server = "https://api.test";
        c.token = watch::kubernetes::token_source::fixed("t");
        return c;
    }
    watch::kubernetes::api_transport transport() { return watch::kubernetes::api_transport::of(transport_); }
    static watch::kubernetes::api_options options() {
        watch::kubernetes::api_options o;
        o.attempts = 1;
        return o;
    }
    /// Another writer's taint, written at once (a new resourceVersion).
    void add_taint_directly(const std::string& key) {
        std::lock_guard<std::mutex> lock(m_);
        taints_.push_back(R"({"key":")" + key + R"(","effect":"NoSchedule"})");
        ++version_;
    }
    std::vector<std::string> taint_keys() const {
        std::lock_guard<std::mutex> lock(m_);
        std::vector<std::string> out;
        for (const auto& t : taints_) {
            auto d = forewarn::detail::parse_json(t);
            out.push_back((*d)["key"].GetString());
        }
        return out;
    }
    bool cordoned() const {
        std::lock_guard<std::mutex> lock(m_);
        return unschedulable_;
    }
    /// An annotation on the node, as an earlier run (or another writer) left it.
    void annotate(const std::string& key, const std::string& value) {
        std::lock_guard<std::mutex> lock(m_);
        annotations_[key] = value;
        ++version_;
    }
    /// Every request's method, path and body, in order.
    std::vector<std::string> requests() const {
        std::lock_guard<std::mutex> lock(m_);
        return log_;
    }

private:
    std::string node_json() const {
        std::string labels, annotations, taints;
        auto object = [](const std::map<std::string, std::string>& m) {
            rapidjson::StringBuffer b;
            rapidjson::Writer<rapidjson::StringBuffer> w(b);
            w.StartObject();
            for (const auto& kv : m) {
                w.Key(kv.first.c_str());
                w.String(kv.second.c_str());
            }
            w.EndObject();
            return std::string(b.GetString());
        };
        for (const auto& t : taints_) taints += (taints.empty() ? "" : ",") + t;
        return R"({"kind":"Node","metadata":{"name":"n1","uid":"u1","resourceVersion":")" + std::to_string(version_) +
               R"(","labels":)" + object(labels_) + R"(,"annotations":)" + object(annotations_) + R"(},"spec":{"unschedulable":)" +
               (unschedulable_ ? "true" : "false") + R"(,"taints":[)" + taints + R"(]},"status":{"conditions":[]}})";
    }
    static forewarn::http_response bad_request(forewarn::http_response out) {
        out.status = 400;
        out.body = R"({"kind":"Status","reason":"BadRequest"})";
        return out;
    }
    static void merge(std::map<std::string, std::string>& into, const rapidjson::Value* changes) {
        if (!changes || !changes->IsObject()) return;
        for (const auto& m : changes->GetObject()) {
            if (m.value.IsNull()) into.erase(m.name.GetString());
            else if (m.value.IsString()) into[m.name.GetString()] = m.value.GetString();
        }
    }
    forewarn::result<forewarn::http_response> answer(const forewarn::http_request& r) {
        std::lock_guard<std::mutex> lock(m_);
        const std::string path = r.url.substr(std::string("https://api.test").size());
        const bool patch = r.method == forewarn::http_method::patch;
        log_.push_back(std::string(patch ? "PATCH " : r.method == forewarn::http_method::post ? "POST " : "GET ") + path + " " + r.body);
        forewarn::http_response out;
        out.status = 200;
        const std::string* type = forewarn::find_header(r.headers, "Content-Type");
        if (path == "/api/v1/nodes/n1" && !patch) {
            out.body = node_json();
        } else if (path == "/api/v1/nodes/n1" && type && *type == watch::kubernetes::json_patch) {
            auto d = forewarn::detail::parse_json(r.body);
            if (!d || !d->IsArray()) return bad_request(out);  // answered on the node's thread: no REQUIRE there
            for (const auto& op : d->GetArray()) {
                const std::string name = op["op"].GetString(), at = op["path"].GetString();
                if (name == "test" && at == "/metadata/resourceVersion" && op["value"].GetString() != std::to_string(version_)) {
                    out.status = 422;
                    out.body = R"({"kind":"Status","reason":"Invalid","message":"the server rejected our request due to an error in our request"})";
                    return out;
                }
            }
            for (const auto& op : d->GetArray())
                if (std::string(op["op"].GetString()) == "add" && std::string(op["path"].GetString()) == "/spec/taints") {
                    taints_.clear();
                    for (const auto& t : op["value"].GetArray()) {
                        rapidjson::StringBuffer b;
                        rapidjson::Writer<rapidjson::StringBuffer> w(b);
                        t.Accept(w);
                        taints_.push_back(b.GetString());
                    }
                }
            ++version_;
            out.body = node_json();
        } else if (path == "/api/v1/nodes/n1" && patch) {  // a merge patch: labels, annotations, the cordon
            auto d = forewarn::detail::parse_json(r.body);
            if (!d || !d->IsObject()) return bad_request(out);
            if (d->HasMember("metadata") && (*d)["metadata"].IsObject()) {
                merge(labels_, forewarn::detail::json_member((*d)["metadata"], "labels"));
                merge(annotations_, forewarn::detail::json_member((*d)["metadata"], "annotations"));
            }
            if (d->HasMember("spec") && (*d)["spec"].IsObject() && (*d)["spec"].HasMember("unschedulable"))
                unschedulable_ = (*d)["spec"]["unschedulable"].IsTrue();
            ++version_;
            out.body = node_json();
        } else if (path == "/api/v1/nodes/n1/status" && patch) {
            out.body = node_json();
        } else if (path == "/api/v1/namespaces/default/events") {
            out.status = 201;
            out.body = "{}";
        } else if (path == "/api/v1") {
            out.body = R"({"kind":"APIResourceList","resources":[{"name":"pods/eviction","kind":"Eviction","group":"policy","version":"v1"}]})";
        } else if (path.rfind("/api/v1/pods?", 0) == 0) {
            out.body = R"({"kind":"PodList","items":[]})";
        } else {
            out.status = 404;
        }
        return out;
    }

    forewarn::testing::fake_transport transport_;
    mutable std::mutex m_;
    std::map<std::string, std::string> labels_, annotations_;
    bool unschedulable_ = false;
    std::vector<std::string> taints_;
    long version_ = 1;
    std::vector<std::string> log_;
};

forewarn::change announced(const std::string& id, std::vector<std::string> resources) {
    forewarn::change c;
    c.kind = forewarn::change_kind::prepare;
    c.event.id = id;
    c.event.type = event_type::reboot;
    c.event.raw_type = "Reboot";
    c.event.status = forewarn::event_status::scheduled;
    c.event.raw_status = "Scheduled";
    c.event.resources = std::move(resources);
    c.event.not_before = std::chrono::system_clock::now() + 60s;  // inside the drain lead: taken out at once
    return c;
}

// The change's JSON line, as the agent hands it to node_actions.
std::string line_of(const forewarn::change& c) { return forewarn::to_json(c, forewarn::invalid_utf8::replace).value(); }

// What a `then` said, waited for with a bound.
struct outcome {
    std::mutex m;
    std::condition_variable cv;
    std::optional<bool> ready;
    std::function<void(bool)> callback() {
        return [this](bool r) {
            std::lock_guard<std::mutex> lock(m);
            ready = r;
            cv.notify_all();
        };
    }
    std::optional<bool> wait(std::chrono::milliseconds bound) {
        std::unique_lock<std::mutex> lock(m);
        cv.wait_for(lock, bound, [&] { return ready.has_value(); });
        return ready;
    }
};

}  // namespace

TEST_CASE("node_api::add_taint: a taint another writer adds between the read and the write survives - read and written again") {
    fake_node_api api;
    auto client = api.client();
    watch::kubernetes::node_api node(client, "n1");
    int writes = 0;
    node.before_taint_write([&] {
        if (writes++ == 0) api.add_taint_directly("other.example/keep-me");  // after our read, before our write
    });
    auto added = node.add_taint({"forewarn/maintenance", "", "NoSchedule"});
    REQUIRE(added);
    CHECK(*added);
    CHECK(node.conflicts() == 1);
    CHECK(writes == 2);
    CHECK(api.taint_keys() == std::vector<std::string>{"other.example/keep-me", "forewarn/maintenance"});
    // Once there, it is not written again.
    added = node.add_taint({"forewarn/maintenance", "", "NoSchedule"});
    REQUIRE(added);
    CHECK_FALSE(*added);
    CHECK(writes == 2);
}

TEST_CASE("node_actions: a neighbour's event never reaches the node (ready at once), its own event is tainted and cordoned",
          "[threads]") {
    fake_node_api api;
    watch::kubernetes::node_actions_options o;
    o.self = [] { return std::string("WestNO_0"); };
    o.api = fake_node_api::options();
    watch::kubernetes::node_actions node(fake_node_api::conn(), api.transport(), "n1", o);

    CHECK(node.acts_on(announced("X", {}).event));  // names no VM: this VM's (GCE, AWS)
    CHECK(node.acts_on(announced("X", {"WestNO_0", "WestNO_1"}).event));
    CHECK_FALSE(node.acts_on(announced("X", {"WestNO_1"}).event));

    outcome neighbour, own;
    node.announced(announced("NEIGHBOUR-EVENT", {"WestNO_1"}), line_of(announced("NEIGHBOUR-EVENT", {"WestNO_1"})),
                   neighbour.callback());
    node.started(announced("NEIGHBOUR-EVENT", {"WestNO_1"}).event);
    node.announced(announced("OWN-EVENT", {"WestNO_0"}), line_of(announced("OWN-EVENT", {"WestNO_0"})), own.callback());
    REQUIRE(neighbour.wait(10s) == std::optional<bool>(true));
    REQUIRE(own.wait(10s) == std::optional<bool>(true));  // tainted, cordoned, drained (no pods)
    node.stop();
    CHECK(api.cordoned());
    CHECK(api.taint_keys().size() == 1);
    bool own_seen = false;
    for (const auto& r : api.requests()) {
        INFO(r);
        CHECK(r.find("NEIGHBOUR-EVENT") == std::string::npos);  // one node's work, in order: the neighbour's would be first
        own_seen = own_seen || r.find("OWN-EVENT") != std::string::npos;
    }
    CHECK(own_seen);
}

TEST_CASE("node_actions: an event an earlier run recorded on the node is read back and resumed - taken out again, "
          "neither recorded nor announced a second time",
          "[threads]") {
    fake_node_api api;
    const forewarn::change earlier = announced("OWN-EVENT", {"WestNO_0"});
    api.annotate(watch::kubernetes::events_annotation, watch::kubernetes::with_record(nullptr, "OWN-EVENT", line_of(earlier)));
    watch::kubernetes::node_actions_options o;
    o.self = [] { return std::string("WestNO_0"); };
    o.api = fake_node_api::options();
    watch::kubernetes::node_actions node(fake_node_api::conn(), api.transport(), "n1", o);

    auto recorded = node.recorded();  // what a restarted agent reads first
    REQUIRE(recorded);
    REQUIRE(recorded->size() == 1);
    CHECK((*recorded)[0].kind == forewarn::change_kind::prepare);
    CHECK((*recorded)[0].event.id == "OWN-EVENT");
    CHECK((*recorded)[0].event.type == event_type::reboot);

    outcome resumed;
    node.resumed((*recorded)[0], line_of((*recorded)[0]), resumed.callback());
    REQUIRE(resumed.wait(10s) == std::optional<bool>(true));  // tainted, cordoned, drained (no pods)
    node.stop();
    CHECK(api.cordoned());
    CHECK(api.taint_keys() == std::vector<std::string>{"forewarn/maintenance"});
    for (const auto& r : api.requests()) {
        INFO(r);
        CHECK(r.find("MaintenanceScheduled") == std::string::npos);  // announced by the earlier run
        CHECK(r.find(watch::kubernetes::events_annotation) == std::string::npos);  // its record is there: found by id, kept
    }
}

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

TEST_CASE("the node's record of events: set, kept beside others, found by id, removed, and started afresh when malformed") {
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
    // Found by id, its key: no record is read back into a change.
    using watch::kubernetes::has_record;
    CHECK(has_record(two, "A"));
    CHECK(has_record(two, "B"));
    CHECK_FALSE(has_record(two, "C"));
    CHECK_FALSE(has_record(back, "B"));
    CHECK_FALSE(has_record(R"({"A":"text"})", "A"));  // not a record
    CHECK_FALSE(has_record(junk, "A"));
    CHECK_FALSE(has_record("", "A"));
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
