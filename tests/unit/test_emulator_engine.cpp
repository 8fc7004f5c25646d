// SPDX-License-Identifier: MIT
// The emulator's engine as a new service sees it (testing/emulator/engine.hpp, service.hpp): the
// router hands it the paths it serves, the timeline its own transitions instant by instant, the
// control API its routes, GET state its members, and faults name it. No sockets, no sleep.
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/emulator/control_api.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace test_emulator_engine {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
namespace ed = forewarn::detail;
using forewarn::http_method;
using forewarn::http_request;
using forewarn::testing::emulated_response;
using forewarn::testing::scenario_duration;

namespace {

// A service of its own: answers /echo/..., changes by itself every 10 s, has a control route.
class echo_service final : public ed::emulator_service {
public:
    explicit echo_service(ed::emulator_engine& e) : engine_(e) {}
    std::string_view name() const noexcept override { return "echo"; }
    bool serves(std::string_view path) const noexcept override { return path.compare(0, 6, "/echo/") == 0; }
    emulated_response handle(ed::emulator_request& req) override {
        auto r = ed::emulator_text_response(200, req.target.path + " " + std::to_string(ticks));
        if (auto f = engine_.take_fault(req)) ed::emulator_faults::apply(*f, r, req.entry);
        return r;
    }
    void restart() override {
        ticks = 0;
        reached.clear();
    }
    std::optional<scenario_duration> next_transition() const override { return scenario_duration(10s) * (ticks + 1); }
    void reach(scenario_duration t) override {
        reached.push_back(t);
        if (t >= scenario_duration(10s) * (ticks + 1)) ++ticks;
    }
    std::optional<emulated_response> control(const std::string& route, const std::string& method,
                                             const ed::emulator_request&) override {
        if (route != "echo/ping" || method != "POST") return std::nullopt;
        return ed::emulator_control_ok();
    }
    void write_state(ed::json_writer& w) const override {
        w.key("echo_ticks");
        w.int64(ticks);
    }

    int ticks = 0;
    std::vector<scenario_duration> reached;

private:
    ed::emulator_engine& engine_;
};

http_request get(const std::string& url) {
    http_request r;
    r.url = url;
    return r;
}

}  // namespace

TEST_CASE("a new service plugs into the engine: routes, transitions, control, state, faults", "[emulator][engine]") {
    forewarn::testing::manual_clock clock;
    ed::emulator_engine engine{forewarn::testing::scenario_config{}, clock};
    echo_service echo(engine);
    ed::emulator_control_api control(engine);
    engine.add_service(echo);
    engine.set_control(control);
    std::unique_lock<std::mutex> lock(engine.mutex());
    engine.restart();

    auto r = engine.route(get("http://127.0.0.1/echo/a?x=1"), lock, nullptr);
    CHECK(r.status == 200);
    CHECK(r.body == "/echo/a 0");
    CHECK(engine.route(get("/elsewhere"), lock, nullptr).status == 404);
    REQUIRE(engine.requests().size() == 2);
    CHECK(engine.requests()[0].service == "echo");
    CHECK(engine.requests()[1].service == "other");

    // 25 s in one jump: its transitions at 10 s and 20 s, each at its own instant, in order.
    engine.advance(25s);
    CHECK(echo.reached == std::vector<scenario_duration>{10s, 20s});
    CHECK(engine.route(get("/echo/b"), lock, nullptr).body == "/echo/b 2");

    http_request ping = get("/emulator/v1/echo/ping");
    ping.method = http_method::post;
    CHECK(engine.route(ping, lock, nullptr).status == 200);
    CHECK(engine.route(get("/emulator/v1/echo/ping"), lock, nullptr).status == 404);  // its route is POST only
    auto state = ed::parse_json(control.state_json());
    REQUIRE(state.has_value());
    CHECK((*state)["echo_ticks"].GetInt() == 2);
    CHECK((*state)["time_ms"].GetInt64() == 25000);

    forewarn::testing::fault_spec f;
    f.service = "echo";
    f.status = 503;
    engine.add_fault(f);
    CHECK(engine.route(get("/echo/c"), lock, nullptr).status == 503);
    CHECK(engine.requests().back().fault == "status 503");
    CHECK(engine.route(get("/echo/c"), lock, nullptr).status == 200);  // count 1: used up

    engine.restart();
    CHECK(echo.ticks == 0);
    CHECK(engine.requests().empty());
    CHECK(engine.timeline().now() == 0ms);
}

}  // namespace test_emulator_engine
