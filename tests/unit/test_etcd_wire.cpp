// SPDX-License-Identifier: MIT
// etcd's JSON gateway as bytes (etcd/wire.hpp) and the client's endpoint, version and auth rules
// (etcd/client.hpp) over testing::fake_transport. The answers are etcd 3.4.23's own.
#include <forewarn/etcd/client.hpp>
#include <forewarn/etcd/wire.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"
#include "scripted_stream.hpp"

#include <string>
#include <vector>

namespace test_etcd_wire {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace forewarn::etcd;
using forewarn::errc;
using forewarn::testing::fake_transport;

TEST_CASE("etcd wire: base64 both ways, RFC 4648's vectors and every byte", "[etcd]") {
    CHECK(base64_encode("") == "");
    CHECK(base64_encode("f") == "Zg==");
    CHECK(base64_encode("fo") == "Zm8=");
    CHECK(base64_encode("foo") == "Zm9v");
    CHECK(base64_encode("foobar") == "Zm9vYmFy");
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    CHECK(base64_decode(base64_encode(all)).value() == all);
    CHECK(base64_decode("Zm8").value() == "fo");  // padding optional
    CHECK(base64_decode("Zm9v!").error().code == errc::parse_error);
    CHECK(base64_decode("Z").error().code == errc::parse_error);
}

TEST_CASE("etcd wire: prefix_end and the API prefix", "[etcd]") {
    CHECK(prefix_end("a/q/") == "a/q0");
    CHECK(prefix_end(std::string("a\xff", 2)) == "b");
    CHECK(prefix_end("") == std::string(1, '\0'));
    CHECK(api_prefix("3.4.23") == "/v3");
    CHECK(api_prefix("3.5.9") == "/v3");
    CHECK(api_prefix("3.3.27") == "/v3beta");
    CHECK(api_prefix("116666662771.366111111266") == "/v3");  // found by fuzz_etcd: no overflow
    CHECK(api_prefix("") == "/v3beta");
}

TEST_CASE("etcd wire: a range answer read as etcd 3.4 writes it", "[etcd]") {
    const std::string body =
        R"({"header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952","revision":"2","raft_term":"2"},)"
        R"("kvs":[{"key":"YS9xL3g=","create_revision":"2","mod_revision":"2","version":"1","value":"dg==","lease":"2324035592358294023"}],"count":"1"})";
    auto r = parse_range(body);
    REQUIRE(r);
    CHECK(r->revision == 2);
    REQUIRE(r->kvs.size() == 1);
    CHECK(r->kvs[0].key == "a/q/x");
    CHECK(r->kvs[0].value == "v");
    CHECK(r->kvs[0].lease == 2324035592358294023);
    // No kvs member: nothing there (the gateway leaves empty lists out).
    auto empty = parse_range(R"({"header":{"revision":"7"}})");
    REQUIRE(empty);
    CHECK(empty->kvs.empty());
    CHECK(empty->revision == 7);
}

TEST_CASE("etcd wire: bad answers are errors naming the member", "[etcd]") {
    CHECK(parse_range("").error().code == errc::empty_body);
    CHECK(parse_range("[1]").error().code == errc::invalid_document);
    CHECK(parse_range(R"({"kvs":[{"key":"!!"}]})").error().field == "kvs[0].key");
    CHECK(parse_range(R"({"kvs":[{"lease":"12x"}]})").error().field == "kvs[0].lease");
    CHECK(parse_range(R"({"kvs":[{"lease":"99999999999999999999"}]})").error().code == errc::invalid_document);
    CHECK(parse_range(R"({"header":{"revision":true}})").error().field == "header.revision");
    CHECK(parse_txn(R"({"succeeded":"yes"})").error().field == "succeeded");
    CHECK(parse_version(R"({"etcdcluster":"3.4.0"})").error().field == "etcdserver");
    CHECK(parse_auth_token(R"({"token":""})").error().field == "token");
}

TEST_CASE("etcd wire: leases, including a keepalive of a revoked lease (no TTL)", "[etcd]") {
    auto g = parse_lease(R"({"header":{"revision":"1"},"ID":"2324035592358294021","TTL":"30"})");
    REQUIRE(g);
    CHECK(g->id == 2324035592358294021);
    CHECK(g->ttl == 30);
    auto k = parse_lease(R"({"result":{"header":{"revision":"4"},"ID":"2324035592358294023"}})");
    REQUIRE(k);
    CHECK(k->ttl == 0);
    auto gone = parse_lease(R"({"header":{},"ID":"5","TTL":"-1"})");
    REQUIRE(gone);
    CHECK(gone->ttl == -1);
    // A missing "succeeded" is false (proto3 leaves false out).
    CHECK_FALSE(parse_txn(R"({"header":{"revision":"3"}})").value().succeeded);
    CHECK(parse_txn(R"({"header":{"revision":"3"},"succeeded":true})").value().succeeded);
}

TEST_CASE("etcd wire: a transaction body carries the compare, with range_end, and int64 as strings", "[etcd]") {
    txn_request t;
    t.compares.push_back({compare::target::mod, compare::op::less, "p/", prefix_end("p/"), 100, {}});
    t.success.push_back({operation::kind::put, "p/x", "v", 42});
    t.failure.push_back({operation::kind::remove, "p/y", {}, 0});
    CHECK(write_txn(t) ==
          R"({"compare":[{"target":"MOD","result":"LESS","key":"cC8=","range_end":"cDA=","mod_revision":"100"}],)"
          R"("success":[{"request_put":{"key":"cC94","value":"dg==","lease":"42"}}],)"
          R"("failure":[{"request_delete_range":{"key":"cC95"}}]})");
}

TEST_CASE("etcd client: finds the API prefix, fails over to the next endpoint, keeps it", "[etcd]") {
    fake_transport t;
    t.fail({errc::transport, "connection refused"});                            // a: /version
    t.respond(200, R"({"etcdserver":"3.4.23","etcdcluster":"3.4.0"})");          // b: /version
    t.respond(200, R"({"header":{"revision":"5"}})");                           // b: put
    t.respond(200, R"({"header":{"revision":"6"}})");                           // b again
    client_options o;
    o.endpoints = split_endpoints("http://a:2379, http://b:2379/");
    REQUIRE(o.endpoints.size() == 2);
    basic_client<fake_transport> c(o, t);
    CHECK(c.put("k", "v").value() == 5);
    CHECK(c.put("k", "w").value() == 6);
    const auto reqs = t.requests();
    REQUIRE(reqs.size() == 4);
    CHECK(reqs[0].url == "http://a:2379/version");
    CHECK(reqs[1].url == "http://b:2379/version");
    CHECK(reqs[2].url == "http://b:2379/v3/kv/put");
    CHECK(reqs[3].url == "http://b:2379/v3/kv/put");
    CHECK(reqs[2].body == R"({"key":"aw==","value":"dg=="})");
}

TEST_CASE("etcd client: a refusal is not failed over - a 3.3 member is spoken to on /v3beta", "[etcd]") {
    fake_transport t;
    t.respond(200, R"({"etcdserver":"3.3.27","etcdcluster":"3.3.0"})");
    t.respond(400, R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})");
    client_options o;
    o.endpoints = {"http://a:2379", "http://b:2379"};
    basic_client<fake_transport> c(o, t);
    auto r = c.keepalive(7);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::http_status);
    CHECK(r.error().message.find("requested lease not found") != std::string::npos);
    const auto reqs = t.requests();
    REQUIRE(reqs.size() == 2);  // b never asked: the answer was etcd's, not the endpoint's failure
    CHECK(reqs[1].url == "http://a:2379/v3beta/lease/keepalive");
}

