// SPDX-License-Identifier: MIT
#pragma once

// The metadata services under /latest/ (each cloud's endpoint.hpp says whether it is one): a GET
// whose 404 means none, under a session token where the service hands one out on
// `PUT /latest/api/token`: asked for with a TTL header, sent on every request, renewed on the
// client's clock before it expires and once after a 401. Never logged.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The longest session token the services under /latest/ that have them grant, in seconds (six hours).
inline constexpr int max_session_token_ttl = 21600;

/// How a /latest/ service is asked.
struct latest_settings {
    std::string token_header;      ///< the cloud's token_header; empty: the service has no tokens
    std::string token_ttl_header;  ///< the cloud's token_ttl_header: the lifetime asked for
    std::string token_kind;    ///< its name in a log line (the cloud's name for its token)
    std::chrono::seconds token_ttl{max_session_token_ttl};
    bool allow_plain = false;  ///< a token PUT refused with 403, 404 or 405: ask without one
    std::chrono::milliseconds timeout{5000}, connect_timeout{2000};
    std::size_t max_body = std::size_t(1) << 20;
    /// What the service's refusals mean, in the error of a status other than 200 (status_error).
    status_hints hints;
};

/// A Spot (preemptible) instance's reclaim notice at `when`, as a service gives it on a
/// `termination-time` path (the cloud's termination_time_path): id "spot-termination", type
/// preempt, raw_type "termination-time", status scheduled (it cannot be delayed or approved).
inline event spot_termination(std::chrono::system_clock::time_point when, std::string_view wire) {
    event e;
    e.id = "spot-termination";
    e.type = event_type::preempt;
    e.raw_type = "termination-time";
    e.status = event_status::scheduled;
    e.not_before = when;
    e.description = "Spot instance reclaimed at " + std::string(wire);
    return e;
}

/// The same from the time as parsed: the event, or the parse's error as the document's
/// (errc::invalid_document at the field "termination-time").
inline result<event> parsed_spot_termination(result<std::chrono::system_clock::time_point> when, std::string_view wire) {
    if (when) return spot_termination(*when, wire);
    error e = std::move(when).error();
    e.code = errc::invalid_document;
    e.field = "termination-time";
    return e;
}

class latest_metadata {
public:
    explicit latest_metadata(latest_settings s) : s_(std::move(s)) {}

    /// A token is a short printable ASCII string; anything else is not the metadata service talking.
    static constexpr bool acceptable(std::string_view t) noexcept {
        if (t.empty() || t.size() > 4096) return false;
        for (const char c : t)
            if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7F) return false;
        return true;
    }
    /// A TTL the services accept: 1..21600 s.
    static result<void> check_ttl(std::chrono::seconds ttl, std::string_view option) {
        if (ttl.count() >= 1 && ttl.count() <= max_session_token_ttl) return {};
        return error(errc::invalid_argument, std::string(option) + ": " + std::to_string(ttl.count()) + " s is outside 1..21600");
    }

    std::size_t tokens_fetched() const noexcept { return fetched_; }

    /// A token that is good for a while yet: renewed when less than a tenth of its life (at most
    /// a minute) is left, so that a request never goes out with one about to expire.
    template <class Exchange>
    result<void> ensure_token(Exchange& x, const std::string& endpoint) {
        if (s_.token_header.empty() || plain_) return {};
        const auto now = x.clock().now();
        if (token_ && now < renew_at_) return {};
        http_request req = request(http_method::put, endpoint + std::string(latest_token_path));
        req.headers.push_back({s_.token_ttl_header, std::to_string(s_.token_ttl.count())});
        auto answer = send(x, req, "PUT api/token");
        if (!answer) {
            const int status = answer.error().http_status;
            if (s_.allow_plain && (status == 403 || status == 404 || status == 405)) {
                plain_ = true;
                x.log()(log_level::warn, s_.token_kind + " token refused (HTTP " + std::to_string(status) + "): asking without one", req.url);
                return {};
            }
            return std::move(answer).error();
        }
        const auto token = trim(answer->body);
        if (!acceptable(token)) return error(errc::invalid_document, "PUT api/token: the answer is not a session token").at_url(req.url);
        token_ = std::string(token);
        ++fetched_;
        const auto life = std::chrono::duration_cast<clock::duration>(s_.token_ttl);
        renew_at_ = clock::saturating_add(now, life - detail::smaller(life / 10, std::chrono::duration_cast<clock::duration>(std::chrono::minutes(1))));
        return {};
    }

    /// GET endpoint + `path` with the token: the answer on 200, nothing on 404, an error otherwise.
    template <class Exchange>
    result<std::optional<http_response>> get(Exchange& x, const std::string& endpoint, std::string_view path) {
        const auto at = path.rfind("meta-data/");
        const std::string what = "GET " + std::string(at == std::string_view::npos ? path : path.substr(at + 10));
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (auto t = ensure_token(x, endpoint); !t) return std::move(t).error();
            http_request req = request(http_method::get, endpoint + std::string(path));
            if (token_ && !plain_) req.headers.push_back({s_.token_header, *token_});
            auto answer = send(x, req, what);
            if (answer) return std::optional<http_response>(std::move(*answer));
            if (answer.error().code == errc::not_found) return std::optional<http_response>();
            if (answer.error().http_status != 401 || attempt > 0 || !token_ || plain_) return std::move(answer).error();
            token_.reset();  // expired or revoked early: one fresh token, one more try
        }
        return error(errc::http_status, what + ": 401 Unauthorized with a fresh token", 401).at_url(endpoint + std::string(path));
    }

    /// meta-data/instance-id, which every /latest/ service has: what events name this instance.
    template <class Exchange>
    result<std::string> get_instance_id(Exchange& x, const std::string& endpoint) {
        const std::string_view path = latest_instance_id_path;
        auto r = get(x, endpoint, path);
        if (!r) return std::move(r).error();
        const auto id = *r ? trim((*r)->body) : std::string_view();
        if (!id.empty()) return std::string(id);
        error e(*r ? errc::empty_body : errc::not_found, *r ? "empty instance-id" : "the instance metadata has no instance-id");
        e.http_status = *r ? 200 : 404;
        e.field = "instance-id";
        return std::move(e).at_url(endpoint + std::string(path));
    }

private:
    http_request request(http_method method, std::string url) const {
        return metadata_request(method, std::move(url), s_.timeout, s_.connect_timeout, s_.max_body);
    }
    // Under the client's retry rules. Its log line names the method, URL and status: never a
    // header, so never the token.
    template <class Exchange>
    result<http_response> send(Exchange& x, const http_request& req, std::string_view what) {
        return x.send(0, req, [&](http_response& r) -> result<http_response> {
            if (r.status == 200) return std::move(r);
            return status_error(r.status, what, r.body, s_.hints).at_url(req.url);
        });
    }

    latest_settings s_;
    std::optional<std::string> token_;
    clock::time_point renew_at_{};
    std::size_t fetched_ = 0;
    bool plain_ = false;
};

}  // namespace detail
FOREWARN_END_NAMESPACE

