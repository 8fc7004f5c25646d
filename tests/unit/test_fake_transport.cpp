// SPDX-License-Identifier: MIT
#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"

#include <string>

namespace test_fake_transport {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::http_response;
using forewarn::result;
using forewarn::testing::fake_transport;

namespace {
http_request get(std::string url) {
    http_request r;
    r.url = std::move(url);
    return r;
}
}  // namespace

static_assert(forewarn::is_transport_v<fake_transport>);
#if FOREWARN_HAS_CONCEPTS
static_assert(forewarn::transport<fake_transport>);
#endif

TEST_CASE("fake_transport answers from its script, in order, and logs every request", "[fake_transport]") {
    fake_transport t;
    t.respond(200, "first", {{"ETag", "1"}}).fail({errc::timeout, "slow"}).respond(503);
    CHECK(t.pending() == 3);
    auto a = t.send(get("http://x/a"));
    REQUIRE(a.has_value());
    CHECK(a->status == 200);
    CHECK(a->body == "first");
    REQUIRE(a->header("etag") != nullptr);
    CHECK(*a->header("etag") == "1");
    auto b = t.send(get("http://x/b"));
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error().code == errc::timeout);
    CHECK(t.send(get("http://x/c"))->status == 503);
    auto none = t.send(get("http://x/d"));
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code == errc::transport);
    CHECK(none.error().message.find("http://x/d") != std::string::npos);
    const auto log = t.requests();
    REQUIRE(log.size() == 4);
    CHECK(log[0].url == "http://x/a");
    CHECK(log[3].url == "http://x/d");
    CHECK(t.pending() == 0);
}

TEST_CASE("fake_transport: otherwise() answers once the script is used up", "[fake_transport]") {
    fake_transport t;
    t.respond(201);
    t.otherwise([](const http_request& r) { return result<http_response>(http_response{200, {}, "echo " + r.body}); });
    http_request post = get("http://x");
    post.method = http_method::post;
    post.body = "hi";
    CHECK(t.send(post)->status == 201);
    CHECK(t.send(post)->body == "echo hi");
    CHECK(t.send(post)->body == "echo hi");
    CHECK(t.request_count() == 3);
    CHECK(t.requests()[0].method == http_method::post);
}

TEST_CASE("fake_transport enforces the request's max_body", "[fake_transport]") {
    fake_transport t;
    t.respond(200, std::string(11, 'x')).respond(200, std::string(10, 'x'));
    http_request r = get("http://x");
    r.max_body = 10;
    CHECK(t.send(r).error().code == errc::body_too_large);
    CHECK(t.send(r)->body.size() == 10);
}

TEST_CASE("fake_transport: cancel is sticky until reset, and copies share everything", "[fake_transport]") {
    fake_transport t;
    fake_transport copy = t;
    t.respond(200).respond(204);
    copy.cancel();
    CHECK(t.cancelled());
    CHECK(t.send(get("http://x")).error().code == errc::cancelled);
    CHECK(t.send(get("http://x")).error().code == errc::cancelled);
    CHECK(t.pending() == 2);  // a cancelled send consumes nothing
    CHECK(copy.request_count() == 2);
    t.reset();
    CHECK_FALSE(copy.cancelled());
    CHECK(copy.send(get("http://x"))->status == 200);
    CHECK(t.send(get("http://x"))->status == 204);
    t.clear();
    CHECK(copy.request_count() == 0);
    CHECK(copy.pending() == 0);
    CHECK(copy.send(get("http://x")).error().code == errc::transport);  // the fallback is gone too
}

}  // namespace test_fake_transport
