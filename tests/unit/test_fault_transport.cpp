// SPDX-License-Identifier: MIT
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/fault_transport.hpp>

#include "catch.hpp"
#include "scripted_stream.hpp"

#include <chrono>
#include <string>
#include <thread>

namespace test_fault_transport {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::testing::fake_transport;
using forewarn::testing::fault;
using forewarn::testing::fault_kind;
using forewarn::testing::fault_transport;
using namespace std::chrono_literals;

namespace {
http_request request(http_method m, std::string url, std::string body = {}) {
    http_request r;
    r.method = m;
    r.url = std::move(url);
    r.body = std::move(body);
    return r;
}
}  // namespace

static_assert(forewarn::is_transport_v<fault_transport<fake_transport>>);

TEST_CASE("fault_transport takes the requests that match, after the first `after`, `count` times", "[fault_transport]") {
    fake_transport inner;
    inner.otherwise([](const http_request&) { return forewarn::http_response{200, {}, "ok"}; });
    fault_transport<fake_transport> t(inner);
    fault f;
    f.match.method = http_method::post;
    f.match.path_ends_with = "/kv/range";
    f.match.body_contains = "range_end";
    f.after = 1;
    f.count = 2;
    f.code = errc::timeout;
    const auto id = t.add(f);
    const auto prefix = request(http_method::post, "http://etcd:2379/v3/kv/range?x=1", R"({"key":"a","range_end":"b"})");
    CHECK(t.send(request(http_method::post, "http://etcd:2379/v3/kv/range", R"({"key":"a"})")));  // no range_end
    CHECK(t.send(request(http_method::get, "http://etcd:2379/v3/kv/range", "range_end")));      // not a POST
    CHECK(t.send(request(http_method::post, "http://etcd:2379/v3/kv/txn", "range_end")));       // another path
    CHECK(t.send(prefix));                                                                       // the first passes
    auto second = t.send(prefix);
    REQUIRE_FALSE(second);
    CHECK(second.error().code == errc::timeout);
    CHECK(second.error().message.find("http://etcd:2379/v3/kv/range") != std::string::npos);
    CHECK_FALSE(t.send(prefix));
    CHECK(t.send(prefix));  // count spent
    CHECK(t.matched(id) == 4);
    CHECK(t.taken(id) == 2);
    CHECK(t.requests() == 7);
    CHECK(inner.requests().size() == 5);  // the taken two never reached it
}

TEST_CASE("fault_transport: a lost answer was sent, copies share their faults, clear() heals", "[fault_transport]") {
    fake_transport inner;
    inner.otherwise([](const http_request&) { return forewarn::http_response{200, {}, "applied"}; });
    fault_transport<fake_transport> t(inner);
    auto copy = t;
    fault f;
    f.kind = fault_kind::lose_response;
    t.add(f);
    auto r = copy.send(request(http_method::post, "http://x/v3/kv/txn"));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::transport);
    CHECK(inner.requests().size() == 1);  // etcd got it: only the answer was lost
    copy.clear();
    CHECK(t.send(request(http_method::get, "http://x/")));
}

TEST_CASE("fault_transport: a delay is cut short by cancel()", "[fault_transport]") {
    fake_transport inner;
    inner.otherwise([](const http_request&) { return forewarn::http_response{200, {}, ""}; });
    fault_transport<fake_transport> t(inner);
    fault f;
    f.kind = fault_kind::delay;
    f.delay = 60s;
    t.add(f);
    std::thread canceller([&] {
        while (t.taken(0) == 0) std::this_thread::sleep_for(1ms);
        t.cancel();
    });
    const auto started = std::chrono::steady_clock::now();
    auto r = t.send(request(http_method::get, "http://x/"));
    canceller.join();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::cancelled);
    CHECK(std::chrono::steady_clock::now() - started < 30s);  // a bound on a hang, not a timing claim
    t.reset();
    t.clear();
    CHECK(t.send(request(http_method::get, "http://x/")));
}

TEST_CASE("fault_transport streams through its inner transport, and cuts a stream in the middle of a message", "[fault_transport]") {
    using forewarn_test::scripted_stream;
    static_assert(forewarn::is_stream_transport_v<fault_transport<scripted_stream>>);
    static_assert(!forewarn::is_stream_transport_v<fault_transport<fake_transport>>);
    scripted_stream inner;
    for (int i = 0; i < 3; ++i) inner.push({200, {}, {"one", "two", "three"}, {}});
    fault_transport<scripted_stream> t(inner);
    fault f;
    f.match.path_ends_with = "/watch";
    f.kind = fault_kind::cut_stream;
    f.messages = 1;
    f.count = 1;
    const auto id = t.add(f);
    auto watch = request(http_method::post, "http://e:2379/v3/watch", "{}");
    std::vector<std::string> got;
    auto sink = [&](std::string_view m) {
        got.emplace_back(m);
        return true;
    };
    auto cut = t.send_stream(watch, sink);
    REQUIRE_FALSE(cut);
    CHECK(cut.error().code == errc::transport);
    CHECK(cut.error().message.find("cut in the middle of a message") != std::string::npos);
    CHECK(got == std::vector<std::string>{"one"});  // the message being cut never arrives
    CHECK(t.taken(id) == 1);
    got.clear();
    auto whole = t.send_stream(watch, sink);  // count 1: the next stream passes
    REQUIRE(whole);
    CHECK(got == std::vector<std::string>{"one", "two", "three"});
    // A stream that ends before the cut is not cut; a `fail` fault fails it before it starts.
    t.clear();
    f.messages = 5;
    t.add(f);
    got.clear();
    CHECK(t.send_stream(watch, sink));
    CHECK(got.size() == 3);
    fault refuse;
    refuse.match.path_ends_with = "/watch";
    refuse.code = errc::timeout;
    t.add(refuse);
    t.clear();
    t.add(refuse);
    auto failed = t.send_stream(watch, sink);
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == errc::timeout);
    CHECK(inner.requests().size() == 3);  // the refused stream never reached the inner transport
}

}  // namespace test_fault_transport
