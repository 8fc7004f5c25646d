// SPDX-License-Identifier: MIT
// The agent's connection to an API server (tools/watch/kubernetes/connection.hpp, api.hpp): a
// kubeconfig read as kubectl writes it, the in-cluster service account, the token read again
// when its file changes, base64 data, and what a Status answer says. No server.
#include "kubernetes/api.hpp"
#include "kubernetes/connection.hpp"

#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"
#include "temp_dir.hpp"

#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>

namespace test_connection {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace watch::kubernetes;
using forewarn_test::temp_dir;

namespace {

void write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A kubeconfig with two contexts; `user` is the YAML of the first context's user.
std::string kubeconfig(const std::string& cluster, const std::string& user, const std::string& current = "one") {
    return "apiVersion: v1\nkind: Config\n"
           "clusters:\n- name: c1\n  cluster:\n" + cluster +
           "- name: c2\n  cluster:\n    server: https://10.9.9.9:6443/\n    certificate-authority: /etc/c2.crt\n"
           "users:\n- name: u1\n  user:\n" + user +
           "- name: u2\n  user:\n    token: second-token\n"
           "contexts:\n- name: one\n  context:\n    cluster: c1\n    user: u1\n"
           "- name: two\n  context:\n    cluster: c2\n    user: u2\n"
           "current-context: " + current + "\n";
}

}  // namespace

TEST_CASE("a kubeconfig's current context gives the server, its CA and the user's token") {
    temp_dir dir("kubeconfig");
    write(dir.file("config"), kubeconfig("    server: https://127.0.0.1:6443/\n    certificate-authority: certs/ca.crt\n",
                                         "    token: first-token\n"));
    auto c = from_kubeconfig(dir.file("config"));
    REQUIRE(c);
    CHECK(c->server == "https://127.0.0.1:6443");
    CHECK(c->ca_file == dir.file("config").substr(0, dir.file("config").rfind('/')) + "/certs/ca.crt");
    CHECK(c->token.current().value() == "first-token");
    CHECK_FALSE(c->token.from_file());
    CHECK(c->origin.find("context one") != std::string::npos);

    auto other = from_kubeconfig(dir.file("config"), "two");  // --kubeconfig with a named context
    REQUIRE(other);
    CHECK(other->server == "https://10.9.9.9:6443");
    CHECK(other->ca_file == "/etc/c2.crt");
    CHECK(other->token.current().value() == "second-token");
}

TEST_CASE("certificate-authority-data and a client certificate's data go to private files, removed with the connection") {
    temp_dir dir("kubeconfig-data");
    // "CA PEM\n", "CERT\n", "KEY\n" in base64, the CA's split over lines as some tools write it
    write(dir.file("config"),
          kubeconfig("    server: https://127.0.0.1:6443\n    certificate-authority-data: Q0Eg\n      UEVNCg==\n",
                     "    client-certificate-data: Q0VSVAo=\n    client-key-data: S0VZCg==\n"));
    std::string private_dir;
    {
        auto c = from_kubeconfig(dir.file("config"));
        REQUIRE(c);
        REQUIRE(c->files);
        private_dir = c->files->dir();
        CHECK(read(c->ca_file) == "CA PEM\n");
        CHECK(read(c->client_cert) == "CERT\n");
        CHECK(read(c->client_key) == "KEY\n");
        struct stat st {};
        REQUIRE(::stat(c->client_key.c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0600);
        REQUIRE(::stat(private_dir.c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0700);
        CHECK(c->token.current().value().empty());
    }
    struct stat st {};
    CHECK(::stat(private_dir.c_str(), &st) != 0);  // gone with the last copy of the connection
}

TEST_CASE("a kubeconfig forewarn-watch cannot use is refused with the reason") {
    temp_dir dir("kubeconfig-bad");
    const std::string ca = "    server: https://127.0.0.1:6443\n    certificate-authority: /ca.crt\n";
    const std::map<std::string, std::pair<std::string, forewarn::errc>> cases = {
        {"not YAML", {"clusters: [unclosed\n", forewarn::errc::parse_error}},
        {"not a map", {"- a\n- b\n", forewarn::errc::invalid_document}},
        {"an http server", {kubeconfig("    server: http://127.0.0.1:8080\n", "    token: t\n"), forewarn::errc::invalid_argument}},
        {"no TLS verification", {kubeconfig(ca + "    insecure-skip-tls-verify: true\n", "    token: t\n"), forewarn::errc::unsupported}},
        {"an exec plugin", {kubeconfig(ca, "    exec:\n      command: aws\n"), forewarn::errc::unsupported}},
        {"no credentials", {kubeconfig(ca, "    username: admin\n"), forewarn::errc::invalid_document}},
        {"a certificate without its key", {kubeconfig(ca, "    client-certificate: /c.crt\n"), forewarn::errc::invalid_document}},
        {"bad base64", {kubeconfig("    server: https://h:1\n    certificate-authority-data: '%%%'\n", "    token: t\n"),
                        forewarn::errc::invalid_document}},
        {"no such context", {kubeconfig(ca, "    token: t\n", "three"), forewarn::errc::invalid_document}},
        {"a token that is a map", {kubeconfig(ca, "    token: {a: b}\n"), forewarn::errc::invalid_document}},
    };
    for (const auto& [name, c] : cases) {
        INFO(name);
        write(dir.file("config"), c.first);
        auto r = from_kubeconfig(dir.file("config"));
        REQUIRE_FALSE(r);
        CHECK(r.error().code == c.second);
        CHECK(r.error().message.find(dir.file("config")) != std::string::npos);  // which file
    }
    auto missing = from_kubeconfig(dir.file("nothing-here"));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == forewarn::errc::io_error);
}

TEST_CASE("a token file is read again when it changes, and on demand after a 401") {
    temp_dir dir("token-file");
    write(dir.file("token"), "token-one\n");
    write(dir.file("config"), kubeconfig("    server: https://127.0.0.1:6443\n", "    tokenFile: token\n"));
    auto c = from_kubeconfig(dir.file("config"));
    REQUIRE(c);
    REQUIRE(c->token.from_file());
    CHECK(c->token.current().value() == "token-one");
    CHECK(c->token.current().value() == "token-one");
    CHECK(c->token.reads() == 1);  // unchanged: not read again

    write(dir.file("token"), "token-two-longer\n");  // another size: seen at once
    CHECK(c->token.current().value() == "token-two-longer");
    CHECK(c->token.reads() == 2);

    // The same size and time (a rotation within the clock's step): only reload() sees it.
    struct stat before {};
    REQUIRE(::stat(dir.file("token").c_str(), &before) == 0);
    write(dir.file("token"), "token-3ee-longer\n");
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    REQUIRE(::utimensat(AT_FDCWD, dir.file("token").c_str(), times, 0) == 0);
    CHECK(c->token.current().value() == "token-two-longer");
    CHECK(c->token.reload().value() == "token-3ee-longer");

    write(dir.file("token"), "two words\n");
    auto bad = c->token.reload();
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("two words") == std::string::npos);  // a token is never in a message
    write(dir.file("token"), "");
    CHECK_FALSE(c->token.reload());
}

TEST_CASE("in a pod: the service's host and port, the account's CA, token and namespace") {
    temp_dir dir("service-account");
    write(dir.file("ca.crt"), "CA");
    write(dir.file("token"), "pod-token");
    write(dir.file("namespace"), "forewarn\n");
    std::map<std::string, std::string> vars = {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}};
    const environment env = [&](const char* name) { return vars.count(name) ? vars[name] : std::string(); };
    auto c = in_cluster(env, dir.path.string());
    REQUIRE(c);
    CHECK(c->server == "https://10.0.0.1:443");
    CHECK(c->ca_file == dir.file("ca.crt"));
    CHECK(c->token.from_file());
    CHECK(c->token.current().value() == "pod-token");
    CHECK(c->pod_namespace == "forewarn");
    CHECK(c->origin == "in-cluster");

