// SPDX-License-Identifier: MIT
#pragma once

// What the emulated services shaped like EC2's instance metadata share (AWS, Alibaba, Tencent):
// paths under `<prefix>/latest/` with repeated slashes merged, X-Forwarded-For refused, faults
// taken before the answer and applied to it, control routes `<name>/...` that the scenario's steps
// of the service's kind play; IMDSv2-style session tokens; the 404 page; a Spot reclaim notice.
// Each service is one class derived from emulator_latest_service (aws_imds.hpp,
// alibaba_metadata.hpp, tencent_metadata.hpp). Rules: docs/emulator.md.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/faults.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/scenario_file.hpp>
#include <forewarn/testing/emulator/service.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// "//latest//meta-data" -> "/latest/meta-data": IMDS merges repeated slashes (the AWS SDK for
/// JavaScript sends "//latest/..." when its endpoint ends in '/', as its default does).
inline std::string emulator_collapse_slashes(std::string_view path) {
    std::string out;
    out.reserve(path.size());
    for (const char c : path)
        if (c != '/' || out.empty() || out.back() != '/') out += c;
    return out;
}

/// The 404 page of the /latest/ services.
inline testing::emulated_response emulator_latest_not_found() {
    return emulator_text_response(404, "<?xml version=\"1.0\" encoding=\"iso-8859-1\"?>\n<html><body>404 - Not Found</body></html>\n",
                                  "text/html");
}

/// A service under `<prefix>/latest/`. Every member is called with the engine's lock held.
class emulator_latest_service : public emulator_service {
public:
    using duration = testing::scenario_duration;

    std::string_view name() const noexcept final { return name_; }
    bool serves(std::string_view path) const noexcept final {
        const std::string p = emulator_collapse_slashes(path);
        return p.compare(0, prefix_.size(), prefix_) == 0 && p.compare(prefix_.size(), 8, "/latest/") == 0;
    }

    /// X-Forwarded-For is 403; otherwise the fault in force for the request is taken before the
    /// service answers (so a faulted token PUT still issues its token) and applied to the answer.
    testing::emulated_response handle(emulator_request& req) final {
        if (find_header(req.http.headers, "X-Forwarded-For")) return emulator_text_response(403, "Forbidden\n");
        const duration now = engine_.timeline().now();
        std::optional<testing::fault_spec> fault = engine_.take_fault(req);
        testing::emulated_response r = answer(req, emulator_collapse_slashes(req.target.path).substr(prefix_.size()), now);
        if (fault) emulator_faults::apply(*fault, r, req.entry);
        return r;
    }

    /// Its routes `<name>/...` but GETs (GET state tells its state).
    std::optional<testing::emulated_response> control(const std::string& route, const std::string& method,
                                                      const emulator_request& req) final {
        if (route.compare(0, name_.size(), name_) != 0 || (route.size() > name_.size() && route[name_.size()] != '/'))
            return std::nullopt;
        if (method == "GET") return std::nullopt;
        return control_body(route, method, req.http.body, engine_.timeline().now());
    }

    /// A scenario file's step of its kind: its control route, played at the step's time (a
    /// refusal is logged).
    bool apply_step(const testing::scenario_step& s, duration t) final {
        if (s.what != step_) return false;
        const auto r = control_body(s.route, "POST", s.route_body, t);
        if (r.status != 200) engine_.log(std::string(name_) + ": the scenario's " + s.route + " step was refused: " + r.body);
        return true;
    }

protected:
    /// `name` and `prefix` ("" or "/alibaba") are string literals.
    emulator_latest_service(emulator_engine& engine, std::string_view name, std::string_view prefix,
                            testing::scenario_step::kind step) noexcept
        : engine_(engine), name_(name), prefix_(prefix), step_(step) {}

    /// Answers a request; `path` is "/latest/...", slashes merged, without the prefix.
    virtual testing::emulated_response answer(emulator_request& req, const std::string& path, duration now) = 0;
    /// Answers one of its control routes ("aws/spot"); `from` is the scenario time it counts from
    /// (now, or a step's time), `json` the body ("" is {}).
    virtual testing::emulated_response control_body(const std::string& route, const std::string& method,
                                                    const std::string& json, duration from) = 0;

    emulator_engine& engine_;

private:
    std::string_view name_;
    std::string_view prefix_;
    testing::scenario_step::kind step_;
};

/// Session tokens as IMDSv2 and Alibaba's hardened mode issue them: a PUT carrying a TTL header
/// (1 to 21600 seconds) gets a printable token that a GET must carry until it expires, in scenario
/// time. The header names are the service's; the names are string literals.
class emulator_session_tokens {
public:
    using duration = testing::scenario_duration;

    /// `echo_ttl`: the token's answer carries the TTL header back, as IMDS's does.
    emulator_session_tokens(emulator_engine& engine, std::string_view service, std::string_view ttl_header,
                            std::string_view token_header, bool echo_ttl) noexcept
        : engine_(engine), service_(service), ttl_header_(ttl_header), token_header_(token_header), echo_ttl_(echo_ttl) {}

