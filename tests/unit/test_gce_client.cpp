// SPDX-License-Identifier: MIT
// gce::basic_metadata_client against testing::fake_transport: every value, status and header rule.
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"
#include "thread_failures.hpp"
#include "scoped_env.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace test_gce_client {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::cloud;
using forewarn::document;
using forewarn::errc;
using forewarn::error;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::http_headers;
using forewarn::http_request;
using forewarn::http_response;
using forewarn::result;
using forewarn::testing::fake_transport;
namespace gce = forewarn::gce;

namespace {

using client = gce::basic_metadata_client<fake_transport>;

gce::client_options test_options() {
    gce::client_options o;
    o.endpoint = "http://metadata.test";
    o.rate_limit = false;
    o.retry.initial_backoff = 1ms;
    o.retry.max_backoff = 2ms;
    o.retry.max_attempts = 3;
    o.self_name = "vm-test";  // no instance/name request before each first document
    // The scripts here answer maintenance-event and preempted; the [upcoming] tests turn it on.
    o.read_upcoming_maintenance = false;
    return o;
}

http_headers google(std::string etag = "e1") {
    http_headers h{{"Metadata-Flavor", "Google"}};
    if (!etag.empty()) h.push_back({"ETag", std::move(etag)});
    return h;
}

http_response answer(int status, std::string body, http_headers headers) {
    http_response r;
    r.status = status;
    r.body = std::move(body);
    r.headers = std::move(headers);
    return r;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }


// A handler that stands for a hanging GET: it returns only when the transport is cancelled.
// Bounded so that a broken cancel fails the test instead of hanging it.
result<http_response> hang_until_cancelled(const fake_transport& t) {
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (!t.cancelled()) {
        if (std::chrono::steady_clock::now() > give_up) return answer(200, "HUNG", google("hung"));
        std::this_thread::sleep_for(1ms);
    }
    return error(errc::cancelled, "request cancelled");
}


// A fake metadata server for fetch(): maintenance-event and preempted, plain GETs only.
fake_transport snapshot_server(std::string maintenance, std::string preempted, std::string m_etag = "m1",
                               std::string p_etag = "p1", int preempted_status = 200) {
    fake_transport t;
    t.otherwise([=](const http_request& r) -> result<http_response> {
        if (contains(r.url, "/instance/maintenance-event?")) return answer(200, maintenance, google(m_etag));
        if (contains(r.url, "/instance/preempted?")) return answer(preempted_status, preempted, google(p_etag));
        return answer(404, "", google());
    });
    return t;
}


std::vector<std::string> urls_with(const fake_transport& t, const std::string& part) {
    std::vector<std::string> out;
    for (const auto& r : t.requests())
        if (contains(r.url, part)) out.push_back(r.url);
    return out;
}

}  // namespace

TEST_CASE("get sends Metadata-Flavor: Google and returns the value and ETag", "[gce]") {
    fake_transport t;
    t.respond(200, "my-vm", google("abc123"));
    client c(test_options(), t);
    auto v = c.get("instance/name");
    REQUIRE(v);
    CHECK(v->value == "my-vm");
    CHECK(v->etag == "abc123");
    REQUIRE(t.request_count() == 1);
    const http_request req = t.requests()[0];
    CHECK(req.url == "http://metadata.test/computeMetadata/v1/instance/name?alt=text");
    const std::string* flavor = forewarn::find_header(req.headers, "Metadata-Flavor");
    REQUIRE(flavor != nullptr);
    CHECK(*flavor == "Google");
    CHECK(forewarn::find_header(req.headers, "X-Forwarded-For") == nullptr);
    CHECK(req.timeout == test_options().request_timeout);
    CHECK(req.connect_timeout == test_options().connect_timeout);
}

TEST_CASE("get builds the query: alt=text, alt=json, recursive directories as JSON", "[gce]") {
    fake_transport t;
    t.respond(200, "x", google()).respond(200, "{}", google()).respond(200, "{}", google());
    client c(test_options(), t);
    REQUIRE(c.get("instance/tags"));
    gce::get_options json;
    json.json = true;
    REQUIRE(c.get("instance/tags", json));
    gce::get_options rec;
    rec.recursive = true;
    REQUIRE(c.get("instance/attributes/", rec));
    const auto reqs = t.requests();
    CHECK(reqs[0].url == "http://metadata.test/computeMetadata/v1/instance/tags?alt=text");
    CHECK(reqs[1].url == "http://metadata.test/computeMetadata/v1/instance/tags?alt=json");
    CHECK(reqs[2].url == "http://metadata.test/computeMetadata/v1/instance/attributes/?recursive=true&alt=json");
}

TEST_CASE("keys are percent-encoded - one leading slash is tolerated", "[gce]") {
    fake_transport t;
    t.otherwise([](const http_request&) -> result<http_response> { return answer(200, "v", google()); });
    client c(test_options(), t);
    REQUIRE(c.get("instance/attributes/my key"));
    REQUIRE(c.get("instance/attributes/100%"));
    REQUIRE(c.get("/instance/attributes/a+b&c=d"));
    const auto reqs = t.requests();
    CHECK(reqs[0].url == "http://metadata.test/computeMetadata/v1/instance/attributes/my%20key?alt=text");
    CHECK(reqs[1].url == "http://metadata.test/computeMetadata/v1/instance/attributes/100%25?alt=text");
    CHECK(reqs[2].url == "http://metadata.test/computeMetadata/v1/instance/attributes/a%2Bb%26c%3Dd?alt=text");
}

TEST_CASE("keys that could leave /computeMetadata/v1/ are refused before any request", "[gce]") {
    fake_transport t;
    t.otherwise([](const http_request&) -> result<http_response> { return answer(200, "v", google()); });
    client c(test_options(), t);
    for (const char* key : {"../token", "instance/../../etc", "instance/./name", "..", "http://evil.example/x",
                            "//evil.example/x", "https:evil", "instance/name?alt=json", "instance/name#x",
                            "instance\\name", "instance/na\nme"}) {
        INFO(key);
        auto v = c.get(key);
        REQUIRE_FALSE(v);
        CHECK(v.error().code == errc::invalid_argument);
        auto w = c.watch(key, "e", 10s);
        REQUIRE_FALSE(w);
        CHECK(w.error().code == errc::invalid_argument);
    }
    CHECK(t.request_count() == 0);
    // Dots inside a segment are fine.
    REQUIRE(c.get("instance/attributes/a..b"));
}

