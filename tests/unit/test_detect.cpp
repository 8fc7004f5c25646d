// SPDX-License-Identifier: MIT
// detect_cloud() against testing::fake_transport: each service must identify itself.
#include <forewarn/detect.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"
#include "scoped_env.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace test_detect {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::cloud;
using forewarn::errc;
using forewarn::error;
using forewarn::http_request;
using forewarn::http_response;
using forewarn::result;
using forewarn::testing::fake_transport;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

http_response answer(int status, std::string body, forewarn::http_headers headers) {
    http_response r;
    r.status = status;
    r.body = std::move(body);
    r.headers = std::move(headers);
    return r;
}

forewarn::detect_options test_options() {
    forewarn::detect_options o;
    o.azure_endpoint = "http://azure.test";
    o.gce_endpoint = "http://gce.test";
    o.aws_endpoint = "http://aws.test";
    o.alibaba_endpoint = "http://alibaba.test";
    o.tencent_endpoint = "http://tencent.test";
    return o;
}

using handler = fake_transport::handler;

result<http_response> nobody(const http_request&) { return error(errc::transport, "connection refused"); }

// Azure's, GCE's and AWS's answers, each switchable.
fake_transport world(handler azure, handler gce, handler aws = nobody, handler alibaba = nobody, handler tencent = nobody) {
    fake_transport t;
    t.otherwise([azure, gce, aws, alibaba, tencent](const http_request& r) -> result<http_response> {
        if (contains(r.url, "http://azure.test/")) return azure(r);
        if (contains(r.url, "http://gce.test/")) return gce(r);
        if (contains(r.url, "http://aws.test/")) return aws(r);
        if (contains(r.url, "http://alibaba.test/")) return alibaba(r);
        if (contains(r.url, "http://tencent.test/")) return tencent(r);
        return error(errc::transport, "no route to " + r.url);
    });
    return t;
}

result<http_response> real_azure(const http_request& r) {
    const std::string* m = forewarn::find_header(r.headers, "Metadata");
    if (!m || *m != "true") return answer(400, R"({"error":"Bad request. Required metadata header not specified"})", {});
    return answer(200, R"({"name":"vm_0","vmScaleSetName":"","location":"westeurope"})",
                  {{"Content-Type", "application/json; charset=utf-8"}});
}

result<http_response> real_gce(const http_request& r) {
    const std::string* f = forewarn::find_header(r.headers, "Metadata-Flavor");
    if (!f || *f != "Google") return answer(403, "Missing Metadata-Flavor:Google header.", {{"Metadata-Flavor", "Google"}});
    return answer(200, "instance/\nproject/\n", {{"Metadata-Flavor", "Google"}, {"Content-Type", "application/text"}});
}

// IMDSv2: a PUT to /latest/api/token with a TTL gives a token; anything else without one is 401.
result<http_response> real_aws(const http_request& r) {
    if (r.method == forewarn::http_method::put && contains(r.url, "/latest/api/token") &&
        forewarn::find_header(r.headers, "X-aws-ec2-metadata-token-ttl-seconds"))
        return answer(200, "AQAEAFakeToken==", {{"Content-Type", "text/plain"}});
    return answer(401, "", {});
}

// Alibaba: a PUT to /latest/api/token with its own TTL header gives a token.
result<http_response> real_alibaba(const http_request& r) {
    if (r.method == forewarn::http_method::put && contains(r.url, "/latest/api/token") &&
        forewarn::find_header(r.headers, "X-aliyun-ecs-metadata-token-ttl-seconds"))
        return answer(200, "AbCdEfAlibabaToken", {{"Content-Type", "text/plain"}});
    return answer(400, "", {});
}

// Tencent: the instance id, without a token.
result<http_response> real_tencent(const http_request& r) {
    if (contains(r.url, "/latest/meta-data/instance-id")) return answer(200, "ins-3x9pk2ab", {{"Content-Type", "text/plain"}});
    return answer(404, "", {});
}

}  // namespace

