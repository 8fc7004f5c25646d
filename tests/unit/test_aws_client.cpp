// SPDX-License-Identifier: MIT
// The AWS client against a small IMDSv2 written here over testing::fake_transport, on a manual
// clock: the token rules (asked, sent, renewed before expiry and after a 401, never logged), the
// notice paths, identity, the configuration errors, and a poller over it.
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"
#include "scoped_env.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace test_aws_client {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::errc;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::http_response;
using forewarn::aws::client_options;
using forewarn::testing::fake_transport;
using client = forewarn::aws::basic_instance_metadata_client<fake_transport>;

static_assert(forewarn::is_notice_source_v<client>);

namespace {

// IMDSv2 as AWS documents it: PUT /latest/api/token with a TTL of 1..21600 s gives a token;
// every other request needs a token that has not expired (401 otherwise); X-Forwarded-For is
// refused (403). Paths answer from `paths` (404 when absent).
struct fake_imds {
    forewarn::testing::manual_clock clock;
    std::mutex mutex;
    std::map<std::string, std::string> paths{{"/latest/meta-data/instance-id", "i-0123456789abcdef0"},
                                             {"/latest/meta-data/instance-type", "m5.large"},
                                             {"/latest/meta-data/placement/availability-zone", "eu-west-1a"},
                                             {"/latest/meta-data/instance-life-cycle", "spot"},
                                             {"/latest/meta-data/events/maintenance/scheduled", "[]"}};
    std::map<std::string, forewarn::clock::time_point> tokens;  // token -> expiry
    int issued = 0;
    bool v1_only = false;  // the token PUT is refused (403), as with IMDS turned to v1 behind a proxy

    fake_transport transport() {
        fake_transport t;
        t.otherwise([this](const http_request& r) -> forewarn::result<http_response> { return answer(r); });
        return t;
    }
    void set(const std::string& path, std::optional<std::string> body) {
        std::lock_guard<std::mutex> lock(mutex);
        if (body)
            paths[path] = *body;
        else
            paths.erase(path);
    }
    void expire_all() {
        std::lock_guard<std::mutex> lock(mutex);
        tokens.clear();
    }

    http_response answer(const http_request& r) {
        std::lock_guard<std::mutex> lock(mutex);
        http_response out;
        out.headers.push_back({"Date", forewarn::format_rfc1123(clock.wall_now())});
        const auto path = r.url.substr(r.url.find('/', r.url.find("://") + 3));
        if (forewarn::find_header(r.headers, "X-Forwarded-For")) {
            out.status = 403;
            return out;
        }
        if (path == "/latest/api/token") {
            const auto* ttl = forewarn::find_header(r.headers, "X-aws-ec2-metadata-token-ttl-seconds");
            if (r.method != http_method::put || v1_only) {
                out.status = v1_only ? 403 : 405;
                return out;
            }
            const int seconds = ttl ? std::atoi(ttl->c_str()) : 0;
            if (seconds < 1 || seconds > 21600) {
                out.status = 400;
                return out;
            }
            const std::string token = "AQAEAtoken" + std::to_string(++issued);
            tokens[token] = clock.now() + std::chrono::seconds(seconds);
            out.status = 200;
            out.body = token;
            return out;
        }
        if (!v1_only) {
            const auto* token = forewarn::find_header(r.headers, "X-aws-ec2-metadata-token");
            const auto it = token ? tokens.find(*token) : tokens.end();
            if (it == tokens.end() || clock.now() >= it->second) {
                out.status = 401;
                return out;
            }
        }
        const auto p = paths.find(path);
        if (p == paths.end()) {
            out.status = 404;
            out.body = "<?xml version=\"1.0\"?><html><body>404 - Not Found</body></html>";
            return out;
        }
        out.status = 200;
        out.body = p->second;
        return out;
    }
};

client_options test_options(const fake_imds& imds) {
    client_options o;
    o.endpoint = "http://imds.test";
    o.rate_limit = false;
    o.clock = imds.clock;
    o.retry.initial_backoff = 1ms;
    o.retry.max_backoff = 2ms;
    return o;
}

std::size_t count(const std::vector<http_request>& log, http_method m, const std::string& suffix) {
    std::size_t n = 0;
    for (const auto& r : log)
        if (r.method == m && r.url.size() >= suffix.size() && r.url.compare(r.url.size() - suffix.size(), suffix.size(), suffix) == 0)
            ++n;
    return n;
}


}  // namespace