TEST_CASE("an answer without Metadata-Flavor: Google is refused, whatever its status, and not retried",
          "[gce]") {
    const int status = GENERATE(200, 404, 503);
    fake_transport t;
    SECTION("missing") { t.respond(status, "NONE", {{"ETag", "e1"}}); }
    SECTION("wrong value") { t.respond(status, "NONE", {{"Metadata-Flavor", "Microsoft"}, {"ETag", "e1"}}); }
    SECTION("empty value") { t.respond(status, "NONE", {{"Metadata-Flavor", ""}}); }
    SECTION("another header") { t.respond(status, "NONE", {{"Metadata", "true"}}); }
    t.otherwise([](const http_request&) -> result<http_response> { return answer(200, "NONE", google()); });
    client c(test_options(), t);
    auto v = c.get("instance/maintenance-event");
    REQUIRE_FALSE(v);
    CHECK(v.error().code == errc::not_metadata_server);
    CHECK(v.error().http_status == status);
    CHECK(t.request_count() == 1);
}

TEST_CASE("the flavor header is matched without regard to case or surrounding spaces", "[gce]") {
    fake_transport t;
    t.respond(200, "NONE", {{"metadata-flavor", " google "}});
    client c(test_options(), t);
    auto v = c.get("instance/maintenance-event");
    REQUIRE(v);
    CHECK(v->value == "NONE");
    CHECK(v->etag.empty());
}

TEST_CASE("statuses: 400, 403 and 404 fail at once - 429, 500 and 503 are retried", "[gce]") {
    SECTION("never retried") {
        const int status = GENERATE(400, 403, 404);
        fake_transport t;
        t.respond(status, "no", google()).respond(200, "late", google());
        client c(test_options(), t);
        auto v = c.get("instance/name");
        REQUIRE_FALSE(v);
        CHECK(v.error().code == (status == 404 ? errc::not_found : errc::http_status));
        CHECK(v.error().http_status == status);
        CHECK(t.request_count() == 1);
    }
    SECTION("retried until an answer") {
        const int status = GENERATE(429, 500, 502, 503);
        fake_transport t;
        t.respond(status, "busy", google()).respond(status, "busy", google()).respond(200, "vm-1", google("e9"));
        client c(test_options(), t);
        auto v = c.get("instance/name");
        REQUIRE(v);
        CHECK(v->value == "vm-1");
        CHECK(v->etag == "e9");
        CHECK(t.request_count() == 3);
    }
    SECTION("retried up to max_attempts, then the last error") {
        fake_transport t;
        t.otherwise([](const http_request&) -> result<http_response> { return answer(503, "", google()); });
        client c(test_options(), t);
        auto v = c.get("instance/name");
        REQUIRE_FALSE(v);
        CHECK(v.error().code == errc::http_status);
        CHECK(v.error().http_status == 503);
        CHECK(t.request_count() == 3);
    }
    SECTION("transport errors and timeouts are retried") {
        fake_transport t;
        t.fail(error(errc::transport, "connection reset")).fail(error(errc::timeout, "slow")).respond(200, "vm", google());
        client c(test_options(), t);
        auto v = c.get("instance/name");
        REQUIRE(v);
        CHECK(t.request_count() == 3);
    }
}

TEST_CASE("a body over max_body fails with body_too_large and is not retried", "[gce]") {
    fake_transport t;
    auto o = test_options();
    o.max_body = 1024;
    t.respond(200, std::string(4096, 'x'), google()).respond(200, "small", google());
    client c(o, t);
    auto v = c.get("instance/attributes/big");
    REQUIRE_FALSE(v);
    CHECK(v.error().code == errc::body_too_large);
    CHECK(t.request_count() == 1);
    CHECK(t.requests()[0].max_body == 1024);
}

TEST_CASE("watch sends wait_for_change, last_etag and timeout_sec - its timeout has a margin", "[gce]") {
    fake_transport t;
    t.respond(200, "MIGRATE_ON_HOST_MAINTENANCE", google("e2")).respond(200, "NONE", google("e3"));
    auto o = test_options();
    o.watch_margin = 7s;
    o.connect_timeout = 500ms;
    client c(o, t);
    auto v = c.watch("instance/maintenance-event", "e1", 30s);
    REQUIRE(v);
    CHECK(v->value == "MIGRATE_ON_HOST_MAINTENANCE");
    CHECK(v->etag == "e2");
    // An ETag is opaque: whatever it holds is escaped into the query.
    REQUIRE(c.watch("instance/maintenance-event", "a b/c&d", 5s));
    const auto reqs = t.requests();
    CHECK(reqs[0].url ==
          "http://metadata.test/computeMetadata/v1/instance/maintenance-event?wait_for_change=true&last_etag=e1&timeout_sec=30&alt=text");
    CHECK(reqs[0].timeout == 37s);
    CHECK(reqs[0].connect_timeout == 500ms);
    CHECK(reqs[1].url ==
          "http://metadata.test/computeMetadata/v1/instance/maintenance-event?wait_for_change=true&last_etag=a%20b%2Fc%26d&timeout_sec=5&alt=text");
    CHECK(reqs[1].timeout == 12s);
}

TEST_CASE("watch without an ETag waits for the next change - timeout_sec below 1 is refused", "[gce]") {
    fake_transport t;
    t.respond(200, "NONE", google("e2"));
    client c(test_options(), t);
    REQUIRE(c.watch("instance/maintenance-event", "", 60s));
    CHECK(t.requests()[0].url ==
          "http://metadata.test/computeMetadata/v1/instance/maintenance-event?wait_for_change=true&timeout_sec=60&alt=text");
    auto bad = c.watch("instance/maintenance-event", "e", 0s);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == errc::invalid_argument);
    CHECK(t.request_count() == 1);
}

TEST_CASE("watch: 404 means the key is gone - 503 mid-watch is retried with the same last_etag", "[gce]") {
    fake_transport t;
    t.respond(404, "", google());
    t.respond(503, "", google()).respond(200, "v2", google("e2"));
    client c(test_options(), t);
    auto gone = c.watch("instance/attributes/k", "e1", 10s);
    REQUIRE_FALSE(gone);
    CHECK(gone.error().code == errc::not_found);
    auto v = c.watch("instance/attributes/k", "e1", 10s);
    REQUIRE(v);
    CHECK(v->value == "v2");
    const auto reqs = t.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[1].url == reqs[2].url);
    CHECK(contains(reqs[2].url, "last_etag=e1"));
}