TEST_CASE("detect_cloud finds GCE by its flavor header", "[detect]") {
    fake_transport t = world(nobody, real_gce);
    auto d = forewarn::detect_cloud(test_options(), t);
    REQUIRE(d);
    CHECK(d->found == cloud::gce);
    CHECK(d->gce);
    CHECK_FALSE(d->azure);
    CHECK(d->azure_error.code == errc::transport);
    bool probed_root = false;
    for (const auto& r : t.requests())
        if (r.url == "http://gce.test/computeMetadata/v1/") {
            probed_root = true;
            CHECK(r.timeout == 1000ms);
            CHECK(r.connect_timeout <= 1000ms);
        }
    CHECK(probed_root);
}

TEST_CASE("detect_cloud finds Azure by a JSON answer to Metadata: true", "[detect]") {
    fake_transport t = world(real_azure, nobody);
    auto d = forewarn::detect_cloud(test_options(), t);
    REQUIRE(d);
    CHECK(d->found == cloud::azure);
    CHECK(d->azure);
    CHECK_FALSE(d->gce);
    bool probed = false;
    for (const auto& r : t.requests())
        if (contains(r.url, "http://azure.test/metadata/instance/compute?api-version=")) probed = true;
    CHECK(probed);
}

TEST_CASE("detect_cloud says none when nothing answers, with each probe's reason", "[detect]") {
    fake_transport t = world(nobody, nobody);
    auto d = forewarn::detect_cloud(test_options(), t);
    REQUIRE(d);
    CHECK(d->found == cloud::none);
    CHECK(d->azure_error.code == errc::transport);
    CHECK(d->gce_error.code == errc::transport);
}

TEST_CASE("detect_cloud refuses impostors: a page without the flavor header, HTML, a non-object", "[detect]") {
    SECTION("a web server at the GCE address") {
        fake_transport t = world(nobody, [](const http_request&) -> result<http_response> {
            return answer(200, "<html>hello</html>", {{"Content-Type", "text/html"}});
        });
        auto d = forewarn::detect_cloud(test_options(), t);
        REQUIRE(d);
        CHECK(d->found == cloud::none);
        CHECK(d->gce_error.code == errc::not_metadata_server);
    }
    SECTION("the flavor header with an error status") {
        fake_transport t = world(nobody, [](const http_request&) -> result<http_response> {
            return answer(403, "", {{"Metadata-Flavor", "Google"}});
        });
        auto d = forewarn::detect_cloud(test_options(), t);
        REQUIRE(d);
        CHECK(d->found == cloud::none);
        CHECK(d->gce_error.http_status == 403);
    }
    SECTION("HTML at the Azure address") {
        fake_transport t = world([](const http_request&) -> result<http_response> {
            return answer(200, "<html>captive portal</html>", {{"Content-Type", "text/html"}});
        }, nobody);
        auto d = forewarn::detect_cloud(test_options(), t);
        REQUIRE(d);
        CHECK(d->found == cloud::none);
        CHECK(d->azure_error.code == errc::not_metadata_server);
    }
    SECTION("malformed or non-object JSON at the Azure address") {
        const char* body = GENERATE("[1,2]", "{\"a\":", "");
        fake_transport t = world([body](const http_request&) -> result<http_response> {
            return answer(200, body, {});
        }, nobody);
        auto d = forewarn::detect_cloud(test_options(), t);
        REQUIRE(d);
        CHECK(d->found == cloud::none);
        CHECK(d->azure_error.code == errc::not_metadata_server);
    }
    SECTION("the GCE server answering at the Azure address") {
        fake_transport t = world([](const http_request&) -> result<http_response> {
            return answer(200, "{}", {{"Metadata-Flavor", "Google"}});
        }, nobody);
        auto d = forewarn::detect_cloud(test_options(), t);
        REQUIRE(d);
        CHECK_FALSE(d->azure);
    }
}