TEST_CASE("etcd client: authenticates, sends the token, authenticates again when it expires", "[etcd]") {
    fake_transport t;
    t.respond(200, R"({"etcdserver":"3.4.23"})");
    t.respond(200, R"({"header":{},"token":"tok1"})");
    t.respond(401, R"({"error":"etcdserver: invalid auth token","code":16})");
    t.respond(200, R"({"header":{},"token":"tok2"})");
    t.respond(200, R"({"header":{"revision":"9"}})");
    client_options o;
    o.endpoints = {"http://a:2379"};
    o.username = "fleet";
    o.password = "s3cret";
    basic_client<fake_transport> c(o, t);
    CHECK(c.remove("k").value() == 9);
    const auto reqs = t.requests();
    REQUIRE(reqs.size() == 5);
    CHECK(reqs[1].url == "http://a:2379/v3/auth/authenticate");
    CHECK(reqs[1].body == R"({"name":"fleet","password":"s3cret"})");
    CHECK(*forewarn::find_header(reqs[2].headers, "Authorization") == "tok1");
    CHECK(*forewarn::find_header(reqs[4].headers, "Authorization") == "tok2");
    CHECK(forewarn::find_header(reqs[1].headers, "Authorization") == nullptr);
}

TEST_CASE("etcd client: no endpoint, or not a URL, is a clear error and sends nothing", "[etcd]") {
    fake_transport t;
    basic_client<fake_transport> none(client_options{}, t);
    CHECK(none.put("k", "v").error().code == errc::invalid_argument);
    client_options o;
    o.endpoints = {"etcd:2379"};
    basic_client<fake_transport> bad(o, t);
    CHECK(bad.range("k").error().code == errc::invalid_argument);
    CHECK(t.request_count() == 0);
}