TEST_CASE("fetch maps maintenance-event values to events", "[gce]") {
    struct row {
        const char* wire;
        std::optional<event_type> type;
        const char* id;
    };
    const row rows[] = {
        {"NONE", std::nullopt, ""},
        {"NONE\n", std::nullopt, ""},
        {"MIGRATE_ON_HOST_MAINTENANCE", event_type::live_migrate, "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE"},
        {"  MIGRATE_ON_HOST_MAINTENANCE\r\n", event_type::live_migrate, "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE"},
        {"TERMINATE_ON_HOST_MAINTENANCE", event_type::host_terminate, "maintenance-event:TERMINATE_ON_HOST_MAINTENANCE"},
        {"SOMETHING_NEW_ON_HOST", event_type::unknown, "maintenance-event:SOMETHING_NEW_ON_HOST"},
    };
    for (const auto& r : rows) {
        INFO(r.wire);
        fake_transport t = snapshot_server(r.wire, "FALSE");
        client c(test_options(), t);
        auto doc = c.fetch();
        REQUIRE(doc);
        CHECK(doc->origin == cloud::gce);
        CHECK(doc->vanished_means_completed);  // GCE ends every notice by clearing it
        // A live migration is never marked Started: its notice is the migration under way.
        CHECK(doc->under_way_when_announced == std::vector<event_type>{event_type::live_migrate});
        CHECK(doc->incarnation == "m1/p1");
        if (!r.type) {
            CHECK(doc->events.empty());
            continue;
        }
        REQUIRE(doc->events.size() == 1);
        const auto& e = doc->events[0];
        CHECK(e.id == r.id);
        CHECK(e.type == *r.type);
        CHECK(e.raw_type == forewarn::detail::trim(r.wire));
        CHECK(e.status == event_status::scheduled);
        CHECK(e.resources == std::vector<std::string>{"vm-test"});  // events name their VM
    }
}

TEST_CASE("fetch maps preempted TRUE/FALSE, with whitespace, to an event keyed by kind", "[gce]") {
    for (const char* wire : {"TRUE", "TRUE\n", " true "}) {
        INFO(wire);
        fake_transport t = snapshot_server("NONE", wire);
        client c(test_options(), t);
        auto doc = c.fetch();
        REQUIRE(doc);
        REQUIRE(doc->events.size() == 1);
        CHECK(doc->events[0].id == "preempted");
        CHECK(doc->events[0].type == event_type::preempted);
        CHECK(doc->events[0].status == event_status::started);
    }
    for (const char* wire : {"FALSE", "FALSE\r\n"}) {
        fake_transport t = snapshot_server("NONE", wire);
        client c(test_options(), t);
        auto doc = c.fetch();
        REQUIRE(doc);
        CHECK(doc->events.empty());
    }
    // Both at once: two events, maintenance first.
    fake_transport both = snapshot_server("TERMINATE_ON_HOST_MAINTENANCE", "TRUE");
    client c(test_options(), both);
    auto doc = c.fetch();
    REQUIRE(doc);
    REQUIRE(doc->events.size() == 2);
    CHECK(doc->events[0].type == event_type::host_terminate);
    CHECK(doc->events[1].type == event_type::preempted);
}

TEST_CASE("fetch refuses empty or nonsensical values and a missing ETag (as that key's error, the others delivered) "
          "- a missing preempted key is FALSE",
          "[gce]") {
    // One key's refused answer is that key's error: the document carries the others' events.
    SECTION("empty maintenance-event") {
        fake_transport t = snapshot_server(" \n", "TRUE");
        client c(test_options(), t);
        auto doc = c.fetch();
        REQUIRE(doc);
        REQUIRE(doc->key_errors.size() == 1);
        CHECK(doc->key_errors[0].code == errc::empty_body);
        REQUIRE(doc->events.size() == 1);
        CHECK(doc->events[0].type == event_type::preempted);
    }
    SECTION("preempted neither TRUE nor FALSE") {
        fake_transport t = snapshot_server("NONE", "MAYBE");
        client c(test_options(), t);
        auto doc = c.fetch();
        REQUIRE(doc);
        REQUIRE(doc->key_errors.size() == 1);
        CHECK(doc->key_errors[0].code == errc::invalid_document);
        CHECK(doc->key_errors[0].field == "preempted");
    }
    SECTION("no ETag on maintenance-event") {
        fake_transport t = snapshot_server("NONE", "FALSE", "");
        client c(test_options(), t);
        auto doc = c.fetch();
        REQUIRE(doc);
        REQUIRE(doc->key_errors.size() == 1);
        CHECK(doc->key_errors[0].code == errc::invalid_document);
    }
    SECTION("no preempted key") {
        fake_transport t = snapshot_server("MIGRATE_ON_HOST_MAINTENANCE", "", "m1", "p1", 404);
        client c(test_options(), t);
        auto doc = c.fetch();
        REQUIRE(doc);
        CHECK(doc->incarnation == "m1");
        REQUIRE(doc->events.size() == 1);
        CHECK(doc->events[0].type == event_type::live_migrate);
    }
    // The instance's name answers; the keys do not.
    auto keys_answer = [](int status) {
        fake_transport t;
        t.otherwise([status](const http_request& r) -> result<http_response> {
            if (contains(r.url, "/instance/name")) return answer(200, "vm-test", google());
            return answer(status, "bad", google());
        });
        return t;
    };
    SECTION("maintenance-event missing is its error") {
        fake_transport t = keys_answer(404);
        client c(test_options(), t);
        auto doc = c.fetch();
        REQUIRE(doc);
        REQUIRE(doc->key_errors.size() == 1);
        CHECK(doc->key_errors[0].code == errc::not_found);
    }
    SECTION("every key failing fails the document") {
        fake_transport t = keys_answer(400);
        auto o = test_options();
        o.read_upcoming_maintenance = false;
        client c(o, t);
        auto doc = c.fetch();
        REQUIRE_FALSE(doc);
        CHECK(doc.error().http_status == 400);
    }
}

TEST_CASE("identity reads name, id, hostname and scheduling - events name the VM from the first document", "[gce]") {
    fake_transport t;
    t.otherwise([](const http_request& r) -> result<http_response> {
        if (contains(r.url, "/instance/name?")) return answer(200, "vm-7\n", google());
        if (contains(r.url, "/instance/id?")) return answer(200, "1234567890123", google());
        if (contains(r.url, "/instance/hostname?")) return answer(200, "vm-7.c.proj.internal", google());
        if (contains(r.url, "/instance/scheduling/preemptible?")) return answer(200, "TRUE", google());
        if (contains(r.url, "/instance/scheduling/on-host-maintenance?")) return answer(200, "TERMINATE", google());
        if (contains(r.url, "/instance/maintenance-event?")) return answer(200, "TERMINATE_ON_HOST_MAINTENANCE", google("m"));
        if (contains(r.url, "/instance/preempted?")) return answer(200, "FALSE", google("p"));
        return answer(404, "", google());
    });
    auto o = test_options();
    o.self_name.clear();
    client c(o, t);
    // The first document asks instance/name before anything else, so its events name the VM.
    auto doc = c.next();
    REQUIRE(doc);
    REQUIRE(doc->events.size() == 1);
    CHECK(doc->events[0].resources == std::vector<std::string>{"vm-7"});
    CHECK(doc->events[0].affects("vm-7"));
    CHECK(contains(t.requests().at(0).url, "/instance/name?"));
    auto id = c.identity();
    REQUIRE(id);
    CHECK(id->name == "vm-7");
    CHECK(id->id == "1234567890123");
    CHECK(id->hostname == "vm-7.c.proj.internal");
    CHECK(id->preemptible);
    CHECK(id->on_host_maintenance == "TERMINATE");
    // Asking for the identity changes no later document (no spurious "updated").
    auto again = c.fetch();
    REQUIRE(again);
    CHECK(*again == *doc);
    CHECK(urls_with(t, "/instance/name?").size() == 1);
}