TEST_CASE("detect_cloud returns by its deadline even when a probe hangs", "[detect]") {
    fake_transport t;
    // Both probes hang until cancelled (bounded, so a broken cancel fails instead of hanging).
    // By reference: a copy of `t` inside its own handler is a cycle LeakSanitizer reports, and
    // detect_cloud joins its probe threads before it returns.
    t.otherwise([&t](const http_request&) -> result<http_response> {
        const auto give_up = std::chrono::steady_clock::now() + 20s;
        while (!t.cancelled() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
        return error(errc::cancelled, "request cancelled");
    });
    auto o = test_options();
    o.timeout = 200ms;
    const auto start = std::chrono::steady_clock::now();
    auto d = forewarn::detect_cloud(o, t);
    REQUIRE(d);
    CHECK(std::chrono::steady_clock::now() - start < 10s);  // far below the 20 s hang
    CHECK(d->found == cloud::none);
    CHECK(d->azure_error.code == errc::timeout);
    CHECK(d->gce_error.code == errc::timeout);
}

TEST_CASE("detect_cloud: several answering gives azure with their flags - probes can be turned off", "[detect]") {
    fake_transport t = world(real_azure, real_gce);
    auto d = forewarn::detect_cloud(test_options(), t);
    REQUIRE(d);
    CHECK(d->azure);
    CHECK(d->gce);
    CHECK(d->found == cloud::azure);

    auto o = test_options();
    o.probe_azure = false;
    o.probe_aws = false;
    o.probe_alibaba = false;
    o.probe_tencent = false;
    fake_transport u;  // not t: a probe the first detection did not wait for may still use it
    u.otherwise([](const http_request& r) { return contains(r.url, "gce.test") ? real_gce(r) : real_azure(r); });
    auto g = forewarn::detect_cloud(o, u);
    REQUIRE(g);
    CHECK(g->found == cloud::gce);
    CHECK(u.request_count() == 1);
}

TEST_CASE("detect_cloud refuses a malformed endpoint option", "[detect]") {
    auto o = test_options();
    o.gce_endpoint = "ftp://nope";
    fake_transport t;
    auto d = forewarn::detect_cloud(o, t);
    REQUIRE_FALSE(d);
    CHECK(d.error().code == errc::invalid_argument);
    CHECK(t.request_count() == 0);
}

TEST_CASE("detect_cloud finds AWS by an IMDSv2 session token - Azure or GCE at its address are not AWS", "[detect][aws]") {
    fake_transport t = world(nobody, nobody, real_aws);
    auto d = forewarn::detect_cloud(test_options(), t);
    REQUIRE(d);
    CHECK(d->found == cloud::aws);
    CHECK(d->aws);
    bool probed = false;
    for (const auto& r : t.requests())
        if (r.url == "http://aws.test/latest/api/token") {
            probed = true;
            CHECK(r.method == forewarn::http_method::put);
            CHECK(r.timeout == 1000ms);
        }
    CHECK(probed);

    for (handler impostor : {handler(real_gce), handler(real_azure)}) {
        fake_transport u = world(nobody, nobody, impostor);
        auto e = forewarn::detect_cloud(test_options(), u);
        REQUIRE(e);
        CHECK(e->found == cloud::none);
        CHECK_FALSE(e->aws);
        CHECK(e->aws_error.code == errc::not_metadata_server);
    }
}

TEST_CASE("detect_cloud skips AWS when AWS_EC2_METADATA_DISABLED is true", "[detect][aws]") {
    fake_transport t = world(nobody, nobody, real_aws);
    auto d = [&] {
        scoped_env disabled("AWS_EC2_METADATA_DISABLED", "true");
        return forewarn::detect_cloud(test_options(), t);
    }();
    REQUIRE(d);
    CHECK(d->found == cloud::none);
    CHECK(d->aws_error.code == errc::unsupported);
    for (const auto& r : t.requests()) CHECK_FALSE(contains(r.url, "aws.test"));
}

TEST_CASE("detect_cloud finds Alibaba by its own token header and Tencent by its instance id - AWS is neither",
          "[detect][alibaba][tencent]") {
    fake_transport a = world(nobody, nobody, nobody, real_alibaba);
    auto d = forewarn::detect_cloud(test_options(), a);
    REQUIRE(d);
    CHECK(d->found == cloud::alibaba);
    CHECK(d->alibaba);

    fake_transport t = world(nobody, nobody, nobody, nobody, real_tencent);
    d = forewarn::detect_cloud(test_options(), t);
    REQUIRE(d);
    CHECK(d->found == cloud::tencent);
    CHECK(d->tencent);

    // AWS at their addresses: its token PUT wants its own header, its instance id is "i-...".
    const handler aws_with_v1 = [](const http_request& r) -> result<http_response> {
        if (contains(r.url, "/instance-id")) return answer(200, "i-0123456789abcdef0", {});
        return real_aws(r);
    };
    fake_transport u = world(nobody, nobody, nobody, aws_with_v1, aws_with_v1);
    d = forewarn::detect_cloud(test_options(), u);
    REQUIRE(d);
    CHECK(d->found == cloud::none);
    CHECK(d->alibaba_error.code == errc::not_metadata_server);
    CHECK(d->tencent_error.code == errc::not_metadata_server);
}

TEST_CASE("detect_cloud does not wait for a probe of a cloud that is not preferred once one answers",
          "[detect][alibaba][tencent]") {
    // Off Alibaba and Tencent, their addresses may not answer at all: found on Azure, GCE or AWS,
    // detection must not wait the whole timeout for them.
    fake_transport t;
    // The hanging probes hold nothing of this test's frame (they end on their own threads after
    // detect_cloud returns): a flag they share, set when the test is done with them.
    auto release = std::make_shared<std::atomic<bool>>(false);
    t.otherwise([release](const http_request& r) -> result<http_response> {
        if (contains(r.url, "http://gce.test/")) return real_gce(r);
        if (contains(r.url, "http://alibaba.test/") || contains(r.url, "http://tencent.test/")) {
            const auto give_up = std::chrono::steady_clock::now() + 20s;
            while (!*release && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
            return error(errc::cancelled, "request cancelled");
        }
        return error(errc::transport, "connection refused");
    });
    auto o = test_options();
    o.timeout = 15s;
    const auto start = std::chrono::steady_clock::now();
    auto d = forewarn::detect_cloud(o, t);
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(d);
    CHECK(d->found == cloud::gce);
    CHECK(took < 10s);  // not the 15 s timeout: the hanging probes were not waited for
    CHECK(d->alibaba_error.code == errc::cancelled);
    CHECK(d->tencent_error.message.find("not waited for") == 0);
    *release = true;
}

TEST_CASE("detect_options and detection by cloud: each cloud's own members, nothing for cloud::none", "[detect]") {
    forewarn::detect_options o;
    for (const auto& c : forewarn::clouds) o.set_endpoint(c.id, "http://" + std::string(c.name) + ".test");
    CHECK(o.azure_endpoint == "http://azure.test");
    CHECK(o.gce_endpoint == "http://gce.test");
    CHECK(o.aws_endpoint == "http://aws.test");
    CHECK(o.alibaba_endpoint == "http://alibaba.test");
    CHECK(o.tencent_endpoint == "http://tencent.test");
    o.probe_aws = false;
    CHECK_FALSE(o.probe(forewarn::cloud::aws));
    CHECK(o.probe(forewarn::cloud::tencent));
    o.set_endpoint(forewarn::cloud::none, "http://none.test");  // no member: nothing changes
    CHECK(o.endpoint(forewarn::cloud::none).empty());
    CHECK_FALSE(o.probe(forewarn::cloud::none));
    CHECK(o.endpoint(forewarn::cloud::gce) == "http://gce.test");

    forewarn::detection d;
    d.alibaba = true;
    d.gce_error = forewarn::error(forewarn::errc::timeout, "gce's own");
    CHECK(d.answered(forewarn::cloud::alibaba));
    CHECK_FALSE(d.answered(forewarn::cloud::aws));
    CHECK(d.why(forewarn::cloud::gce).message == "gce's own");
    CHECK_FALSE(d.answered(forewarn::cloud::none));
    CHECK(d.why(forewarn::cloud::none).code == forewarn::errc::invalid_argument);
}

}  // namespace test_detect
