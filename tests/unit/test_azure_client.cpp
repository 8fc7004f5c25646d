// SPDX-License-Identifier: MIT
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"
#include "scoped_env.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace test_azure_client {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::azure::client_options;
using forewarn::testing::fake_transport;
using client = forewarn::azure::basic_scheduled_events_client<fake_transport>;

namespace {

constexpr const char* empty_doc = R"({"DocumentIncarnation":1,"Events":[]})";
constexpr const char* url_2020 = "http://imds.test/metadata/scheduledevents?api-version=2020-07-01";

std::string seed(const std::string& name) {
    std::ifstream in(std::string(FOREWARN_SOURCE_DIR) + "/tests/unit/data/azure/" + name, std::ios::binary);
    REQUIRE(in.good());
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Tests run with tiny backoffs, no shared rate limit and an explicit endpoint.
client_options test_options() {
    client_options o;
    o.endpoint = "http://imds.test";
    o.rate_limit = false;
    o.retry.initial_backoff = std::chrono::milliseconds(1);
    o.retry.max_backoff = std::chrono::milliseconds(2);
    return o;
}

std::optional<std::string> header(const http_request& r, std::string_view name) {
    if (const auto* v = forewarn::find_header(r.headers, name)) return *v;
    return std::nullopt;
}


}  // namespace

static_assert(forewarn::is_notice_source_v<client>);
static_assert(forewarn::is_transport_v<fake_transport>);

TEST_CASE("fetch GETs the scheduledevents URL with Metadata: true and nothing else", "[azure][client]") {
    fake_transport t;
    t.respond(200, seed("linux_incarnation_2.json"));
    client c(test_options(), t);
    auto doc = c.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->incarnation == "2");
    CHECK(doc->events.at(0).id == "C7061BAC-AFDC-4513-B24B-AA5F13A16123");
    CHECK(c.last_incarnation() == std::optional<std::string>("2"));
    REQUIRE(t.request_count() == 1);
    const auto r = t.requests()[0];
    CHECK(r.method == http_method::get);
    CHECK(r.url == url_2020);
    CHECK(header(r, "Metadata") == std::optional<std::string>("true"));
    CHECK_FALSE(header(r, "X-Forwarded-For").has_value());
    CHECK(r.body.empty());
    CHECK(c.transport().request_count() == 1);  // transport() is the client's own transport
}

TEST_CASE("fetch follows the Linux seed's incarnations 1 to 4", "[azure][client][seed]") {
    fake_transport t;
    for (int i = 1; i <= 4; ++i) t.respond(200, seed("linux_incarnation_" + std::to_string(i) + ".json"));
    client c(test_options(), t);
    std::vector<std::size_t> sizes;
    for (int i = 1; i <= 4; ++i) {
        auto doc = c.fetch();
        REQUIRE(doc.has_value());
        CHECK(doc->incarnation == std::to_string(i));
        sizes.push_back(doc->events.size());
    }
    CHECK(sizes == std::vector<std::size_t>{0, 1, 1, 0});
}

TEST_CASE("the api-version option goes into the URL - bad ones never reach the network", "[azure][client]") {
    for (auto v : forewarn::azure::known_api_versions) {
        fake_transport t;
        t.respond(200, empty_doc);
        auto o = test_options();
        o.api_version = std::string(v);
        client c(o, t);
        REQUIRE(c.fetch().has_value());
        CHECK(t.requests().at(0).url == "http://imds.test/metadata/scheduledevents?api-version=" + std::string(v));
    }
    {
        fake_transport t;
        t.respond(200, empty_doc);
        auto o = test_options();
        o.api_version = "2031-01-01";  // newer than forewarn knows: sent as is
        client c(o, t);
        REQUIRE(c.fetch().has_value());
        CHECK(t.requests().at(0).url.find("api-version=2031-01-01") != std::string::npos);
    }
    for (const char* bad : {"{latest}", "", "2020-07-01&x=y", "2016-01-01"}) {
        fake_transport t;
        auto o = test_options();
        o.api_version = bad;
        client c(o, t);
        auto r = c.fetch();
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_argument);
        CHECK(c.approve({"x"}).error().code == errc::invalid_argument);
        CHECK(t.request_count() == 0);
    }
}