    vars["KUBERNETES_SERVICE_HOST"] = "fd00::1";
    CHECK(in_cluster(env, dir.path.string()).value().server == "https://[fd00::1]:443");
    vars["KUBERNETES_SERVICE_HOST"] = "evil/host?x=";
    CHECK(in_cluster(env, dir.path.string()).error().code == forewarn::errc::invalid_argument);
    vars["KUBERNETES_SERVICE_HOST"] = "10.0.0.1";
    vars["KUBERNETES_SERVICE_PORT"] = "443x";
    CHECK(in_cluster(env, dir.path.string()).error().code == forewarn::errc::invalid_argument);
    vars.clear();
    auto outside = in_cluster(env, dir.path.string());
    REQUIRE_FALSE(outside);
    CHECK(outside.error().message.find("--kubeconfig") != std::string::npos);  // the fix
}

TEST_CASE("base64 as kubeconfig's -data fields carry it") {
    CHECK(decode_base64("").value().empty());
    CHECK(decode_base64("Zm9v").value() == "foo");
    CHECK(decode_base64("Zm9vYg==").value() == "foob");
    CHECK(decode_base64("Zm9v\nYmE=\n").value() == "fooba");
    CHECK_FALSE(decode_base64("Zm9"));        // not a multiple of 4
    CHECK_FALSE(decode_base64("Zm9v!A=="));   // outside the alphabet
    CHECK_FALSE(decode_base64("Zg==Zm9v"));   // data after the padding
    CHECK_FALSE(decode_base64("Z==="));       // too much padding
}