TEST_CASE("aws client: a session token first - then every GET carries it - none is asked twice", "[aws][client]") {
    fake_imds imds;
    auto t = imds.transport();
    client c(test_options(imds), t);
    auto doc = c.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->origin == forewarn::cloud::aws);
    CHECK(doc->events.empty());
    CHECK(doc->service_time.has_value());
    const auto log = t.requests();
    REQUIRE_FALSE(log.empty());
    CHECK(log[0].method == http_method::put);
    CHECK(log[0].url == "http://imds.test/latest/api/token");
    REQUIRE(forewarn::find_header(log[0].headers, "X-aws-ec2-metadata-token-ttl-seconds"));
    CHECK(*forewarn::find_header(log[0].headers, "X-aws-ec2-metadata-token-ttl-seconds") == "21600");
    for (std::size_t i = 1; i < log.size(); ++i) {
        INFO(log[i].url);
        CHECK(log[i].method == http_method::get);
        REQUIRE(forewarn::find_header(log[i].headers, "X-aws-ec2-metadata-token"));
        CHECK(*forewarn::find_header(log[i].headers, "X-aws-ec2-metadata-token") == "AQAEAtoken1");
        CHECK_FALSE(forewarn::find_header(log[i].headers, "X-Forwarded-For"));
    }
    CHECK(count(log, http_method::get, "/events/maintenance/scheduled") == 1);
    CHECK(count(log, http_method::get, "/spot/instance-action") == 1);
    CHECK(count(log, http_method::get, "/events/recommendations/rebalance") == 1);
    REQUIRE(c.fetch().has_value());
    CHECK(count(t.requests(), http_method::put, "/latest/api/token") == 1);
    CHECK(c.tokens_fetched() == 1);
}

TEST_CASE("aws client: the token is renewed before it expires on the client's clock", "[aws][client][token]") {
    fake_imds imds;
    auto t = imds.transport();
    auto o = test_options(imds);
    o.token_ttl = 60s;  // renewed with a tenth of its life left: at 54 s
    client c(o, t);
    REQUIRE(c.fetch().has_value());
    CHECK(*forewarn::find_header(t.requests()[0].headers, "X-aws-ec2-metadata-token-ttl-seconds") == "60");
    imds.clock.advance(53s);
    REQUIRE(c.fetch().has_value());
    CHECK(c.tokens_fetched() == 1);
    imds.clock.advance(2s);  // 55 s: inside the margin, not yet expired
    REQUIRE(c.fetch().has_value());
    CHECK(c.tokens_fetched() == 2);
    CHECK(count(t.requests(), http_method::put, "/latest/api/token") == 2);
    CHECK(imds.issued == 2);
}

TEST_CASE("aws client: a 401 renews the token once - a second 401 is an error", "[aws][client][token]") {
    fake_imds imds;
    auto t = imds.transport();
    client c(test_options(imds), t);
    REQUIRE(c.fetch().has_value());
    imds.expire_all();  // IMDS forgot the token early (an instance stop and start)
    REQUIRE(c.fetch().has_value());
    CHECK(c.tokens_fetched() == 2);

    fake_transport always_401;
    always_401.otherwise([](const http_request& r) -> forewarn::result<http_response> {
        http_response out;
        out.status = r.method == http_method::put ? 200 : 401;
        out.body = r.method == http_method::put ? "AQAEAtoken" : "";
        return out;
    });
    auto o = test_options(imds);
    o.self_name = "i-1";
    client d(o, always_401);
    auto doc = d.fetch();
    REQUIRE_FALSE(doc.has_value());
    CHECK(doc.error().http_status == 401);
    CHECK(count(always_401.requests(), http_method::put, "/latest/api/token") == 2);
    CHECK(always_401.requests().size() == 4);  // PUT, GET 401, PUT, GET 401: no loop
}

TEST_CASE("aws client: the token never reaches the log or an error", "[aws][client][token][security]") {
    fake_imds imds;
    auto t = imds.transport();
    auto o = test_options(imds);
    std::vector<std::string> lines;
    o.log.level = forewarn::log_level::trace;
    o.log.sink = [&](const forewarn::log_record& r) { lines.push_back(std::string(r.message) + " " + std::string(r.url)); };
    client c(o, t);
    REQUIRE(c.fetch().has_value());
    imds.expire_all();
    REQUIRE(c.fetch().has_value());
    imds.set("/latest/meta-data/events/maintenance/scheduled", std::string("not json"));
    auto bad = c.fetch();
    REQUIRE(bad.has_value());
    REQUIRE(bad->key_errors.size() == 1);
    lines.push_back(bad->key_errors[0].describe());
    REQUIRE(lines.size() > 5);  // the requests were logged at debug
    for (const auto& l : lines) {
        INFO(l);
        CHECK(l.find("AQAEAtoken") == std::string::npos);
    }
}