TEST_CASE("etcd wire: a range of the newest keys - a limit, newest first, created at or before a revision", "[etcd]") {
    operation newest{operation::kind::range, "q/", {}, 0, prefix_end("q/"), true};
    newest.limit = 3;
    newest.newest_first = true;
    newest.max_create_revision = 904;
    txn_request t;
    t.success.push_back(newest);
    CHECK(write_txn(t) == R"({"compare":[],"success":[{"request_range":{"key":"cS8=","range_end":"cTA=","keys_only":true,)"
                          R"("limit":"3","sort_order":"DESCEND","sort_target":"CREATE","max_create_revision":"904"}}],"failure":[]})");
    // The same fields on a range of its own, and none of them when unset.
    CHECK(write_range("q/", prefix_end("q/")) == R"({"key":"cS8=","range_end":"cTA="})");
    // etcd 3.4.23's answer to such a read of five keys created at 902-906: the three newest at or
    // before 904, newest first; "count" is the range's before the revision filter, not the answer's.
    auto r = parse_txn(
        R"({"header":{"revision":"906"},"succeeded":true,"responses":[{"response_range":{"header":{"revision":"906"},)"
        R"("kvs":[{"key":"cS9k","create_revision":"904","mod_revision":"904","version":"1"},)"
        R"({"key":"cS9h","create_revision":"903","mod_revision":"903","version":"1"},)"
        R"({"key":"cS9j","create_revision":"902","mod_revision":"902","version":"1"}],"count":"5"}}]})");
    REQUIRE(r);
    REQUIRE(r->ranges.size() == 1);
    REQUIRE(r->ranges[0].kvs.size() == 3);
    CHECK(r->ranges[0].kvs[0].key == "q/d");
    CHECK(r->ranges[0].kvs[2].create_revision == 902);
}