    /// The token path: 405 unless a PUT, 400 unless the TTL header holds 1..21600, else 200
    /// text/plain with a new token valid that many seconds from `now`.
    testing::emulated_response issue(const http_request& request, duration now) {
        if (request.method != http_method::put) return emulator_text_response(405, "Method Not Allowed\n");
        const std::string* ttl_text = find_header(request.headers, ttl_header_);
        long long ttl = 0;
        if (ttl_text) {
            char* end = nullptr;
            ttl = std::strtoll(ttl_text->c_str(), &end, 10);
            if (end == ttl_text->c_str() || *end != '\0') ttl = 0;
        }
        if (ttl < 1 || ttl > 21600) return emulator_text_response(400, "Bad Request\n");
        ++issued_;
        std::string token = "AQAEA" + token_body(service_, issued_) + "==";
        tokens_[token] = now + std::chrono::seconds(ttl);
        engine_.log(std::string(service_) + ": session token issued for " + std::to_string(ttl) + " s");
        testing::emulated_response r = emulator_text_response(200, std::move(token), "text/plain");
        if (echo_ttl_) r.headers.push_back({std::string(ttl_header_), std::to_string(ttl)});
        return r;
    }

    /// Every other path: 405 unless a GET, 401 unless it carries a token unexpired at `now`;
    /// nothing when the request may go on.
    std::optional<testing::emulated_response> refuse(const http_request& request, duration now) const {
        if (request.method != http_method::get) return emulator_text_response(405, "Method Not Allowed\n");
        const std::string* token = find_header(request.headers, token_header_);
        const auto it = token ? tokens_.find(*token) : tokens_.end();
        if (it == tokens_.end() || now >= it->second) return emulator_text_response(401, "Unauthorized\n");
        return std::nullopt;
    }

    /// Forgets every token issued: the next request with one is a 401 (an instance stop and start).
    void expire_all() {
        tokens_.clear();
        engine_.log(std::string(service_) + ": every session token expired");
    }
    void restart() noexcept {
        tokens_.clear();
        issued_ = 0;
    }
    std::size_t issued() const noexcept { return issued_; }

private:
    // A token body: printable, unique per service and issue, not guessable from the count alone
    // in a test (one service's token is never another's).
    static std::string token_body(std::string_view service, std::size_t n) {
        static constexpr char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        std::uint64_t h = 1469598103934665603ull ^ (n * 0x9E3779B97F4A7C15ull);
        for (const char c : service) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        std::string out;
        for (int i = 0; i < 40; ++i) {
            out += digits[h % 62];
            h = h * 6364136223846793005ull + 1442695040888963407ull;
        }
        return out;
    }

    emulator_engine& engine_;
    std::string_view service_, ttl_header_, token_header_;
    bool echo_ttl_;
    std::map<std::string, duration> tokens_;  // token -> expiry (scenario time)
    std::size_t issued_ = 0;
};

/// A Spot reclaim notice as Alibaba's and Tencent's `spot/termination-time` give it: the scenario
/// time the instance is reclaimed at, or none. Its control route is `<service>/spot`.
class emulator_reclaim_notice {
public:
    using duration = testing::scenario_duration;

    /// `service` is a string literal; `default_in` is how far ahead a POST without "in" puts it.
    emulator_reclaim_notice(emulator_engine& engine, std::string_view service, duration default_in) noexcept
        : engine_(engine), service_(service), default_in_(default_in) {}

    /// The reclaim `in` after `from` (scenario time).
    void set(duration from, duration in) {
        at_ = from + in;
        engine_.log(std::string(service_) + ": spot reclaim at " + format_iso8601(engine_.timeline().wall_at(*at_)) + " (in " +
                    emulator_format_duration(in) + ")");
    }
    void clear() noexcept { at_.reset(); }

    /// POST <service>/spot {"in": "5m"}: the reclaim `in` after `from` (default: default_in);
    /// DELETE <service>/spot withdraws it.
    testing::emulated_response control(const std::string& method, const std::string& json, duration from) {
        if (method == "DELETE") {
            clear();
            return emulator_control_ok();
        }
        auto doc = parse_json(json.empty() ? std::string_view("{}") : std::string_view(json));
        if (!doc) return emulator_control_error(400, doc.error().describe());
        if (!doc->IsObject()) return emulator_control_error(400, "expected a JSON object");
        duration in = default_in_;
        if (const auto* v = json_member(*doc, "in")) {
            auto d = emulator_json_duration(*v, "in");
            if (!d) return emulator_control_error(400, d.error().describe(), "in");
            in = *d;
        }
        set(from, in);
        return emulator_control_ok();
    }

    /// termination-time: 404 while none, else 200 text/plain with the wall time as `format` writes it.
    template <class Format>
    testing::emulated_response answer(Format&& format) const {
        if (!at_) return emulator_latest_not_found();
        return emulator_text_response(200, format(engine_.timeline().wall_at(*at_)), "text/plain");
    }

    /// "spot": the reclaim time in UTC (ISO 8601), or null.
    void write_state(json_writer& w) const {
        w.key("spot");
        if (at_)
            w.string(format_iso8601(engine_.timeline().wall_at(*at_)));
        else
            w.null();
    }

private:
    emulator_engine& engine_;
    std::string_view service_;
    duration default_in_;
    std::optional<duration> at_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