TEST_CASE("aws client: notices become events naming this instance - 404 is no notice", "[aws][client]") {
    fake_imds imds;
    auto t = imds.transport();
    client c(test_options(imds), t);
    imds.set("/latest/meta-data/events/maintenance/scheduled",
             std::string(R"([{"NotBefore":"21 Jan 2019 09:00:43 GMT","Code":"system-reboot","EventId":"instance-event-1","State":"active"}])"));
    imds.set("/latest/meta-data/spot/instance-action", std::string(R"({"action":"terminate","time":"2017-09-18T08:22:00Z"})"));
    imds.set("/latest/meta-data/events/recommendations/rebalance", std::string(R"({"noticeTime":"2017-09-18T08:20:00Z"})"));
    auto doc = c.fetch();
    REQUIRE(doc.has_value());
    REQUIRE(doc->events.size() == 3);
    CHECK(doc->events[0].id == "instance-event-1");
    CHECK(doc->events[0].type == forewarn::event_type::reboot);
    CHECK(doc->events[1].id == "spot-instance-action");
    CHECK(doc->events[1].type == forewarn::event_type::preempt);
    CHECK(doc->events[2].id == "rebalance-recommendation");
    for (const auto& e : doc->events) CHECK(e.affects("i-0123456789abcdef0"));

    imds.set("/latest/meta-data/spot/instance-action", std::nullopt);
    imds.set("/latest/meta-data/events/recommendations/rebalance", std::nullopt);
    imds.set("/latest/meta-data/events/maintenance/scheduled", std::nullopt);  // 404 too: none
    doc = c.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->events.empty());
}

TEST_CASE("aws client: identity - instance id, type, zone and lifecycle - asked once", "[aws][client][identity]") {
    fake_imds imds;
    auto t = imds.transport();
    client c(test_options(imds), t);
    auto id = c.identity();
    REQUIRE(id.has_value());
    CHECK(id->name == "i-0123456789abcdef0");
    CHECK(id->instance_id == "i-0123456789abcdef0");
    CHECK(id->instance_type == "m5.large");
    CHECK(id->availability_zone == "eu-west-1a");
    CHECK(id->spot());
    const auto asked = t.requests().size();
    REQUIRE(c.identity().has_value());
    CHECK(t.requests().size() == asked);

    imds.set("/latest/meta-data/instance-life-cycle", std::nullopt);
    imds.set("/latest/meta-data/instance-id", std::nullopt);
    client d(test_options(imds), imds.transport());
    auto missing = d.identity();
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == errc::not_found);

    auto o = test_options(imds);
    o.self_name = "db-3";
    fake_transport silent;
    client e(o, silent);
    CHECK(e.identity()->name == "db-3");
    CHECK(silent.requests().empty());
}

TEST_CASE("aws client: configurations that can never work fail before any request", "[aws][client][config]") {
    fake_imds imds;
    for (auto ttl : {0s, 21601s}) {
        auto t = imds.transport();
        auto o = test_options(imds);
        o.token_ttl = ttl;
        client c(o, t);
        REQUIRE_FALSE(c.validate().has_value());
        CHECK(c.validate().error().code == errc::invalid_argument);
        CHECK_FALSE(c.fetch().has_value());
        CHECK(t.requests().empty());
    }
    {
        auto t = imds.transport();
        auto o = test_options(imds);
        o.endpoint = "ftp://imds.test";
        client c(o, t);
        CHECK_FALSE(c.validate().has_value());
    }
    {
        scoped_env off("AWS_EC2_METADATA_DISABLED", "True");
        auto t = imds.transport();
        client c(test_options(imds), t);
        REQUIRE_FALSE(c.validate().has_value());
        CHECK(c.validate().error().code == errc::unsupported);
        CHECK_FALSE(c.fetch().has_value());
        CHECK(t.requests().empty());
    }
}