TEST_CASE("400 and 404 are not retried - 400 says what IMDS wants", "[azure][client][retry]") {
    {
        fake_transport t;
        t.otherwise([](const http_request&) { return forewarn::result<forewarn::http_response>(forewarn::http_response{400, {}, "Bad Request"}); });
        client c(test_options(), t);
        auto r = c.fetch();
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::http_status);
        CHECK(r.error().http_status == 400);
        CHECK(r.error().message.find("Metadata: true") != std::string::npos);
        CHECK(r.error().message.find("api-version") != std::string::npos);
        CHECK(t.request_count() == 1);
    }
    {
        fake_transport t;
        t.otherwise([](const http_request&) { return forewarn::result<forewarn::http_response>(forewarn::http_response{404, {}, ""}); });
        client c(test_options(), t);
        auto r = c.fetch();
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::not_found);
        CHECK(r.error().http_status == 404);
        CHECK(t.request_count() == 1);
    }
}

TEST_CASE("429, 500 and 503 are retried up to max_attempts, then reported with the status", "[azure][client][retry]") {
    for (int status : {429, 500, 503}) {
        INFO(status);
        {
            fake_transport t;
            t.respond(status).respond(status).respond(200, empty_doc);
            client c(test_options(), t);
            REQUIRE(c.fetch().has_value());
            CHECK(t.request_count() == 3);
        }
        {
            fake_transport t;
            t.otherwise([status](const http_request&) {
                return forewarn::result<forewarn::http_response>(forewarn::http_response{status, {}, ""});
            });
            auto o = test_options();
            o.retry.max_attempts = 4;
            client c(o, t);
            auto r = c.fetch();
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::http_status);
            CHECK(r.error().http_status == status);
            CHECK(t.request_count() == 4);
        }
    }
}

TEST_CASE("410 is retried for the gone window, not for max_attempts", "[azure][client][retry]") {
    fake_transport t;
    t.respond(410).respond(410).respond(410).respond(410).respond(200, empty_doc);
    auto o = test_options();
    o.retry.max_attempts = 2;  // 410 ignores it: four 410s then the answer
    client c(o, t);
    REQUIRE(c.fetch().has_value());
    CHECK(t.request_count() == 5);

    fake_transport forever;
    forever.otherwise([](const http_request&) { return forewarn::result<forewarn::http_response>(forewarn::http_response{410, {}, ""}); });
    o.retry.gone_window = std::chrono::milliseconds(40);
    o.retry.budget_capacity = 1e6;
    client g(o, forever);
    const auto start = std::chrono::steady_clock::now();
    auto r = g.fetch();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().http_status == 410);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(40));
    CHECK(forever.request_count() > 2);
}

TEST_CASE("other statuses are errors with the status, not retried", "[azure][client][retry]") {
    for (int status : {201, 204, 301, 302, 401, 403, 405, 502, 504}) {
        INFO(status);
        fake_transport t;
        t.respond(status, empty_doc).respond(200, empty_doc);
        client c(test_options(), t);
        auto r = c.fetch();
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::http_status);
        CHECK(r.error().http_status == status);
        CHECK(t.request_count() == 1);
    }
    fake_transport t;
    t.respond(204);
    client c(test_options(), t);
    CHECK(c.approve({"e"}).has_value());  // an approval needs no body: any 2xx will do
}

TEST_CASE("transport errors and timeouts are retried - cancellation is not", "[azure][client][retry]") {
    fake_transport t;
    t.fail({errc::transport, "connection refused"}).fail({errc::timeout, "timed out"}).respond(200, empty_doc);
    client c(test_options(), t);
    REQUIRE(c.fetch().has_value());
    CHECK(t.request_count() == 3);

    fake_transport cancelled;
    cancelled.fail({errc::cancelled, "cancelled"}).respond(200, empty_doc);
    client k(test_options(), cancelled);
    CHECK(k.fetch().error().code == errc::cancelled);
    CHECK(cancelled.request_count() == 1);
}

TEST_CASE("bad 200 bodies are errors and are not retried", "[azure][client]") {
    struct bad {
        std::string body;
        errc code;
    };
    const bad cases[] = {{"", errc::empty_body},
                         {"   \n", errc::empty_body},
                         {"null", errc::invalid_document},
                         {"[]", errc::invalid_document},
                         {"{}", errc::invalid_document},
                         {R"({"DocumentIncarnation":2,"Events":[{"EventId":"a","EventType":"Reboot"}]})", errc::invalid_document},
                         {R"({"DocumentIncarnation":2,"Eve)", errc::parse_error},
                         {"<html>gateway</html>", errc::parse_error},
                         {std::string(1000000, '['), errc::parse_error},
                         {"{\"DocumentIncarnation\":1,\"Events\":[],\"x\":\"\xfe\"}", errc::parse_error}};
    for (const auto& b : cases) {
        INFO(b.body.substr(0, 80));
        fake_transport t;
        t.respond(200, b.body).respond(200, empty_doc);
        client c(test_options(), t);
        auto r = c.fetch();
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == b.code);
        CHECK(t.request_count() == 1);
        CHECK_FALSE(c.last_incarnation().has_value());
    }
}