TEST_CASE("the name comes from self_name when set, without a request", "[gce]") {
    fake_transport t = snapshot_server("MIGRATE_ON_HOST_MAINTENANCE", "FALSE");
    client c(test_options(), t);
    auto doc = c.next();
    REQUIRE(doc);
    CHECK(doc->events.at(0).resources == std::vector<std::string>{"vm-test"});
    CHECK(urls_with(t, "/instance/name?").empty());
}

TEST_CASE("a first document waits for the name: a name it cannot read is the error", "[gce]") {
    fake_transport t;
    t.otherwise([](const http_request& r) -> result<http_response> {
        if (contains(r.url, "/instance/name?")) return answer(200, " \n", google());
        return answer(200, "NONE", google("m"));
    });
    auto o = test_options();
    o.self_name.clear();
    client c(o, t);
    auto doc = c.next();
    REQUIRE_FALSE(doc);
    CHECK(doc.error().code == errc::empty_body);
    CHECK(doc.error().field == "instance/name");
}

TEST_CASE("identity: missing scheduling keys leave fields empty - a missing name is an error", "[gce]") {
    fake_transport t;
    t.otherwise([](const http_request& r) -> result<http_response> {
        if (contains(r.url, "/instance/name?")) return answer(200, "vm", google());
        if (contains(r.url, "/instance/id?")) return answer(200, "1", google());
        return answer(404, "", google());
    });
    auto o = test_options();
    o.self_name.clear();
    client c(o, t);
    auto id = c.identity();
    REQUIRE(id);
    CHECK(id->hostname.empty());
    CHECK_FALSE(id->preemptible);
    CHECK(id->on_host_maintenance.empty());

    fake_transport none;
    none.respond(404, "", google());
    client c2(o, none);
    auto missing = c2.identity();
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == errc::not_found);
}

TEST_CASE("approve starts only an upcoming window: a maintenance-event notice, or approvals off, is unsupported and "
          "sends nothing",
          "[gce]") {
    fake_transport t;
    client c(test_options(), t);
    CHECK(c.can_approve());  // perform_maintenance, on by default
    auto r = c.approve({"maintenance-event:MIGRATE_ON_HOST_MAINTENANCE"});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::unsupported);
    CHECK(t.request_count() == 0);
    auto o = test_options();
    o.perform_maintenance = false;
    client off(o, t);
    CHECK_FALSE(off.can_approve());
    CHECK(off.approve({"upcoming-maintenance"}).error().code == errc::unsupported);
    CHECK(t.request_count() == 0);
    STATIC_REQUIRE(forewarn::is_notice_source_v<client>);
}

TEST_CASE("endpoint precedence: option, then FOREWARN_GCE_ENDPOINT, then GCE_METADATA_HOST, then the default",
          "[gce]") {
    auto o = test_options();
    o.endpoint.clear();
    SECTION("nothing set: the metadata host name") {
        scoped_env a("FOREWARN_GCE_ENDPOINT", nullptr), b("GCE_METADATA_HOST", nullptr);
        client c(o, fake_transport());
        CHECK(c.endpoint() == "http://metadata.google.internal.");
    }
    SECTION("GCE_METADATA_HOST is a host:port") {
        scoped_env a("FOREWARN_GCE_ENDPOINT", nullptr), b("GCE_METADATA_HOST", "10.1.2.3:8080");
        client c(o, fake_transport());
        CHECK(c.endpoint() == "http://10.1.2.3:8080");
    }
    SECTION("FOREWARN_GCE_ENDPOINT beats GCE_METADATA_HOST") {
        scoped_env a("FOREWARN_GCE_ENDPOINT", "http://127.0.0.1:9000/"), b("GCE_METADATA_HOST", "10.1.2.3:8080");
        client c(o, fake_transport());
        CHECK(c.endpoint() == "http://127.0.0.1:9000");
    }
    SECTION("the option beats both") {
        scoped_env a("FOREWARN_GCE_ENDPOINT", "http://127.0.0.1:9000"), b("GCE_METADATA_HOST", "10.1.2.3:8080");
        o.endpoint = "http://emulator.test:81/computeMetadata/v1/";
        fake_transport t;
        t.respond(200, "vm", google());
        client c(o, t);
        CHECK(c.endpoint() == "http://emulator.test:81");
        REQUIRE(c.get("instance/name"));
        CHECK(t.requests()[0].url == "http://emulator.test:81/computeMetadata/v1/instance/name?alt=text");
    }
    SECTION("a bad endpoint fails every call without a request") {
        scoped_env a("FOREWARN_GCE_ENDPOINT", "ftp://x"), b("GCE_METADATA_HOST", nullptr);
        fake_transport t;
        client c(o, t);
        auto v = c.get("instance/name");
        REQUIRE_FALSE(v);
        CHECK(v.error().code == errc::invalid_argument);
        CHECK(contains(v.error().message, "FOREWARN_GCE_ENDPOINT"));
        CHECK_FALSE(c.fetch());
        CHECK(t.request_count() == 0);
    }
}

TEST_CASE("the default host name falls back to 169.254.169.254 when it does not resolve", "[gce]") {
    scoped_env a("FOREWARN_GCE_ENDPOINT", nullptr), b("GCE_METADATA_HOST", nullptr);
    auto o = test_options();
    o.endpoint.clear();
    fake_transport t;
    t.fail(error(errc::transport, "Could not resolve host: metadata.google.internal."));
    t.respond(200, "vm", google()).respond(200, "1", google());
    client c(o, t);
    auto v = c.get("instance/name");
    REQUIRE(v);
    CHECK(c.endpoint() == "http://169.254.169.254");
    REQUIRE(c.get("instance/id"));
    const auto reqs = t.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[0].url == "http://metadata.google.internal./computeMetadata/v1/instance/name?alt=text");
    CHECK(reqs[1].url == "http://169.254.169.254/computeMetadata/v1/instance/name?alt=text");
    CHECK(reqs[2].url == "http://169.254.169.254/computeMetadata/v1/instance/id?alt=text");
}

