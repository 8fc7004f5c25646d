// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/gce/compute.hpp> (spdlog's -inl files). Header-only: included at the
// end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and empty in
// a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/gce/compute.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/transport/retry.hpp>

#include <forewarn/detail/sha256.hpp>

#include <atomic>
#include <cstdint>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

FOREWARN_INLINE result<access_token> parse_access_token(std::string_view body) {
    auto doc = detail::parse_json(body);
    if (!doc) return std::move(doc).error();
    const rapidjson::Value& root = *doc;
    if (!root.IsObject()) return detail::json_type_error("token", "object", root);
    const auto* token = detail::json_member(root, "access_token");
    if (!token || !token->IsString() || token->GetStringLength() == 0)
        return detail::json_shape_error("token.access_token", "missing, empty or not a string");
    const auto* expires = detail::json_member(root, "expires_in");
    if (!expires || !expires->IsInt64() || expires->GetInt64() < 0)
        return detail::json_shape_error("token.expires_in", "missing or not a non-negative integer");
    access_token t;
    t.token = std::string(detail::json_string_view(*token));
    t.expires_in = std::chrono::seconds(expires->GetInt64());
    return t;
}

FOREWARN_INLINE std::optional<std::string> google_error_text(std::string_view body) {
    auto doc = detail::parse_json(body.substr(0, std::size_t(64) << 10));
    if (!doc || !doc->IsObject()) return std::nullopt;
    const auto* err = detail::json_member(*doc, "error");
    if (!err || !err->IsObject()) return std::nullopt;
    const auto* message = detail::json_member(*err, "message");
    if (!message || !message->IsString()) return std::nullopt;
    std::string out(detail::json_string_view(*message).substr(0, 1024));
    if (const auto* errors = detail::json_member(*err, "errors"); errors && errors->IsArray() && !errors->Empty()) {
        const auto& first = (*errors)[0];
        if (first.IsObject())
            if (const auto* reason = detail::json_member(first, "reason"); reason && reason->IsString())
                out += " (" + std::string(detail::json_string_view(*reason).substr(0, 128)) + ")";
    }
    return out;
}

FOREWARN_INLINE std::string perform_maintenance_url(std::string_view endpoint, std::string_view project, std::string_view zone,
                                                    std::string_view instance, std::string_view request_id) {
    std::string base(endpoint);
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/compute/v1/projects/" + std::string(project) + "/zones/" + std::string(zone) + "/instances/" +
           std::string(instance) + "/performMaintenance?requestId=" + std::string(request_id);
}

}  // namespace gce

namespace detail {

FOREWARN_INLINE std::string uuid_v4() {
    // An idempotency key, not a secret: the bytes of a SHA-256 over the time, a counter and an
    // address (no <random>, which every program including forewarn.hpp would parse).
    static std::atomic<std::uint64_t> counter{0};
    const auto n = counter.fetch_add(1, std::memory_order_relaxed);
    const auto t = std::chrono::high_resolution_clock::now().time_since_epoch().count();
    const auto w = std::chrono::system_clock::now().time_since_epoch().count();
    const void* here = &n;
    sha256 h;
    h.update(&n, sizeof n);
    h.update(&t, sizeof t);
    h.update(&w, sizeof w);
    h.update(&here, sizeof here);
    auto b = h.finish();
    b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
    b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
    const std::string hex = hex_lower(b.data(), 16);
    return hex.substr(0, 8) + '-' + hex.substr(8, 4) + '-' + hex.substr(12, 4) + '-' + hex.substr(16, 4) + '-' + hex.substr(20, 12);
}

FOREWARN_INLINE result<void> gce_perform_maintenance(function_ref<result<http_response>(const http_request&)> send,
                                                     interruptible_sleep& sleep, const logger& log, const std::string& url,
                                                     const std::string& token) {
    // Google's rules (429, every 5xx, a failed connection, a timeout), three tries, with the
    // clients' backoff; no time limit but the tries' own timeouts.
    retry_options o;
    o.max_attempts = 3;
    o.max_elapsed = std::chrono::minutes(10);
    const retry_policy policy(retry_rules::gce, o);
    const std::string where = url.substr(0, url.find('?'));
    auto attempt = [&]() -> result<void> {
        http_request req;
        req.method = http_method::post;
        req.url = url;
        req.headers.push_back({"Authorization", "Bearer " + token});
        req.headers.push_back({"Content-Type", "application/json"});
        req.timeout = std::chrono::seconds(15);
        req.connect_timeout = std::chrono::seconds(5);
        req.max_body = std::size_t(256) << 10;
        auto r = send(req);
        if (r && r->status >= 200 && r->status < 300) {
            if (log.enabled(log_level::info)) log(log_level::info, "Compute performMaintenance: accepted", url);
            return {};
        }
        error e;
        if (!r) {
            e = std::move(r).error();
            if (e.code == errc::cancelled) return e;
            e.message = "Compute performMaintenance: " + e.message;
        } else {
            const auto said = gce::google_error_text(r->body);
            e = error(errc::http_status,
                      "Compute performMaintenance: " + std::to_string(r->status) + " " + said.value_or("(no error object)"),
                      r->status);
        }
        e.url = where;
        return e;
    };
    auto done = policy.run(attempt, sleep, log);
    // A cancel, in a pause or in a try (whose transport's words the try passes on bare): one sentence.
    if (!done && done.error().code == errc::cancelled)
        return error(errc::cancelled, "Compute performMaintenance: " + std::string(retry_policy::cancelled_message));
    return done;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
