// SPDX-License-Identifier: MIT
// etcd's JSON gateway as bytes (etcd/wire.hpp) and the client's endpoint, version and auth rules
// (etcd/client.hpp) over testing::fake_transport. The answers are etcd 3.4.23's own.
#include <forewarn/etcd/client.hpp>
#include <forewarn/etcd/wire.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"

#include <string>

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