TEST_CASE("an explicit endpoint never falls back to another host", "[gce]") {
    fake_transport t;
    t.fail(error(errc::transport, "refused")).respond(200, "vm", google());
    client c(test_options(), t);
    REQUIRE(c.get("instance/name"));
    for (const auto& r : t.requests()) CHECK(contains(r.url, "http://metadata.test/"));
}

TEST_CASE("a page that is not the metadata server does not trigger the fallback", "[gce]") {
    scoped_env a("FOREWARN_GCE_ENDPOINT", nullptr), b("GCE_METADATA_HOST", nullptr);
    auto o = test_options();
    o.endpoint.clear();
    fake_transport t;
    t.respond(200, "<html>Did you mean...</html>", {{"Content-Type", "text/html"}});
    client c(o, t);
    auto v = c.get("instance/name");
    REQUIRE_FALSE(v);
    CHECK(v.error().code == errc::not_metadata_server);
    CHECK(t.request_count() == 1);
    CHECK(c.endpoint() == "http://metadata.google.internal.");
}

TEST_CASE("cancel interrupts a backoff - it is sticky until reset", "[gce]") {
    fake_transport t;
    t.respond(503, "", google());
    auto o = test_options();
    o.retry.initial_backoff = 30s;
    o.retry.max_backoff = 30s;
    o.retry.jitter = 0;
    client c(o, t);
    std::optional<result<gce::metadata_value>> got;
    const auto start = std::chrono::steady_clock::now();
    std::thread th([&] { got = c.get("instance/name"); });
    for (int i = 0; i < 5000 && t.request_count() == 0; ++i) std::this_thread::sleep_for(1ms);
    REQUIRE(t.request_count() == 1);
    c.cancel();
    th.join();
    REQUIRE(got);
    REQUIRE_FALSE(*got);
    CHECK(got->error().code == errc::cancelled);
    CHECK(std::chrono::steady_clock::now() - start < 10s);  // far less than the 30 s backoff
    CHECK(t.request_count() == 1);

    auto again = c.get("instance/name");
    REQUIRE_FALSE(again);
    CHECK(again.error().code == errc::cancelled);
    CHECK(t.request_count() == 1);

    c.reset();
    t.respond(200, "vm", google());
    REQUIRE(c.get("instance/name"));
}

TEST_CASE("every request takes a token from the per-host bucket unless rate_limit is off", "[gce]") {
    fake_transport t;
    t.otherwise([](const http_request&) -> result<http_response> { return answer(200, "v", google()); });
    auto o = test_options();
    o.endpoint = "http://bucket-off.invalid";
    client off(o, t);
    for (int i = 0; i < 5; ++i) REQUIRE(off.get("instance/name"));
    CHECK(forewarn::rate_limiter::for_host("bucket-off.invalid")->try_acquire().count() == 0);

    o.rate_limit = true;
    o.endpoint = "http://bucket-on.invalid";
    client on(o, t);
    for (int i = 0; i < 5; ++i) REQUIRE(on.get("instance/name"));
    // The burst of 5 is spent: the next token is some 200 ms away.
    CHECK(forewarn::rate_limiter::for_host("bucket-on.invalid")->try_acquire().count() > 0);
    CHECK(t.request_count() == 10);
}

namespace {

// A fake metadata server with hanging GETs: `maintenance_watch` and `preempted_watch` answer the
// wait_for_change requests; plain GETs answer with `m_now` / `p_now`.
// upcoming-maintenance answers plain GETs with `u_status`/`u_now` (404 by default: a machine
// type without it) and hanging ones with `upcoming_watch`.
struct watch_server {
    std::function<result<http_response>(const http_request&)> maintenance_watch, preempted_watch, upcoming_watch;
    std::string m_now = "NONE", m_etag = "m1", p_now = "FALSE", p_etag = "p1";
    int u_status = 404;
    std::string u_now, u_etag = "u1";
};

// The handler holds a plain pointer: the test owns `s` for its whole body, and a shared_ptr here
// would close a cycle (transport state -> handler -> server -> watch lambdas -> transport) that
// LeakSanitizer reports.
gce::client_options watch_options() {
    auto o = test_options();
    o.watch_timeout = 30s;
    return o;
}

fake_transport serve(const std::shared_ptr<watch_server>& server) {
    fake_transport t;
    t.otherwise([s = server.get()](const http_request& r) -> result<http_response> {
        const bool waiting = contains(r.url, "wait_for_change=true");
        if (contains(r.url, "/instance/maintenance-event?"))
            return waiting ? s->maintenance_watch(r) : answer(200, s->m_now, google(s->m_etag));
        if (contains(r.url, "/instance/preempted?"))
            return waiting ? s->preempted_watch(r) : answer(200, s->p_now, google(s->p_etag));
        if (contains(r.url, "/instance/upcoming-maintenance?"))
            return waiting ? s->upcoming_watch(r) : answer(s->u_status, s->u_now, google(s->u_etag));
        return answer(404, "", google());
    });
    return t;
}

gce::client_options upcoming_watch_options() {
    auto o = watch_options();
    o.read_upcoming_maintenance = true;
    return o;
}

}  // namespace

TEST_CASE("next() watches: a maintenance change cuts the preempted watch short", "[gce][watch]") {
    auto s = std::make_shared<watch_server>();
    s->p_now = "TRUE";
    fake_transport t = serve(s);
    s->maintenance_watch = [](const http_request&) -> result<http_response> {
        return answer(200, "MIGRATE_ON_HOST_MAINTENANCE", google("m2"));
    };
    s->preempted_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    client c(watch_options(), t);
    auto first = c.next();
    REQUIRE(first);
    REQUIRE(first->incarnation == "m1/p1");
    REQUIRE(first->events.size() == 1);

    auto next = c.next();
    REQUIRE(next);
    CHECK(next->incarnation == "m2/p1");
    REQUIRE(next->events.size() == 2);
    CHECK(next->events[0].type == event_type::live_migrate);
    CHECK(next->events[1].type == event_type::preempted);  // kept from `first`, with its ETag

    const auto m = urls_with(t, "maintenance-event?wait_for_change=true");
    REQUIRE(m.size() == 1);
    CHECK(contains(m[0], "last_etag=m1&timeout_sec=30"));
    // The preempted watch may have been cut short before it was sent; if sent, it was a hang.
    const auto p = urls_with(t, "preempted?wait_for_change=true");
    REQUIRE(p.size() <= 1);
    if (!p.empty()) CHECK(contains(p[0], "last_etag=p1&timeout_sec=30"));
    // The cut-short key is not read again: its value and ETag come from `first`.
    CHECK(urls_with(t, "preempted?alt=text").size() == 1);
    // The client is usable again: the cut-short lane was reset.
    CHECK_FALSE(t.cancelled());
    REQUIRE(c.get("instance/maintenance-event"));
}

