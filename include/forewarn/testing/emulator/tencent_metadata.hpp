// SPDX-License-Identifier: MIT
#pragma once

// Tencent Cloud CVM's instance metadata as the emulator plays it, under the prefix /tencent: its
// paths are AWS's (/latest/...), so one emulator serves both. No token. The instance id and the
// Spot reclaim notice (spot/termination-time, in China Standard Time). Rules: docs/emulator.md
// ("Tencent Cloud CVM metadata"); what it shares with AWS is latest_metadata.hpp's.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/latest_metadata.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <string>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// "2018-08-18 12:05:33": how Tencent writes a time, in China Standard Time (UTC+8), no zone.
inline std::string emulator_tencent_time(std::chrono::system_clock::time_point t) {
    std::string s = format_iso8601(t + std::chrono::hours(8));  // "2018-08-18T12:05:33Z"
    s[s.find('T')] = ' ';
    s.pop_back();
    return s;
}

/// The emulated Tencent CVM metadata: /tencent/latest/..., its control routes "tencent/...".
class emulator_tencent final : public emulator_latest_service {
public:
    explicit emulator_tencent(emulator_engine& engine)
        : emulator_latest_service(engine, "tencent", "/tencent", testing::scenario_step::kind::tencent),
          spot_(engine, "tencent", std::chrono::minutes(2)) {}

    /// The Spot instance is reclaimed `in` from now.
    void spot(duration in) { spot_.set(engine_.timeline().now(), in); }
    void clear_spot() noexcept { spot_.clear(); }

    void restart() override { spot_.clear(); }

    void write_state(json_writer& w) const override {
        w.key("tencent");
        w.begin_object();
        spot_.write_state(w);
        w.end_object();
    }

private:
    testing::emulated_response answer(emulator_request& req, const std::string& path, duration) override {
        if (req.http.method != http_method::get) return emulator_text_response(405, "Method Not Allowed\n");
        if (path == "/latest/meta-data/instance-id") return emulator_text_response(200, instance_id(req.vm->name), "text/plain");
        if (path == "/latest/meta-data/spot/termination-time") return spot_.answer(emulator_tencent_time);
        return emulator_latest_not_found();
    }

    testing::emulated_response control_body(const std::string& route, const std::string& method, const std::string& json,
                                            duration from) override {
        if (route == "tencent/spot") return spot_.control(method, json, from);
        return emulator_control_error(404, "no such route");
    }

    emulator_reclaim_notice spot_;

    /// A VM's id as Tencent writes them, "ins-" and letters or digits: the name when it is one
    /// already, else "ins-" and the name's letters and digits ("vm0" is "ins-vm0").
    static std::string instance_id(const std::string& name) {
        if (name.rfind("ins-", 0) == 0) return name;
        std::string id = "ins-";
        for (const char c : name)
            if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) id += c;
        return id;
    }
};

}  // namespace detail
FOREWARN_END_NAMESPACE
