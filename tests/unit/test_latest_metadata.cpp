// SPDX-License-Identifier: MIT
// detail::latest_metadata (the services under /latest/): the session token asked for with a PUT
// and its TTL header, sent on every GET, renewed on the client's clock before it expires, and
// asked for again once after a 401. Over testing::fake_transport, on a manual clock.
#include <forewarn/detail/latest_metadata.hpp>
#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace test_latest_metadata {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::errc;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::detail::latest_metadata;
using forewarn::detail::latest_settings;
using forewarn::detail::metadata_exchange;
using forewarn::testing::fake_transport;
using forewarn::testing::manual_clock;

namespace {

const std::string endpoint = "http://imds.test";
const std::string path = "/latest/meta-data/spot/instance-action";
const std::string header = "X-aws-ec2-metadata-token";

metadata_exchange<fake_transport> exchange(const fake_transport& t, const manual_clock& clock) {
    forewarn::retry_options o;
    o.max_attempts = 1;
    return metadata_exchange<fake_transport>(t, 1, forewarn::detail::exchange_settings{clock, {}, false, 1s},
                                             forewarn::retry_policy(forewarn::retry_rules::aws, o));
}

latest_metadata tokens(std::chrono::seconds ttl) {
    latest_settings s;
    s.token_header = header;
    s.token_ttl_header = header + "-ttl-seconds";
    s.token_kind = "IMDSv2";
    s.token_ttl = ttl;
    return latest_metadata(s);
}

/// The token a request carried, or "(none)".
std::string token_of(const http_request& r) {
    const std::string* t = forewarn::find_header(r.headers, header);
    return t ? *t : "(none)";
}

bool is_put(const http_request& r) { return r.method == http_method::put && r.url == endpoint + "/latest/api/token"; }

std::size_t puts(const fake_transport& t) {
    std::size_t n = 0;
    for (const auto& r : t.requests()) n += is_put(r);
    return n;
}

}  // namespace

TEST_CASE("latest_metadata: the token is asked for with PUT /latest/api/token and its TTL header, then sent on every "
          "GET",
          "[latest_metadata]") {
    manual_clock clock;
    fake_transport t;
    t.respond(200, "tok-1\n").respond(200, "{}").respond(200, "{}");
    auto x = exchange(t, clock);
    auto m = tokens(600s);
    auto first = m.get(x, endpoint, path);
    REQUIRE(first);
    REQUIRE(*first);
    CHECK((*first)->body == "{}");
    auto second = m.get(x, endpoint, path);
    REQUIRE(second);
    const auto reqs = t.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(is_put(reqs[0]));
    const std::string* ttl = forewarn::find_header(reqs[0].headers, header + "-ttl-seconds");
    REQUIRE(ttl != nullptr);
    CHECK(*ttl == "600");
    CHECK(token_of(reqs[0]) == "(none)");
    for (std::size_t i = 1; i < 3; ++i) {
        CHECK(reqs[i].method == http_method::get);
        CHECK(reqs[i].url == endpoint + path);
        CHECK(token_of(reqs[i]) == "tok-1");  // trimmed, and the one token for both
    }
    CHECK(m.tokens_fetched() == 1);
}

TEST_CASE("latest_metadata: the token is renewed on the clock a tenth of its life before it expires, at most a "
          "minute before",
          "[latest_metadata]") {
    struct row {
        std::chrono::seconds ttl;
        std::chrono::seconds renew_at;
    };
    for (const row r : {row{300s, 270s}, row{21600s, 21540s}}) {
        INFO(r.ttl.count());
        manual_clock clock;
        fake_transport t;
        int n = 0;
        t.otherwise([&n](const http_request& req) -> forewarn::result<forewarn::http_response> {
            forewarn::http_response a;
            a.status = 200;
            a.body = is_put(req) ? "tok-" + std::to_string(++n) : "{}";
            return a;
        });
        auto x = exchange(t, clock);
        auto m = tokens(r.ttl);
        REQUIRE(m.get(x, endpoint, path));
        clock.advance(r.renew_at - 1ms);
        REQUIRE(m.get(x, endpoint, path));
        CHECK(puts(t) == 1);
        CHECK(token_of(t.requests().back()) == "tok-1");
        clock.advance(1ms);
        REQUIRE(m.get(x, endpoint, path));
        CHECK(puts(t) == 2);
        CHECK(token_of(t.requests().back()) == "tok-2");
        CHECK(m.tokens_fetched() == 2);
    }
}

TEST_CASE("latest_metadata: a 401 is one fresh token and one more try - a second 401 is the error", "[latest_metadata]") {
    manual_clock clock;
    fake_transport t;
    t.respond(200, "tok-1").respond(200, "{}");                        // the first GET
    t.respond(401, "").respond(200, "tok-2").respond(200, "{\"a\":1}");  // revoked early: renewed, asked again
    t.respond(401, "").respond(200, "tok-3").respond(401, "");          // and once more, in vain
    auto x = exchange(t, clock);
    auto m = tokens(21600s);
    REQUIRE(m.get(x, endpoint, path));

    auto again = m.get(x, endpoint, path);
    REQUIRE(again);
    REQUIRE(*again);
    CHECK((*again)->body == "{\"a\":1}");
    auto reqs = t.requests();
    REQUIRE(reqs.size() == 5);
    CHECK(token_of(reqs[2]) == "tok-1");
    CHECK(is_put(reqs[3]));
    CHECK(token_of(reqs[4]) == "tok-2");

    auto refused = m.get(x, endpoint, path);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == errc::http_status);
    CHECK(refused.error().http_status == 401);
    CHECK(t.request_count() == 8);  // one fresh token, one more try: no third
    CHECK(t.pending() == 0);
    CHECK(m.tokens_fetched() == 3);
}

}  // namespace test_latest_metadata