TEST_CASE("aws client: the endpoint - option - then AWS_EC2_METADATA_SERVICE_ENDPOINT - then IPv4 or IPv6", "[aws][client][config]") {
    scoped_env unset("AWS_EC2_METADATA_SERVICE_ENDPOINT", nullptr);
    CHECK(client().endpoint() == "http://169.254.169.254");
    client_options v6;
    v6.ipv6 = true;
    CHECK(client(v6).endpoint() == "http://[fd00:ec2::254]");
    scoped_env set("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1338/");
    CHECK(client().endpoint() == "http://127.0.0.1:1338");
    client_options explicit_one;
    explicit_one.endpoint = "http://imds.test";
    CHECK(client(explicit_one).endpoint() == "http://imds.test");
}

TEST_CASE("aws client: IMDSv1 only when asked for - 503 retried - 403 and 400 not", "[aws][client][retry]") {
    fake_imds imds;
    imds.v1_only = true;
    {
        auto t = imds.transport();
        auto o = test_options(imds);
        o.self_name = "i-1";  // no identity requests: only the document's
        client c(o, t);
        auto doc = c.fetch();
        REQUIRE_FALSE(doc.has_value());
        CHECK(doc.error().http_status == 403);
        CHECK(t.requests().size() == 1);  // the PUT, not retried
    }
    {
        auto t = imds.transport();
        auto o = test_options(imds);
        o.allow_imdsv1 = true;
        client c(o, t);
        REQUIRE(c.fetch().has_value());
        for (const auto& r : t.requests())
            if (r.method == http_method::get) CHECK_FALSE(forewarn::find_header(r.headers, "X-aws-ec2-metadata-token"));
    }
    imds.v1_only = false;
    auto t = imds.transport();
    t.respond(503).respond(200, "AQAEAtokenX");  // the token PUT fails once, then works
    auto o = test_options(imds);
    o.self_name = "i-1";
    client c(o, t);
    auto doc = c.fetch();
    INFO((doc ? std::string() : doc.error().describe()));
    // the token from the script is unknown to the fake IMDS: its GET is a 401, then a fresh token works
    REQUIRE(doc.has_value());
    CHECK(t.requests()[0].method == http_method::put);
    CHECK(t.requests()[1].method == http_method::put);
}

TEST_CASE("aws client: approving is unsupported - a poller over it never tries", "[aws][client][poller]") {
    fake_imds imds;
    auto t = imds.transport();
    client c(test_options(imds), t);
    CHECK_FALSE(c.can_approve());
    auto r = c.approve({"instance-event-1"});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::unsupported);
}

TEST_CASE("aws poller: a scheduled event's final State is its recover reason", "[aws][client][poller]") {
    fake_imds imds;
    auto t = imds.transport();
    std::vector<std::string> seen;
    forewarn::poller_handlers h;
    h.on_prepare = [&](const forewarn::change& ch, forewarn::approval_handle a) {
        seen.push_back("prepare " + ch.event.id);
        a.ready();
    };
    h.on_recover = [&](const forewarn::change& ch) {
        seen.push_back("recover " + ch.event.id + " " + std::string(forewarn::to_string(ch.reason)));
    };
    h.on_error = [&](const forewarn::error& e) { seen.push_back("error " + e.describe()); };
    forewarn::poller<client> p(client(test_options(imds), t), h);
    const char* two = R"([{"Code":"system-reboot","EventId":"e-done","State":"active","NotBefore":"21 Jan 2030 09:00:43 GMT"},
                         {"Code":"instance-stop","EventId":"e-gone","State":"active","NotBefore":"21 Jan 2030 09:00:43 GMT"}])";
    imds.set("/latest/meta-data/events/maintenance/scheduled", std::string(two));
    REQUIRE(p.poll_once().has_value());
    CHECK(seen == std::vector<std::string>{"prepare e-done", "prepare e-gone"});
    const char* ended = R"([{"Code":"system-reboot","EventId":"e-done","State":"completed","NotBefore":"21 Jan 2030 09:00:43 GMT"},
                           {"Code":"instance-stop","EventId":"e-gone","State":"canceled","NotBefore":"21 Jan 2030 09:00:43 GMT"}])";
    imds.set("/latest/meta-data/events/maintenance/scheduled", std::string(ended));
    imds.clock.advance(5s);
    REQUIRE(p.poll_once().has_value());
    CHECK(seen == std::vector<std::string>{"prepare e-done", "prepare e-gone", "recover e-done completed",
                                           "recover e-gone cancelled"});
    CHECK(count(t.requests(), http_method::post, "") == 0);  // nothing was sent to approve
}

}  // namespace test_aws_client