TEST_CASE("next() watches: a preempted change cuts the maintenance watch short", "[gce][watch]") {
    auto s = std::make_shared<watch_server>();
    s->m_now = "SOMETHING_NEW";
    fake_transport t = serve(s);
    s->maintenance_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    s->preempted_watch = [](const http_request&) -> result<http_response> { return answer(200, "TRUE", google("p2")); };
    client c(watch_options(), t);
    auto first = c.next();
    REQUIRE(first);
    auto next = c.next();
    REQUIRE(next);
    CHECK(next->incarnation == "m1/p2");
    REQUIRE(next->events.size() == 2);
    CHECK(next->events[0].id == "maintenance-event:SOMETHING_NEW");
    CHECK(next->events[0].type == event_type::unknown);
    CHECK(next->events[1].type == event_type::preempted);
    CHECK(urls_with(t, "maintenance-event?alt=text").size() == 1);
}

TEST_CASE("next() watches: a change on the cut-short key is not lost: the next call returns it", "[gce][watch]") {
    // A server with the real last_etag rule: a watch answers at once when its last_etag is not
    // the key's current ETag, and hangs otherwise.
    auto s = std::make_shared<watch_server>();
    fake_transport t = serve(s);
    s->maintenance_watch = [t, s = s.get()](const http_request& r) -> result<http_response> {  // no cycle through `s`
        if (!contains(r.url, "last_etag=" + s->m_etag + "&")) return answer(200, s->m_now, google(s->m_etag));
        return hang_until_cancelled(t);
    };
    s->preempted_watch = [t, s = s.get()](const http_request& r) -> result<http_response> {  // no cycle through `s`
        if (!contains(r.url, "last_etag=" + s->p_etag + "&")) return answer(200, s->p_now, google(s->p_etag));
        return hang_until_cancelled(t);
    };
    client c(watch_options(), t);
    auto first = c.next();
    REQUIRE(first);

    // maintenance-event changes: its watch answers, the preempted watch is cut short.
    s->m_now = "MIGRATE_ON_HOST_MAINTENANCE";
    s->m_etag = "m2";
    auto second = c.next();
    REQUIRE(second);
    CHECK(second->incarnation == "m2/p1");

    // preempted changed around the time its watch was cut short: the next call still carries
    // p1 for it, so the server answers at once.
    s->p_now = "TRUE";
    s->p_etag = "p2";
    auto third = c.next();
    REQUIRE(third);
    CHECK(third->incarnation == "m2/p2");
    REQUIRE(third->events.size() == 2);
    CHECK(third->events[0].type == event_type::live_migrate);
    CHECK(third->events[1].type == event_type::preempted);
}

TEST_CASE("next() watches: no change by timeout_sec gives the same snapshot, one request per key",
          "[gce][watch]") {
    auto s = std::make_shared<watch_server>();
    fake_transport t = serve(s);
    s->maintenance_watch = [](const http_request&) -> result<http_response> { return answer(200, "NONE", google("m1")); };
    s->preempted_watch = [](const http_request&) -> result<http_response> { return answer(200, "FALSE", google("p1")); };
    client c(watch_options(), t);
    auto first = c.next();
    REQUIRE(first);
    const auto before = t.request_count();
    auto next = c.next();
    REQUIRE(next);
    CHECK(*next == *first);
    CHECK(t.request_count() - before == 2);
}

TEST_CASE("next() watches: the first call, and the one after wake(), are plain GETs", "[gce][watch]") {
    auto s = std::make_shared<watch_server>();
    s->m_now = "MIGRATE_ON_HOST_MAINTENANCE";
    fake_transport t = serve(s);
    client c(watch_options(), t);
    auto doc = c.next();
    REQUIRE(doc);
    CHECK(doc->events.size() == 1);
    CHECK(urls_with(t, "wait_for_change").empty());
    c.wake();  // between two calls: the next one asks at once instead of hanging
    auto again = c.next();
    REQUIRE(again);
    CHECK(*again == *doc);
    CHECK(urls_with(t, "wait_for_change").empty());
    CHECK(urls_with(t, "maintenance-event?alt=text").size() == 2);
}

TEST_CASE("next() watches: when preempted does not exist only maintenance-event is watched", "[gce][watch]") {
    auto s = std::make_shared<watch_server>();
    fake_transport t = serve(s);
    s->maintenance_watch = [](const http_request&) -> result<http_response> { return answer(200, "NONE", google("m1")); };
    s->preempted_watch = [](const http_request&) -> result<http_response> { return answer(500, "", google()); };
    // preempted does not exist at first, then appears.
    int preempted_reads = 0;
    t.otherwise([s = s.get(), &preempted_reads](const http_request& r) -> result<http_response> {
        const bool waiting = contains(r.url, "wait_for_change=true");
        if (contains(r.url, "/instance/maintenance-event?"))
            return waiting ? s->maintenance_watch(r) : answer(200, s->m_now, google(s->m_etag));
        if (contains(r.url, "/instance/preempted?")) {
            if (waiting) return s->preempted_watch(r);
            return ++preempted_reads == 1 ? answer(404, "", google()) : answer(200, s->p_now, google(s->p_etag));
        }
        return answer(404, "", google());
    });
    client c(watch_options(), t);
    auto first = c.next();
    REQUIRE(first);
    CHECK(first->incarnation == "m1");
    auto next = c.next();
    REQUIRE(next);
    CHECK(next->incarnation == "m1/p1");  // the key appeared since: it is read, then watched next time
    CHECK(urls_with(t, "preempted?wait_for_change").empty());
    CHECK(urls_with(t, "preempted?alt=text").size() == 2);
}

TEST_CASE("next() watches: an error on one key ends the other watch and is that key's error in the document",
          "[gce][watch]") {
    auto s = std::make_shared<watch_server>();
    fake_transport t = serve(s);
    s->maintenance_watch = [](const http_request&) -> result<http_response> { return answer(400, "bad", google()); };
    s->preempted_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    client c(watch_options(), t);
    REQUIRE(c.next());
    auto next = c.next();  // the preempted hang, if not cut short, would end as a 200 "HUNG" after 10 s
    REQUIRE(next);
    REQUIRE(next->key_errors.size() == 1);
    CHECK(next->key_errors[0].code == errc::http_status);
    CHECK(next->key_errors[0].http_status == 400);
    CHECK(contains(next->key_errors[0].url, "/instance/maintenance-event?wait_for_change=true"));
}