TEST_CASE("etcd wire: a transaction's range operations, and their answers read back in order", "[etcd]") {
    txn_request t;
    t.compares.push_back({compare::target::create, compare::op::equal, "q/a", {}, 0, {}});
    t.success.push_back({operation::kind::put, "q/a", "v", 7});
    t.success.push_back({operation::kind::range, "q/", {}, 0, prefix_end("q/"), true});
    t.failure.push_back({operation::kind::range, "q/a", {}, 0});
    CHECK(write_txn(t) ==
          R"({"compare":[{"target":"CREATE","result":"EQUAL","key":"cS9h","create_revision":"0"}],)"
          R"("success":[{"request_put":{"key":"cS9h","value":"dg==","lease":"7"}},)"
          R"({"request_range":{"key":"cS8=","range_end":"cTA=","keys_only":true}}],)"
          R"("failure":[{"request_range":{"key":"cS9h"}}]})");
    // etcd 3.4.23's answer to such a transaction: a put's answer, then the range's.
    auto r = parse_txn(
        R"({"header":{"cluster_id":"1","member_id":"2","revision":"12","raft_term":"2"},"succeeded":true,)"
        R"("responses":[{"response_put":{"header":{"revision":"12"}}},)"
        R"({"response_range":{"header":{"revision":"12"},"kvs":[{"key":"cS9h","create_revision":"12","mod_revision":"12",)"
        R"("version":"1","lease":"7"},{"key":"cS9i","create_revision":"9","mod_revision":"9","version":"1"}],"count":"2"}}]})");
    REQUIRE(r);
    CHECK(r->succeeded);
    CHECK(r->revision == 12);
    REQUIRE(r->ranges.size() == 1);
    REQUIRE(r->ranges[0].kvs.size() == 2);
    CHECK(r->ranges[0].revision == 12);
    CHECK(r->ranges[0].kvs[0].key == "q/a");
    CHECK(r->ranges[0].kvs[0].lease == 7);
    CHECK(r->ranges[0].kvs[0].value.empty());  // keys_only
    CHECK(r->ranges[0].kvs[1].create_revision == 9);
    // An empty range answers with no kvs at all.
    auto empty = parse_txn(R"({"header":{"revision":"3"},"succeeded":true,"responses":[{"response_range":{"header":{"revision":"3"}}}]})");
    REQUIRE(empty);
    REQUIRE(empty->ranges.size() == 1);
    CHECK(empty->ranges[0].kvs.empty());
    // Wrong shapes are errors naming the place.
    auto bad = parse_txn(R"({"header":{"revision":"3"},"responses":[{"response_range":{"kvs":[{"key":7}]}}]})");
    REQUIRE_FALSE(bad);
    INFO(bad.error().describe());
    CHECK(bad.error().describe().find("responses[0].response_range.kvs[0].key") != std::string::npos);
    CHECK_FALSE(parse_txn(R"({"responses":{}})"));
}

TEST_CASE("etcd wire: a watch's request, and the messages of its stream as etcd 3.4 writes them", "[etcd]") {
    CHECK(write_watch_create("q/", prefix_end("q/"), 42) ==
          R"({"create_request":{"key":"cS8=","range_end":"cTA=","start_revision":"42","progress_notify":true}})");
    CHECK(write_watch_create("k", {}, 0, false, true) == R"({"create_request":{"key":"aw==","filters":["NOPUT"]}})");

    auto created = parse_watch_response(
        R"({"result":{"header":{"cluster_id":"148","member_id":"102","revision":"2","raft_term":"2"},"created":true}})");
    REQUIRE(created);
    CHECK(created->created);
    CHECK(created->revision == 2);
    CHECK(created->events.empty());
    // A put (no "type": PUT is the zero value, left out) and a delete (the key and the revision).
    auto events = parse_watch_response(
        R"({"result":{"header":{"revision":"3"},"events":[{"kv":{"key":"YS94","create_revision":"2","mod_revision":"2",)"
        R"("version":"1","value":"djE="}},{"type":"DELETE","kv":{"key":"YS94","mod_revision":"3"}}]}})");
    REQUIRE(events);
    REQUIRE(events->events.size() == 2);
    CHECK_FALSE(events->events[0].deleted);
    CHECK(events->events[0].kv.key == "a/x");
    CHECK(events->events[0].kv.value == "v1");
    CHECK(events->events[0].kv.create_revision == 2);
    CHECK(events->events[1].deleted);
    CHECK(events->events[1].kv.mod_revision == 3);
    // A compaction past the start: canceled, with the revision to read from.
    auto compacted = parse_watch_response(R"({"result":{"header":{"raft_term":"2"},"canceled":true,"compact_revision":"3"}})");
    REQUIRE(compacted);
    CHECK(compacted->canceled);
    CHECK(compacted->compact_revision == 3);
    // A progress notification: the header alone.
    auto progress = parse_watch_response(R"({"result":{"header":{"revision":"9"}}})");
    REQUIRE(progress);
    CHECK(progress->revision == 9);
    CHECK_FALSE(progress->created);
    // The gateway's error message, and messages that are not a watch's.
    auto err = parse_watch_response(R"({"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","http_status":"Service Unavailable"}})");
    REQUIRE_FALSE(err);
    CHECK(err.error().message == "etcd ended the watch: etcdserver: no leader");
    for (const char* bad : {"", "[]", "{}", R"({"result":[]})", R"({"result":{"events":{}}})", R"({"result":{"events":[7]}})",
                            R"({"result":{"events":[{"type":"PATCH","kv":{}}]}})", R"({"result":{"events":[{"type":"DELETE"}]}})",
                            R"({"result":{"created":"yes"}})", R"({"result":{"events":[{"kv":{"key":"%%%"}}]}})", "{\"result\":"}) {
        INFO(bad);
        CHECK_FALSE(parse_watch_response(bad));
    }
}