TEST_CASE("max_body and connect_timeout go on every request", "[azure][client]") {
    fake_transport t;
    t.respond(200, empty_doc);
    auto o = test_options();
    o.max_body = 16;
    o.connect_timeout = std::chrono::milliseconds(1234);
    client c(o, t);
    auto r = c.fetch();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::body_too_large);
    CHECK(t.requests().at(0).max_body == 16);
    CHECK(t.requests().at(0).connect_timeout == std::chrono::milliseconds(1234));
}

TEST_CASE("the first call's long timeout holds until the service has answered once", "[azure][client]") {
    fake_transport t;
    t.fail({errc::timeout, "slow first call"}).respond(503).respond(200, empty_doc).respond(200, empty_doc);
    t.respond(200, empty_doc);
    auto o = test_options();
    o.poll_timeout = std::chrono::milliseconds(3000);
    client c(o, t);
    REQUIRE(c.fetch().has_value());
    REQUIRE(c.fetch().has_value());
    REQUIRE(c.approve({"e"}).has_value());
    const auto rs = t.requests();
    REQUIRE(rs.size() == 5);
    CHECK(rs[0].timeout == std::chrono::seconds(150));  // the documented default
    CHECK(rs[1].timeout == std::chrono::seconds(150));  // a 503 is not an answer yet
    CHECK(rs[2].timeout == std::chrono::seconds(150));
    CHECK(rs[3].timeout == std::chrono::milliseconds(3000));
    CHECK(rs[4].timeout == std::chrono::milliseconds(3000));
}

TEST_CASE("approve POSTs every id in one StartRequests body", "[azure][client][approve]") {
    fake_transport t;
    t.respond(200);
    client c(test_options(), t);
    const std::vector<std::string> ids = {"C7061BAC-AFDC-4513-B24B-AA5F13A16123", "q\"uote", "ctl\x01\n", "back\\slash"};
    REQUIRE(c.approve(ids).has_value());
    REQUIRE(t.request_count() == 1);
    const auto r = t.requests()[0];
    CHECK(r.method == http_method::post);
    CHECK(r.url == url_2020);
    CHECK(header(r, "Metadata") == std::optional<std::string>("true"));
    CHECK(header(r, "Content-Type") == std::optional<std::string>("application/json"));
    CHECK_FALSE(header(r, "X-Forwarded-For").has_value());
    auto body = forewarn::detail::parse_json(r.body);
    REQUIRE(body.has_value());
    CHECK_FALSE(body->HasMember("DocumentIncarnation"));
    const auto& sr = (*body)["StartRequests"];
    REQUIRE(sr.Size() == ids.size());
    for (rapidjson::SizeType i = 0; i < sr.Size(); ++i)
        CHECK(forewarn::detail::json_string_view(sr[i]["EventId"]) == ids[i]);
}

TEST_CASE("approve: an empty list sends nothing - 400 is a clear error - bad ids never leave", "[azure][client][approve]") {
    fake_transport t;
    client c(test_options(), t);
    CHECK(c.approve({}).has_value());
    CHECK(t.request_count() == 0);

    auto bad = c.approve({"ok", "\xff\xfe"});
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code == errc::invalid_argument);
    CHECK(t.request_count() == 0);

    t.respond(400, "Bad Request").respond(200);
    auto r = c.approve({"e"});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().http_status == 400);
    CHECK(r.error().message.find("StartRequests") != std::string::npos);
    CHECK(t.request_count() == 1);
    CHECK(t.pending() == 1);  // the 400 was not retried
    CHECK(c.approve({"e"}).has_value());
    CHECK(t.request_count() == 2);

    t.respond(503).respond(200);
    CHECK(c.approve({"e"}).has_value());  // approvals are idempotent: retried like a GET
    CHECK(t.request_count() == 4);
}