TEST_CASE("next() watches: cancel ends both hanging watches", "[gce][watch]") {
    auto s = std::make_shared<watch_server>();
    fake_transport t = serve(s);
    s->maintenance_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    s->preempted_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    client c(watch_options(), t);
    REQUIRE(c.next());
    const auto plain = t.request_count();
    std::optional<result<document>> got;
    std::thread th([&] { got = c.next(); });
    for (int i = 0; i < 5000 && t.request_count() < plain + 2; ++i) std::this_thread::sleep_for(1ms);
    REQUIRE(t.request_count() == plain + 2);
    c.cancel();
    th.join();
    REQUIRE(got);
    REQUIRE_FALSE(*got);  // an uncancelled hang would end as a 200 "HUNG"
    CHECK(got->error().code == errc::cancelled);
    // Sticky: the next call does not even send.
    CHECK_FALSE(c.next());
    CHECK(t.request_count() == plain + 2);
}

TEST_CASE("watch refuses timeout_sec below one second - watch_timeout below it is raised to it", "[gce][watch]") {
    fake_transport t;
    auto o = watch_options();
    o.watch_timeout = 0s;
    client c(o, t);
    auto r = c.watch("instance/maintenance-event", "m1", 0s);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_argument);
    CHECK(t.request_count() == 0);
    CHECK(c.options().watch_timeout == 1s);
}

TEST_CASE("upcoming-maintenance (on by default): the window becomes an event - its odd answers are none - 404 stops the asking",
          "[gce][upcoming]") {
    CHECK(gce::client_options{}.read_upcoming_maintenance);
    struct upcoming_answer {
        int status = 404;
        std::string body;
    };
    auto next_answer = std::make_shared<upcoming_answer>();
    auto failures = std::make_shared<forewarn_test::thread_failures>();  // answers run on the client's lanes
    fake_transport t;
    t.otherwise([next_answer, failures](const http_request& r) -> result<http_response> {
        if (contains(r.url, "maintenance-event")) return answer(200, "NONE", google("m1"));
        if (contains(r.url, "preempted")) return answer(200, "FALSE", google("p1"));
        if (contains(r.url, "upcoming-maintenance")) {
            failures->check(contains(r.url, "alt=json"), "upcoming-maintenance is asked with alt=json: " + r.url);
            return answer(next_answer->status, next_answer->body, google("u1"));
        }
        return answer(404, "", google(""));
    });
    auto count_upcoming = [&] {
        std::size_t n = 0;
        for (const auto& r : t.requests()) n += contains(r.url, "upcoming-maintenance");
        return n;
    };

    client off(test_options(), t);  // turned off
    REQUIRE(off.fetch().has_value());
    CHECK(count_upcoming() == 0);

    auto o = test_options();
    o.read_upcoming_maintenance = true;
    auto warnings = std::make_shared<std::vector<std::string>>();
    o.log.level = forewarn::log_level::warn;
    o.log.sink = [warnings](const forewarn::log_record& r) { warnings->emplace_back(r.message); };
    client c(o, t);
    next_answer->status = 200;
    next_answer->body = R"({"type":"SCHEDULED","maintenance_status":"PENDING","window_start_time":"2026-12-03T10:00:00Z",)"
                        R"("window_end_time":"2026-12-03T14:00:00Z","can_reschedule":"true"})";
    auto doc = c.fetch();
    REQUIRE(doc.has_value());
    REQUIRE(doc->events.size() == 1);
    CHECK(doc->events[0].id == "upcoming-maintenance");
    CHECK(doc->events[0].type == event_type::maintenance);
    CHECK(doc->events[0].status == event_status::scheduled);
    CHECK(doc->events[0].affects("vm-test"));
    CHECK(warnings->empty());

    // A failure or an answer that is not a window keeps the last window, its error in the
    // document, and never holds back the document.
    next_answer->status = 503;
    next_answer->body = "busy";  // a real 503: retried, then given up
    auto before = t.request_count();
    doc = c.fetch();
    REQUIRE(doc.has_value());
    REQUIRE(doc->events.size() == 1);
    CHECK(doc->events[0].id == "upcoming-maintenance");
    CHECK(t.request_count() == before + 2 + 3);  // maintenance-event, preempted, three attempts
    REQUIRE(doc->key_errors.size() == 1);  // the key's error is in the document, for the poller to report
    CHECK(doc->key_errors[0].http_status == 503);
    CHECK(contains(doc->key_errors[0].url, "upcoming-maintenance"));

    next_answer->status = 200;
    next_answer->body = R"({"type":"SCHEDULED","window_start_time":"next week"})";
    doc = c.fetch();
    REQUIRE(doc.has_value());
    REQUIRE(doc->events.size() == 1);
    CHECK(doc->events[0].id == "upcoming-maintenance");
    REQUIRE(doc->key_errors.size() == 1);
    CHECK(contains(doc->key_errors[0].describe(), "upcoming-maintenance.window_start_time"));

    for (const char* none : {"{}", "NONE"}) {
        next_answer->body = none;
        doc = c.fetch();
        REQUIRE(doc.has_value());
        CHECK(doc->events.empty());
    }
    before = t.request_count();
    next_answer->status = 503;
    next_answer->body = R"({"error": "no notifications have been received yet, try again later"})";
    doc = c.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->events.empty());
    CHECK(t.request_count() == before + 3);  // maintenance-event, preempted, one upcoming: no retry
    CHECK(doc->key_errors.empty());          // the odd answers are no error

    next_answer->status = 404;
    REQUIRE(c.fetch().has_value());
    const auto asked = count_upcoming();
    REQUIRE(c.fetch().has_value());
    CHECK(count_upcoming() == asked);  // not asked again after the 404
    CHECK(warnings->empty());
}

TEST_CASE("next() watches upcoming-maintenance as a third key: its change cuts the other watches short",
          "[gce][watch][upcoming]") {
    auto s = std::make_shared<watch_server>();
    s->u_status = 200;
    s->u_now = "{}";
    fake_transport t = serve(s);
    s->maintenance_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    s->preempted_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    s->upcoming_watch = [](const http_request&) -> result<http_response> {
        return answer(200,
                      R"({"type":"SCHEDULED","maintenance_status":"ONGOING","window_start_time":"2026-12-03T10:00:00Z",)"
                      R"("window_end_time":"2026-12-03T14:00:00Z"})",
                      google("u2"));
    };
    client c(upcoming_watch_options(), t);
    auto first = c.next();
    REQUIRE(first);
    CHECK(first->incarnation == "m1/p1/u1");
    CHECK(first->events.empty());

    auto next = c.next();
    REQUIRE(next);
    CHECK(next->incarnation == "m1/p1/u2");
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].id == "upcoming-maintenance");
    CHECK(next->events[0].status == event_status::started);
    const auto u = urls_with(t, "upcoming-maintenance?wait_for_change=true");
    REQUIRE(u.size() == 1);
    CHECK(contains(u[0], "last_etag=u1&timeout_sec=30&alt=json"));
    // The other hanging GETs may have been cut short before they were sent: at most one each.
    CHECK(urls_with(t, "maintenance-event?wait_for_change=true").size() <= 1);
    CHECK(urls_with(t, "preempted?wait_for_change=true").size() <= 1);
    // The cut-short keys are not read again, and the watched key's answer is used as it is.
    CHECK(urls_with(t, "maintenance-event?alt=text").size() == 1);
    CHECK(urls_with(t, "upcoming-maintenance?alt=json").size() == 1);
    CHECK_FALSE(t.cancelled());
}

