// SPDX-License-Identifier: MIT
// forewarn-watch's --webhook sender at its own layer (tools/watch/webhook.hpp), over
// forewarn::testing::fake_transport through its transport seam: what it POSTs, which answers it
// tries again and how often, its bounded queue, and --webhook-template's rendering and refusals.
// The agent's end-to-end webhook cases (tests/integration/test_watch.cpp) send to a real server.
#include "json.hpp"
#include "webhook.hpp"

#include <forewarn/json.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace test_webhook {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;

namespace {

// What on_result said, in order, waited for with a bound.
struct results {
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<std::string, int>> got;
    watch::webhook::result_fn fn() {
        return [this](std::string_view result, int retries) {
            std::lock_guard<std::mutex> lock(m);
            got.emplace_back(std::string(result), retries);
            cv.notify_all();
        };
    }
    bool wait_for(std::size_t n, std::chrono::milliseconds bound = 20s) {
        std::unique_lock<std::mutex> lock(m);
        return cv.wait_for(lock, bound, [&] { return got.size() >= n; });
    }
};

watch::webhook::options fast(std::string url = "http://127.0.0.1:9/hook") {
    watch::webhook::options o;
    o.url = std::move(url);
    o.first_pause = 5ms;  // the pauses' lengths are not what these cases check
    return o;
}

const std::string line = R"({"change":"prepare","cloud":"azure","id":"EV-1","type":"reboot","resources":["vm0","vm1"],"duration_s":5})";

}  // namespace

TEST_CASE("webhook: the change's JSON line POSTed as JSON, its Authorization only when given, and 503s tried again until a 2xx") {
    forewarn::testing::fake_transport t;
    t.respond(503).respond(503).respond(204);
    results r;
    auto o = fast();
    o.authorization = "Bearer secret";
    watch::webhook hook(o, [](std::string_view) {}, r.fn(), watch::any_transport::of(t));
    hook.send(line);
    REQUIRE(r.wait_for(1));
    hook.stop();
    CHECK(r.got[0] == std::make_pair(std::string("ok"), 2));
    const auto sent = t.requests();
    REQUIRE(sent.size() == 3);
    for (const auto& q : sent) {
        CHECK(q.method == forewarn::http_method::post);
        CHECK(q.url == "http://127.0.0.1:9/hook");
        CHECK(q.body == line);
        REQUIRE(forewarn::find_header(q.headers, "Content-Type"));
        CHECK(*forewarn::find_header(q.headers, "Content-Type") == "application/json");
        REQUIRE(forewarn::find_header(q.headers, "Authorization"));
        CHECK(*forewarn::find_header(q.headers, "Authorization") == "Bearer secret");
    }

    forewarn::testing::fake_transport plain;
    plain.respond(200);
    results r2;
    watch::webhook without(fast(), [](std::string_view) {}, r2.fn(), watch::any_transport::of(plain));
    without.send(line);
    REQUIRE(r2.wait_for(1));
    without.stop();
    REQUIRE(plain.requests().size() == 1);
    CHECK_FALSE(forewarn::find_header(plain.requests()[0].headers, "Authorization"));
}

TEST_CASE("webhook: a 4xx is not tried again but 429, 5xx and a connection error are, up to the attempts, then given up") {
    SECTION("400") {
        forewarn::testing::fake_transport t;
        t.respond(400);
        results r;
        std::vector<std::string> log;
        watch::webhook hook(fast(), [&](std::string_view l) { log.emplace_back(l); }, r.fn(), watch::any_transport::of(t));
        hook.send(line);
        REQUIRE(r.wait_for(1));
        hook.stop();
        CHECK(r.got[0] == std::make_pair(std::string("failed"), 0));
        CHECK(t.requests().size() == 1);
        REQUIRE(log.size() == 1);
        CHECK(log[0] == "webhook: HTTP 400, not retried");
    }
    SECTION("429, a reset, 500: three attempts") {
        forewarn::testing::fake_transport t;
        t.respond(429).fail(forewarn::error(forewarn::errc::transport, "connection reset")).respond(500).respond(200);
        results r;
        auto o = fast();
        o.attempts = 3;
        watch::webhook hook(o, [](std::string_view) {}, r.fn(), watch::any_transport::of(t));
        hook.send(line);
        REQUIRE(r.wait_for(1));
        hook.stop();
        CHECK(r.got[0] == std::make_pair(std::string("failed"), 2));
        CHECK(t.requests().size() == 3);  // the fourth answer, a 200, never asked for
    }
}