TEST_CASE("2017-03-01: approvals carry the last DocumentIncarnation, fetched if needed", "[azure][client][approve][seed]") {
    auto o = test_options();
    o.api_version = "2017-03-01";
    {
        fake_transport t;
        t.respond(200, R"({"DocumentIncarnation":5,"Events":[{"EventId":"f020ba2e-3bc0-4c40-a10b-86575a9eabd5",
            "EventType":"Reboot","ResourceType":"VirtualMachine","Resources":["_vm0"],"EventStatus":"Scheduled",
            "NotBefore":"2016-09-19T18:29:47Z"}]})");
        t.respond(200);
        client c(o, t);
        auto doc = c.fetch();
        REQUIRE(doc.has_value());
        CHECK(doc->events.at(0).affects("vm0"));  // the preview's underscore is gone
        REQUIRE(c.approve({"f020ba2e-3bc0-4c40-a10b-86575a9eabd5"}).has_value());
        REQUIRE(t.request_count() == 2);
        auto sent = forewarn::detail::parse_json(t.requests()[1].body);
        auto expected = forewarn::detail::parse_json(seed("preview_2017_approval.json"));
        REQUIRE(sent.has_value());
        REQUIRE(expected.has_value());
        CHECK(*sent == *expected);  // the seed's own approval body
    }
    {
        fake_transport t;
        t.respond(200, R"({"DocumentIncarnation":8,"Events":[]})").respond(200);
        client c(o, t);
        REQUIRE(c.approve({"x"}).has_value());
        REQUIRE(t.request_count() == 2);
        CHECK(t.requests()[0].method == http_method::get);
        CHECK(t.requests()[1].body.find(R"("DocumentIncarnation":"8")") != std::string::npos);
    }
}

TEST_CASE("identity reads compute metadata once - self_name skips the request", "[azure][client][identity]") {
    fake_transport t;
    t.respond(200, R"({"azEnvironment":"AzurePublicCloud","location":"westeurope","name":"myvmss_2",
        "vmScaleSetName":"myvmss","resourceId":"/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/virtualMachineScaleSets/myvmss/virtualMachines/2",
        "vmId":"02aab8a4-74ef-476e-8182-f6d2ba4166a6","tags":"","zone":""})");
    client c(test_options(), t);
    auto id = c.identity();
    REQUIRE(id.has_value());
    CHECK(id->name == "myvmss_2");
    CHECK(id->vm_scale_set_name == "myvmss");
    CHECK(id->resource_id.find("virtualMachines/2") != std::string::npos);
    CHECK(id->vm_id == "02aab8a4-74ef-476e-8182-f6d2ba4166a6");
    REQUIRE(c.identity().has_value());
    REQUIRE(t.request_count() == 1);  // cached
    const auto r = t.requests()[0];
    CHECK(r.url == "http://imds.test/metadata/instance/compute?api-version=2021-02-01");
    CHECK(header(r, "Metadata") == std::optional<std::string>("true"));

    fake_transport none;
    auto o = test_options();
    o.self_name = "WestNO_0";
    client named(o, none);
    CHECK(named.identity()->name == "WestNO_0");
    CHECK(none.request_count() == 0);
}

TEST_CASE("identity errors: missing or mistyped name, 404, empty body - nothing cached", "[azure][client][identity]") {
    struct bad {
        int status;
        const char* body;
        errc code;
    };
    const bad cases[] = {{200, R"({"vmId":"x"})", errc::invalid_document}, {200, R"({"name":7})", errc::invalid_document},
                         {200, R"({"name":""})", errc::invalid_document},  {200, R"({"name":"a","vmId":1})", errc::invalid_document},
                         {200, "", errc::empty_body},                      {200, "[", errc::parse_error},
                         {404, "", errc::not_found}};
    for (const auto& b : cases) {
        INFO(b.status << " " << b.body);
        fake_transport t;
        t.respond(b.status, b.body).respond(200, R"({"name":"later"})");
        client c(test_options(), t);
        auto r = c.identity();
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == b.code);
        CHECK(c.identity()->name == "later");  // a failure is not cached
    }
}