TEST_CASE("etcd client: a watch streams its messages, fails over until one arrives, then reports the break", "[etcd]") {
    using forewarn_test::scripted_stream;
    scripted_stream t;
    const std::string version = R"({"etcdserver":"3.4.23","etcdcluster":"3.4.0"})";
    t.push({200, version, {}, {}});                                                    // a: /version
    t.push({503, R"({"error":"etcdserver: no leader","code":14})", {}, {}});          // a: the watch, refused
    t.push({200, version, {}, {}});                                                    // b: /version
    t.push({200, {},
            {R"({"result":{"header":{"revision":"5"},"created":true}})",
             R"({"result":{"header":{"revision":"6"},"events":[{"type":"DELETE","kv":{"key":"cS94","mod_revision":"6"}}]}})"},
            forewarn::error(errc::transport, "stream from b broke in the middle of a message")});
    client_options o;
    o.endpoints = {"http://a:2379", "http://b:2379"};
    basic_client<scripted_stream> c(o, t);
    static_assert(basic_client<scripted_stream>::can_watch());
    std::vector<watch_response> seen;
    auto r = c.watch("q/", prefix_end("q/"), 5, std::chrono::seconds(30), [&](const watch_response& w) {
        seen.push_back(w);
        return true;
    });
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::transport);  // after messages: reported, not failed over again
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].created);
    REQUIRE(seen[1].events.size() == 1);
    CHECK(seen[1].events[0].kv.key == "q/x");
    const auto reqs = t.requests();
    REQUIRE(reqs.size() == 4);
    CHECK(reqs[1].url == "http://a:2379/v3/watch");
    CHECK(reqs[3].url == "http://b:2379/v3/watch");
    CHECK(reqs[3].timeout == std::chrono::seconds(30));  // the idle limit
    CHECK(reqs[3].body == write_watch_create("q/", prefix_end("q/"), 5));
    CHECK(c.current_endpoint() == "http://b:2379");

    // A canceled message (a compaction) ends the watch with success once the handler saw it; the
    // handler saying false ends it too; a message that is not a watch's is an error.
    t.push({200, {}, {R"({"result":{"header":{},"created":true}})", R"({"result":{"header":{},"canceled":true,"compact_revision":"9"}})",
                      R"({"result":{"header":{},"created":true}})"}, {}});
    seen.clear();
    auto compacted = c.watch("q/", {}, 2, std::chrono::seconds(30), [&](const watch_response& w) {
        seen.push_back(w);
        return true;
    });
    CHECK(compacted);
    REQUIRE(seen.size() == 2);
    CHECK(seen[1].compact_revision == 9);
    t.push({200, {}, {R"({"result":{"header":{},"created":true}})", "not json"}, {}});
    auto garbled = c.watch("q/", {}, 2, std::chrono::seconds(30), [&](const watch_response&) { return true; });
    REQUIRE_FALSE(garbled);
    CHECK(garbled.error().code == errc::parse_error);

    // Over a transport that cannot stream: unsupported, nothing sent.
    fake_transport plain;
    basic_client<fake_transport> unary(o, plain);
    static_assert(!basic_client<fake_transport>::can_watch());
    auto none = unary.watch("q/", {}, 0, std::chrono::seconds(30), [](const watch_response&) { return true; });
    REQUIRE_FALSE(none);
    CHECK(none.error().code == errc::unsupported);
    CHECK(plain.request_count() == 0);
}

}  // namespace test_etcd_wire