TEST_CASE("next() watches: upcoming-maintenance without an ETag (the 503) is polled on its own cadence, "
          "never waiting for the other keys' hanging GETs",
          "[gce][watch][upcoming]") {
    // The other two keys hang until cut short; upcoming-maintenance answers the 503 of a VM that
    // never had a notice, and from its third plain read on a PENDING window (with an ETag).
    auto s = std::make_shared<watch_server>();
    fake_transport t = serve(s);
    forewarn_test::thread_failures failures;  // the watch would run on a lane thread
    s->maintenance_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    s->preempted_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    s->upcoming_watch = [&failures](const http_request&) -> result<http_response> {
        failures.fail("upcoming-maintenance without an ETag is not watched");
        return answer(500, "", google());
    };
    auto upcoming_reads = std::make_shared<std::atomic<int>>(0);
    t.otherwise([s = s.get(), upcoming_reads](const http_request& r) -> result<http_response> {
        const bool waiting = contains(r.url, "wait_for_change=true");
        if (contains(r.url, "/instance/maintenance-event?"))
            return waiting ? s->maintenance_watch(r) : answer(200, s->m_now, google(s->m_etag));
        if (contains(r.url, "/instance/preempted?"))
            return waiting ? s->preempted_watch(r) : answer(200, s->p_now, google(s->p_etag));
        if (contains(r.url, "/instance/upcoming-maintenance?")) {
            if (waiting) return s->upcoming_watch(r);
            if (++*upcoming_reads < 3)
                return answer(503, R"({"error": "no notifications have been received yet, try again later"})", google(""));
            return answer(200,
                          R"({"type":"SCHEDULED","maintenance_status":"PENDING","window_start_time":"2026-12-03T10:00:00Z",)"
                          R"("window_end_time":"2026-12-03T14:00:00Z"})",
                          google("u2"));
        }
        return answer(404, "", google());
    });
    auto o = upcoming_watch_options();
    o.poll_interval = 200ms;  // the floor; the hanging GETs would take 30 s (here: 10 s, then fail)
    client c(o, t);
    auto first = c.next();
    REQUIRE(first);
    CHECK(first->incarnation == "m1/p1");
    CHECK(first->events.empty());

    const auto started = std::chrono::steady_clock::now();
    auto next = c.next();
    const auto took = std::chrono::steady_clock::now() - started;
    REQUIRE(next);
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].id == "upcoming-maintenance");
    CHECK(next->events[0].status == event_status::scheduled);
    CHECK(next->incarnation == "m1/p1/u2");
    CHECK(took < 5s);  // a hang cut short, not one that ran out (10 s): a bound, not a timing
    CHECK(*upcoming_reads == 3);
    CHECK(urls_with(t, "upcoming-maintenance?wait_for_change").empty());
    // The hanging keys were cut short and keep their values: not read plainly again.
    CHECK(urls_with(t, "maintenance-event?alt=text").size() == 1);
    CHECK_FALSE(t.cancelled());

    // From now on the key has an ETag: it is watched like the others.
    s->upcoming_watch = [t](const http_request&) { return hang_until_cancelled(t); };
    s->maintenance_watch = [](const http_request&) -> result<http_response> {
        return answer(200, "MIGRATE_ON_HOST_MAINTENANCE", google("m2"));
    };
    auto third = c.next();
    REQUIRE(third);
    CHECK(third->events.size() == 2);
    CHECK(*upcoming_reads == 3);
}

TEST_CASE("upcoming-maintenance: a timeout, 403 or 429 on it is its own failure - the other keys' events are "
          "delivered with its error",
          "[gce][upcoming]") {
    // The base rule fails a whole document on these (they are about the service, not a key);
    // upcoming-maintenance is optional, so none of its failures may hide a live migration.
    struct row {
        const char* what;
        std::function<result<http_response>()> upcoming;
        errc code;
        int status;
    };
    const std::vector<row> rows = {
        {"timeout", [] { return result<http_response>(error(errc::timeout, "timed out")); }, errc::timeout, 0},
        {"403", [] { return result<http_response>(answer(403, "forbidden", google(""))); }, errc::http_status, 403},
        {"429", [] { return result<http_response>(answer(429, "slow down", google(""))); }, errc::http_status, 429},
    };
    for (const auto& r : rows) {
        INFO(r.what);
        fake_transport t;
        t.otherwise([&r](const http_request& req) -> result<http_response> {
            if (contains(req.url, "/instance/maintenance-event?")) return answer(200, "MIGRATE_ON_HOST_MAINTENANCE", google("m1"));
            if (contains(req.url, "/instance/preempted?")) return answer(200, "TRUE", google("p1"));
            if (contains(req.url, "/instance/upcoming-maintenance?")) return r.upcoming();
            return answer(404, "", google());
        });
        auto o = test_options();
        o.read_upcoming_maintenance = true;
        client c(o, t);
        auto doc = c.fetch();
        REQUIRE(doc.has_value());
        REQUIRE(doc->events.size() == 2);
        CHECK(doc->events[0].type == event_type::live_migrate);
        CHECK(doc->events[1].type == event_type::preempted);
        REQUIRE(doc->key_errors.size() == 1);
        CHECK(doc->key_errors[0].code == r.code);
        CHECK(doc->key_errors[0].http_status == r.status);
        CHECK(contains(doc->key_errors[0].url, "upcoming-maintenance"));
        // And next(), whose first document is the same reading.
        client watching(o, t);
        auto first = watching.next();
        REQUIRE(first.has_value());
        CHECK(first->events.size() == 2);
    }
}

TEST_CASE("an endpoint that is only the metadata root has no host - a clear error", "[gce][endpoint]") {
    for (const char* bad : {"computeMetadata/v1", "http:///computeMetadata/v1", "/computeMetadata/v1"}) {
        INFO(bad);
        auto r = forewarn::detail::gce_normalize_endpoint(bad, "test");
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_argument);
    }
    auto ok = forewarn::detail::gce_normalize_endpoint("metadata.test/computeMetadata/v1/", "test");
    REQUIRE(ok.has_value());
    CHECK(*ok == "http://metadata.test");
}

}  // namespace test_gce_client