TEST_CASE("endpoint precedence: explicit, FOREWARN_AZURE_ENDPOINT, SCHEDULEDEVENTSIP, default", "[azure][client][env]") {
    scoped_env a("FOREWARN_AZURE_ENDPOINT", nullptr);
    scoped_env b("SCHEDULEDEVENTSIP", nullptr);
    auto endpoint_of = [](std::string explicit_endpoint) {
        client_options o;
        o.rate_limit = false;
        o.endpoint = std::move(explicit_endpoint);
        return client(o).endpoint();
    };
    CHECK(endpoint_of("") == "http://169.254.169.254");
    {
        scoped_env ip("SCHEDULEDEVENTSIP", "10.0.0.5");
        CHECK(endpoint_of("") == "http://10.0.0.5");
        {
            scoped_env env("FOREWARN_AZURE_ENDPOINT", "http://127.0.0.1:8080/");
            CHECK(endpoint_of("") == "http://127.0.0.1:8080");
            CHECK(endpoint_of("http://explicit.test:81") == "http://explicit.test:81");
        }
        CHECK(endpoint_of("") == "http://10.0.0.5");
    }
    {
        scoped_env env("FOREWARN_AZURE_ENDPOINT", "emulator.local:9000");
        CHECK(endpoint_of("") == "http://emulator.local:9000");
    }
    {
        scoped_env ip6("SCHEDULEDEVENTSIP", "fd00::5");
        CHECK(endpoint_of("") == "http://[fd00::5]");
    }
    {
        scoped_env blank("FOREWARN_AZURE_ENDPOINT", "");  // set but empty: ignored
        CHECK(endpoint_of("") == "http://169.254.169.254");
    }
    // The chosen endpoint is the one requests go to.
    scoped_env env("FOREWARN_AZURE_ENDPOINT", "http://from-env.test");
    fake_transport t;
    t.respond(200, empty_doc);
    client_options o;
    o.rate_limit = false;
    client c(o, t);
    REQUIRE(c.fetch().has_value());
    CHECK(t.requests().at(0).url == "http://from-env.test/metadata/scheduledevents?api-version=2020-07-01");
}

TEST_CASE("a malformed endpoint is invalid_argument without a request", "[azure][client]") {
    for (const char* bad : {"ftp://x", "http://", "http://host/?q=1", "http://a b"}) {
        INFO(bad);
        fake_transport t;
        auto o = test_options();
        o.endpoint = bad;
        client c(o, t);
        CHECK(c.fetch().error().code == errc::invalid_argument);
        CHECK(c.identity().error().code == errc::invalid_argument);
        CHECK(t.request_count() == 0);
    }
}

TEST_CASE("cancel during a backoff returns promptly and stays until reset", "[azure][client][cancel]") {
    fake_transport t;
    t.otherwise([](const http_request&) { return forewarn::result<forewarn::http_response>(forewarn::http_response{503, {}, ""}); });
    auto o = test_options();
    o.retry.initial_backoff = std::chrono::seconds(30);
    o.retry.max_backoff = std::chrono::seconds(30);
    o.retry.jitter = 0;
    // The backoff waits on a manual clock: only cancel() can end it (the clock moves on its own
    // only after 2 s of real time with nobody to move it, manual_clock::unattended_wait).
    forewarn::testing::manual_clock clock;
    o.clock = clock;
    client c(o, t);
    auto fetched = std::async(std::launch::async, [&] { return c.fetch(); });
    REQUIRE(clock.wait_for_sleepers(1));  // asleep in the 30 s backoff after the first 503
    c.cancel();
    REQUIRE(fetched.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    auto r = fetched.get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::cancelled);
    CHECK(clock.now().time_since_epoch() < std::chrono::seconds(30));  // the cancel ended the wait, not time
    CHECK(t.request_count() == 1);

    // Sticky: later calls fail at once without a request, until reset().
    CHECK(c.fetch().error().code == errc::cancelled);
    CHECK(c.approve({"e"}).error().code == errc::cancelled);
    CHECK(t.request_count() == 1);
    c.reset();
    t.clear();
    t.respond(200, empty_doc);
    CHECK(c.fetch().has_value());
}

TEST_CASE("rate_limit takes tokens from the shared per-host bucket", "[azure][client]") {
    // A host no other test uses; drain its bucket (burst 5, 5/s) so the next request must wait.
    fake_transport t;
    t.otherwise([](const http_request&) {
        return forewarn::result<forewarn::http_response>(forewarn::http_response{200, {}, empty_doc});
    });
    auto o = test_options();
    o.endpoint = "http://rate-limit.test";
    o.rate_limit = true;
    client c(o, t);
    auto bucket = forewarn::rate_limiter::for_host("rate-limit.test");
    for (int i = 0; i < 100 && bucket->try_acquire().count() == 0; ++i) {
    }
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(c.fetch().has_value());
    // A token comes back after 1/5 s: the request cannot have gone sooner (a lower bound only).
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(150));
    CHECK(t.request_count() == 1);

    // cancel() also stops a wait for a token.
    for (int i = 0; i < 100 && bucket->try_acquire().count() == 0; ++i) {
    }
    c.cancel();
    CHECK(c.fetch().error().code == errc::cancelled);
    CHECK(t.request_count() == 1);
}

}  // namespace test_azure_client
