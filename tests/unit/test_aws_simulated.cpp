// SPDX-License-Identifier: MIT
// forewarn's AWS client against the emulated AWS instance metadata (in-process, on a manual
// clock): the token rules as the service enforces them, Spot and rebalance notices, scheduled
// events from active to completed or canceled, and a poller's recover reasons from them.
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>

#include "catch.hpp"

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace test_aws_simulated {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::testing::manual_clock;
using forewarn::testing::scenario;
using forewarn::testing::scenario_config;
using forewarn::testing::simulated_transport;
using client = forewarn::aws::basic_instance_metadata_client<simulated_transport>;

namespace {

struct world {
    manual_clock clock;
    std::shared_ptr<scenario> s = std::make_shared<scenario>(scenario_config{}, clock);
    // On the manual clock unless `real_time` (a retry's backoff would wait for an advance() that
    // no one makes: this test's thread is the one that would make it).
    client make(forewarn::aws::client_options o = {}, bool real_time = false) {
        o.endpoint = "http://169.254.169.254";
        if (!real_time) o.clock = clock;
        o.retry.initial_backoff = 1ms;
        o.retry.max_backoff = 2ms;
        o.rate_limit = false;
        return client(o, simulated_transport(s));
    }
    int status(http_request r) { return s->handle(r).status; }
};

http_request aws(http_method m, const std::string& path) {
    http_request r;
    r.method = m;
    r.url = "http://169.254.169.254" + path;
    return r;
}

}  // namespace

TEST_CASE("emulated AWS: the token rules - 401 without or with an expired token - 400 for a bad TTL", "[aws][emulator]") {
    world w;
    CHECK(w.status(aws(http_method::get, "/latest/meta-data/instance-id")) == 401);
    auto put = aws(http_method::put, "/latest/api/token");
    CHECK(w.status(put) == 400);  // no TTL
    for (const char* bad : {"0", "21601", "ten", ""}) {
        INFO(bad);
        auto r = put;
        r.headers.push_back({"X-aws-ec2-metadata-token-ttl-seconds", bad});
        CHECK(w.status(r) == 400);
    }
    put.headers.push_back({"X-aws-ec2-metadata-token-ttl-seconds", "60"});
    auto token = w.s->handle(put);
    REQUIRE(token.status == 200);
    CHECK(w.status(aws(http_method::get, "/latest/api/token")) == 405);
    auto get = aws(http_method::get, "/latest/meta-data/instance-id");
    get.headers.push_back({"X-aws-ec2-metadata-token", token.body});
    auto id = w.s->handle(get);
    CHECK(id.status == 200);
    CHECK(id.body == "vm0");
    w.s->advance(60s);
    CHECK(w.status(get) == 401);  // expired
    auto forwarded = put;
    forwarded.headers.push_back({"X-Forwarded-For", "10.0.0.1"});
    CHECK(w.status(forwarded) == 403);
}

TEST_CASE("emulated AWS: the client renews its token after the service forgets it", "[aws][emulator]") {
    world w;
    auto c = w.make();
    REQUIRE(c.fetch().has_value());
    CHECK(c.tokens_fetched() == 1);
    w.s->expire_aws_tokens();
    REQUIRE(c.fetch().has_value());
    CHECK(c.tokens_fetched() == 2);
    auto o = forewarn::aws::client_options{};
    o.token_ttl = 30s;
    auto short_lived = w.make(o);
    REQUIRE(short_lived.fetch().has_value());
    w.s->advance(28s);  // within the last tenth of its life: renewed before the service refuses it
    REQUIRE(short_lived.fetch().has_value());
    CHECK(short_lived.tokens_fetched() == 2);
}

TEST_CASE("emulated AWS: Spot, rebalance and scheduled events reach the client as events", "[aws][emulator]") {
    world w;
    auto c = w.make();
    w.s->aws_spot("stop", 2min);
    w.s->aws_rebalance();
    const auto id = w.s->add_aws_event("instance-retirement", 48h, 2h);
    auto doc = c.fetch();
    REQUIRE(doc.has_value());
    REQUIRE(doc->events.size() == 3);
    CHECK(doc->events[0].id == id);
    CHECK(doc->events[0].type == forewarn::event_type::retirement);
    CHECK(doc->events[0].status == forewarn::event_status::scheduled);
    REQUIRE(doc->events[0].not_before);
    CHECK(*doc->events[0].not_before - *doc->service_time == 48h);
    CHECK(doc->events[1].type == forewarn::event_type::stop);
    CHECK(*doc->events[1].not_before - *doc->service_time == 2min);
    CHECK(doc->events[2].type == forewarn::event_type::rebalance);
    for (const auto& e : doc->events) CHECK(e.affects("vm0"));
    auto who = c.identity();
    REQUIRE(who.has_value());
    CHECK(who->spot());
}

TEST_CASE("emulated AWS: a poller reports completed and canceled scheduled events with that reason", "[aws][emulator][poller]") {
    world w;
    std::vector<std::string> seen;
    forewarn::poller_handlers h;
    h.on_prepare = [&](const forewarn::change& ch, forewarn::approval_handle a) {
        seen.push_back("prepare " + ch.event.id);
        a.ready();  // AWS takes no approval: settled as not approved, nothing sent
    };
    h.on_recover = [&](const forewarn::change& ch) {
        seen.push_back("recover " + ch.event.id + " " + std::string(forewarn::to_string(ch.reason)));
    };
    forewarn::poller<client> p(w.make(), h);
    const auto reboot = w.s->add_aws_event("system-reboot", 24h, std::nullopt, "instance-event-reboot");
    const auto stop = w.s->add_aws_event("instance-stop", 24h, std::nullopt, "instance-event-stop");
    REQUIRE(p.poll_once().has_value());
    REQUIRE(w.s->finish_aws_event(reboot, "completed"));
    REQUIRE(w.s->finish_aws_event(stop, "canceled"));
    w.s->advance(5s);
    REQUIRE(p.poll_once().has_value());
    CHECK(seen == std::vector<std::string>{"prepare instance-event-reboot", "prepare instance-event-stop",
                                           "recover instance-event-reboot completed", "recover instance-event-stop cancelled"});
    for (const auto& r : w.s->requests()) CHECK(r.method != http_method::post);
    const auto events = w.s->aws_events();
    REQUIRE(events.size() == 2);
    CHECK(events[0].state == "completed");
    CHECK(events[1].state == "canceled");
}

TEST_CASE("emulated AWS: poll_once() with nothing changed returns - each notice path asked once, none again and "
          "again",
          "[aws][emulator][regression]") {
    // A round whose deadline had passed asked the first path over and over (every key was due
    // at the deadline, and the first won every tie), so a second poll_once() never returned.
    world w;
    forewarn::poller<client> p(w.make());
    REQUIRE(p.poll_once().has_value());
    w.s->clear_requests();
    auto second = std::async(std::launch::async, [&] { return p.poll_once(); });
    const bool returned = second.wait_for(10s) == std::future_status::ready;
    if (!returned) p.source().cancel();  // unstick it, so that the test fails instead of hanging
    REQUIRE(returned);
    REQUIRE(second.get().has_value());
    CHECK(w.s->requests().size() == 4);  // the four notice paths, once each
}

TEST_CASE("emulated AWS: faults by service name reach the client and its retries", "[aws][emulator][fault]") {
    world w;
    auto c = w.make({}, /*real_time=*/true);  // backoffs of 1-2 ms
    forewarn::testing::fault_spec f;
    f.service = "aws";
    f.status = 503;
    f.count = 2;
    w.s->inject_fault(f);
    REQUIRE(c.fetch().has_value());  // two 503s absorbed by the retries
    forewarn::testing::fault_spec bad;
    bad.service = "aws";
    bad.what = forewarn::testing::fault_spec::kind::malformed_json;
    bad.path = "/events/maintenance/scheduled";
    w.s->inject_fault(bad);
    auto doc = c.fetch();
    REQUIRE(doc.has_value());  // the other paths are delivered; the list's error is its key's
    REQUIRE(doc->key_errors.size() == 1);
    CHECK(doc->key_errors[0].code == forewarn::errc::parse_error);
}

TEST_CASE("emulated AWS: the control API - spot - rebalance - events and their ends", "[aws][emulator][control]") {
    world w;
    auto post = [&](const std::string& route, const std::string& body, const char* method = "POST") {
        http_request r;
        r.method = http_method::post;
        r.url = "http://127.0.0.1/emulator/v1/" + route;
        r.body = body;
        if (std::string(method) == "DELETE") r.headers.push_back({"X-Http-Method", "DELETE"});
        return w.s->handle(r);
    };
    CHECK(post("aws/spot", R"({"action":"hibernate","in":"90s"})").status == 200);
    CHECK(post("aws/spot", R"({"action":"explode"})").status == 400);
    CHECK(post("aws/rebalance", "{}").status == 200);
    auto made = post("aws/events", R"({"Code":"system-maintenance","in":"1h","window":"2h","EventId":"instance-event-x"})");
    REQUIRE(made.status == 200);
    CHECK(made.body.find("instance-event-x") != std::string::npos);
    CHECK(post("aws/events", R"({"EventId":"instance-event-x"})").status == 409);
    CHECK(post("aws/events", R"({"in":"soon"})").status == 400);
    CHECK(post("aws/events/instance-event-x/cancel", "{}").status == 200);
    CHECK(post("aws/events/instance-event-x/complete", "{}").status == 404);  // no longer active
    CHECK(post("aws/events/nope/cancel", "{}").status == 404);
    const auto state = w.s->state_json();
    CHECK(state.find("\"aws\"") != std::string::npos);
    CHECK(state.find("hibernate") != std::string::npos);
    CHECK(state.find("canceled") != std::string::npos);
    CHECK(post("aws/spot", "", "DELETE").status == 200);
    CHECK(w.s->state_json().find("hibernate") == std::string::npos);
}

TEST_CASE("emulated AWS: a scenario file plays its aws steps - a malformed one is refused with the field", "[aws][emulator][file]") {
    auto config = forewarn::testing::load_scenario(std::string(FOREWARN_SOURCE_DIR) + "/examples/scenarios/aws_spot_and_reboot.json");
    REQUIRE(config.has_value());
    manual_clock clock;
    auto s = std::make_shared<scenario>(*config, clock);
    forewarn::aws::client_options o;
    o.endpoint = "http://169.254.169.254";
    o.clock = clock;
    o.rate_limit = false;
    client c(o, simulated_transport(s));
    auto doc = c.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->events.empty());
    s->advance(45s);  // the reboot is scheduled, the rebalance and the Spot notice given
    doc = c.fetch();
    REQUIRE(doc.has_value());
    REQUIRE(doc->events.size() == 3);
    CHECK(doc->events[0].id == "instance-event-0d59937288b749b32");
    CHECK(doc->events[0].status == forewarn::event_status::scheduled);
    CHECK(doc->events[0].affects("i-0123456789abcdef0"));
    CHECK(doc->events[1].type == forewarn::event_type::preempt);
    CHECK(doc->events[2].type == forewarn::event_type::rebalance);
    s->advance(20s);
    doc = c.fetch();
    REQUIRE(doc.has_value());
    CHECK(doc->events[0].status == forewarn::event_status::completed);

    for (const char* bad : {R"({"steps":[{"at":"1s","aws_spot":"now"}]})",
                            R"({"steps":[{"at":"1s","aws_event_end":{"EventId":"e","State":"done"}}]})",
                            R"({"steps":[{"at":"1s","aws_event_end":{"State":"completed"}}]})"}) {
        INFO(bad);
        auto parsed = forewarn::testing::parse_scenario(bad);
        REQUIRE_FALSE(parsed.has_value());
        CHECK(parsed.error().field.find("steps[0]") == 0);
    }
}

}  // namespace test_aws_simulated