TEST_CASE("webhook: past queue_limit waiting changes the oldest is dropped and said and the rest sent in order",
          "[threads]") {
    forewarn::testing::fake_transport t;
    std::mutex m;
    std::condition_variable cv;
    bool entered = false, release = false;
    std::vector<std::string> bodies;
    t.otherwise([&](const forewarn::http_request& q) -> forewarn::result<forewarn::http_response> {
        std::unique_lock<std::mutex> lock(m);
        bodies.push_back(q.body);
        entered = true;
        cv.notify_all();
        cv.wait_for(lock, 20s, [&] { return release; });  // the first request hangs until told
        forewarn::http_response out;
        out.status = 200;
        return out;
    });
    results r;
    auto o = fast();
    o.queue_limit = 2;
    watch::webhook hook(o, [](std::string_view) {}, r.fn(), watch::any_transport::of(t));
    hook.send("1");
    {
        std::unique_lock<std::mutex> lock(m);
        REQUIRE(cv.wait_for(lock, 20s, [&] { return entered; }));  // "1" is in flight, off the queue
    }
    for (const char* l : {"2", "3", "4", "5"}) hook.send(l);  // the queue holds two: "2" and "3" dropped
    {
        std::lock_guard<std::mutex> lock(m);
        release = true;
    }
    cv.notify_all();
    REQUIRE(r.wait_for(5));
    hook.stop();
    std::vector<std::string> said;
    for (const auto& g : r.got) said.push_back(g.first);
    CHECK(said == std::vector<std::string>{"dropped", "dropped", "ok", "ok", "ok"});
    std::lock_guard<std::mutex> lock(m);
    CHECK(bodies == std::vector<std::string>{"1", "4", "5"});
}

TEST_CASE("webhook: stop() ends a request in flight and sends nothing of the queue") {
    forewarn::testing::fake_transport t;
    t.respond(503);  // then no answer: a transport error, tried again after the pause
    results r;
    auto o = fast();
    o.first_pause = 20s;  // stopped while it waits to try again
    watch::webhook hook(o, [](std::string_view) {}, r.fn(), watch::any_transport::of(t));
    hook.send(line);
    hook.send(line);
    for (int i = 0; i < 400 && t.requests().empty(); ++i) std::this_thread::sleep_for(5ms);
    const auto start = std::chrono::steady_clock::now();
    hook.stop();
    CHECK(std::chrono::steady_clock::now() - start < 10s);  // not the 20 s pause
    CHECK(t.requests().size() == 1);
    CHECK(r.got.empty());
    hook.send(line);  // after stop: nothing
    CHECK(t.requests().size() == 1);
}

TEST_CASE("webhook_template: each placeholder as the inside of a JSON string, {{json}} as the whole line, a number and a list") {
    watch::webhook_template tpl;
    REQUIRE(tpl.parse(R"({"text":"{{type}} on {{resources}} ({{id}}), {{duration_s}} s","raw":{{json}}})").empty());
    const std::string body = tpl.render(line);
    CHECK(body == R"({"text":"reboot on vm0, vm1 (EV-1), 5 s","raw":)" + line + "}");
    // A value with quotes and a newline stays inside its string.
    const std::string tricky = R"({"id":"a\"b\nc"})";
    const std::string out = tpl.render(tricky);
    REQUIRE(watch::parse_json(out));
    CHECK(out.find(R"((a\"b\nc))") != std::string::npos);

    forewarn::testing::fake_transport t;
    t.respond(200);
    results r;
    auto o = fast();
    o.body = tpl;
    watch::webhook hook(o, [](std::string_view) {}, r.fn(), watch::any_transport::of(t));
    hook.send(line);
    REQUIRE(r.wait_for(1));
    hook.stop();
    REQUIRE(t.requests().size() == 1);
    CHECK(t.requests()[0].body == body);
}

TEST_CASE("webhook_template refuses an unknown placeholder, an unclosed one and a text that does not give JSON, in words") {
    watch::webhook_template tpl;
    CHECK(tpl.parse(R"({"text":"{{nope}}"})") == "--webhook-template: unknown placeholder {{nope}}");
    CHECK(tpl.parse(R"({"text":"{{id"})") == "--webhook-template: \"{{\" at byte 9 is never closed");
    const std::string not_json = tpl.parse(R"({"text": {{id}} })");
    CHECK(not_json.rfind("--webhook-template does not give JSON: ", 0) == 0);
    CHECK(watch::webhook::check_url("ftp://example.test/") == "--webhook needs an http:// or https:// URL");
    CHECK(watch::webhook::check_url("http://127.0.0.1:9/hook").empty());
}

}  // namespace test_webhook
