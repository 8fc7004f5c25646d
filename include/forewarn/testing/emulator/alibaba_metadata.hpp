// SPDX-License-Identifier: MIT
#pragma once

// Alibaba Cloud ECS's instance metadata as the emulator plays it, in hardened mode (every GET
// carries a token), under the prefix /alibaba: its paths are AWS's (/latest/...), so one emulator
// serves both. The instance id and the Spot reclaim notice (instance/spot/termination-time).
// Rules: docs/emulator.md ("Alibaba Cloud ECS metadata"); what it shares with AWS is
// latest_metadata.hpp's.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/latest_metadata.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/time.hpp>

#include <chrono>
#include <cstdint>
#include <string>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The emulated Alibaba ECS metadata: /alibaba/latest/..., its control routes "alibaba/...".
class emulator_alibaba final : public emulator_latest_service {
public:
    explicit emulator_alibaba(emulator_engine& engine)
        : emulator_latest_service(engine, "alibaba", "/alibaba", testing::scenario_step::kind::alibaba),
          tokens_(engine, "alibaba", "X-aliyun-ecs-metadata-token-ttl-seconds", "X-aliyun-ecs-metadata-token", false),
          spot_(engine, "alibaba", std::chrono::minutes(5)) {}

    /// The Spot instance is reclaimed `in` from now.
    void spot(duration in) { spot_.set(engine_.timeline().now(), in); }
    void clear_spot() noexcept { spot_.clear(); }
    /// Forgets every token issued: the next request with one is a 401.
    void expire_tokens() { tokens_.expire_all(); }
    std::size_t tokens_issued() const noexcept { return tokens_.issued(); }

    void restart() override {
        tokens_.restart();
        spot_.clear();
    }

    void write_state(json_writer& w) const override {
        w.key("alibaba");
        w.begin_object();
        w.key("tokens_issued");
        w.int64(static_cast<std::int64_t>(tokens_.issued()));
        spot_.write_state(w);
        w.end_object();
    }

private:
    testing::emulated_response answer(emulator_request& req, const std::string& path, duration now) override {
        if (path == "/latest/api/token") return tokens_.issue(req.http, now);
        if (auto refused = tokens_.refuse(req.http, now)) return std::move(*refused);
        if (path == "/latest/meta-data/instance-id") return emulator_text_response(200, req.vm->name, "text/plain");
        if (path == "/latest/meta-data/instance/spot/termination-time")
            return spot_.answer([](std::chrono::system_clock::time_point t) { return format_iso8601(t); });  // 2015-01-05T18:02:00Z
        return emulator_latest_not_found();
    }

    testing::emulated_response control_body(const std::string& route, const std::string& method, const std::string& json,
                                            duration from) override {
        if (route == "alibaba/spot") return spot_.control(method, json, from);
        if (route == "alibaba/tokens" && method == "DELETE") {
            expire_tokens();
            return emulator_control_ok();
        }
        return emulator_control_error(404, "no such route");
    }

    emulator_session_tokens tokens_;
    emulator_reclaim_notice spot_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