TEST_CASE("api_client: 429 and 5xx sent again through the retry policy, a 429's Retry-After its wait, the last answer once they are spent") {
    auto client_over = [](forewarn::testing::fake_transport& t, int attempts) {
        connection c;
        c.server = "https://api.test";
        c.token = token_source::fixed("t");
        api_options o;
        o.attempts = attempts;
        o.backoff = std::chrono::milliseconds(1);
        return std::make_unique<api_client>(std::move(c), api_transport::of(t), o);
    };
    {
        forewarn::testing::fake_transport t;
        t.respond(429, "{}", {{"Retry-After", "1"}}).respond(503).respond(200, "{\"kind\":\"Node\"}");
        auto client = client_over(t, 4);
        const auto started = std::chrono::steady_clock::now();
        auto r = client->call(forewarn::http_method::get, "/api/v1/nodes/n1");
        const auto waited = std::chrono::steady_clock::now() - started;
        REQUIRE(r);
        CHECK(r->status == 200);
        CHECK(client->requests() == 3);
        CHECK(waited >= std::chrono::seconds(1));  // the server's second, not the 1 ms backoff
    }
    {
        forewarn::testing::fake_transport t;
        t.respond(503).respond(502, "{\"message\":\"still down\"}");
        auto client = client_over(t, 2);
        auto r = client->call(forewarn::http_method::get, "/api/v1/nodes/n1");
        REQUIRE(r);  // the attempts spent: the last answer, for the caller to read
        CHECK(r->status == 502);
        CHECK(status_message(r->body) == "still down");
        CHECK(client->requests() == 2);
    }
    {
        forewarn::testing::fake_transport t;
        t.respond(404).respond(429).respond(200);
        auto client = client_over(t, 4);
        auto r = client->call(forewarn::http_method::get, "/api/v1/nodes/n1");
        REQUIRE(r);
        CHECK(r->status == 404);  // an answer, not sent again
        auto evicted = client->call(forewarn::http_method::post, "/api/v1/namespaces/a/pods/p/eviction", "{}", json_body, true);
        REQUIRE(evicted);
        CHECK(evicted->status == 429);  // answer_429: the caller's to ask again
        CHECK(client->requests() == 2);
    }
    {
        forewarn::testing::fake_transport t;
        t.fail(forewarn::error(forewarn::errc::timeout, "timed out")).fail(forewarn::error(forewarn::errc::timeout, "timed out"));
        auto client = client_over(t, 2);
        auto r = client->call(forewarn::http_method::get, "/api/v1/nodes/n1");
        REQUIRE_FALSE(r);
        CHECK(r.error().code == forewarn::errc::timeout);
        CHECK(r.error().message == "GET /api/v1/nodes/n1: timed out");
        CHECK(client->requests() == 2);
    }
}

TEST_CASE("api_client: cancel() ends a pause before a retry at once, the call named as stopped", "[threads]") {
    forewarn::testing::fake_transport t;
    t.respond(503);  // then a transport error each time: tried again after an hour's pause
    connection c;
    c.server = "https://api.test";
    c.token = token_source::fixed("t");
    api_options o;
    o.attempts = 4;
    o.backoff = std::chrono::hours(1);
    api_client client(std::move(c), api_transport::of(t), o);
    auto call = std::async(std::launch::async, [&] { return client.call(forewarn::http_method::get, "/api/v1/nodes/n1"); });
    for (int i = 0; i < 400 && t.request_count() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(t.request_count() == 1);
    client.cancel();
    REQUIRE(call.wait_for(std::chrono::seconds(30)) == std::future_status::ready);  // not the hour
    const auto r = call.get();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == forewarn::errc::cancelled);
    CHECK(r.error().message == "GET /api/v1/nodes/n1: stopped");
    CHECK(t.request_count() == 1);
}

TEST_CASE("an answer the caller did not want names the call, the status and what the server said") {
    const api_answer refused{403, R"({"kind":"Status","status":"Failure","message":"nodes \"n1\" is forbidden: User \"x\" cannot patch resource \"nodes\"","code":403})"};
    const auto e = answer_error("PATCH node n1", refused);
    CHECK(e.code == forewarn::errc::http_status);
    CHECK(e.http_status == 403);
    CHECK(e.message == "PATCH node n1: 403: nodes \"n1\" is forbidden: User \"x\" cannot patch resource \"nodes\"");
    CHECK(answer_error("GET node n1", {404, "not json"}).code == forewarn::errc::not_found);
    CHECK(answer_error("GET node n1", {500, "{\"message\": 5}"}).message == "GET node n1: 500");
    CHECK(status_message("").empty());
}

}  // namespace test_connection
