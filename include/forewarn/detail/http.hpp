// SPDX-License-Identifier: MIT
#pragma once

// What every client does with an answer beyond its status: the service's own time, and the
// debug line of one exchange.

#include <forewarn/config.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The service's own time from an answer's Date header (RFC 1123), when it sent a valid one.
std::optional<std::chrono::system_clock::time_point> service_time_of(const http_response& r);

/// What a service said in an error answer's body, for an error message: ": " and the body on
/// one line (control bytes as spaces, at most 200 bytes, cut at a UTF-8 boundary), or "" when
/// it said nothing.
std::string service_said(std::string_view body);

/// A cloud's words for one status it explains: `why` goes in parentheses after the status.
struct status_hint {
    int status;
    std::string_view why;
};

/// A cloud's hints, as data (a static array of them, or a few made at the call).
struct status_hints {
    const status_hint* first = nullptr;
    std::size_t count = 0;
    constexpr status_hints() = default;
    template <std::size_t N>
    constexpr status_hints(const status_hint (&hints)[N]) : first(hints), count(N) {}  // NOLINT: implicit on purpose
};

/**
 * The error of an answer whose status the client does not take, written the same way for every
 * cloud: "WHAT: 404 Not Found: what the service said (the cloud's hint)". 404 is errc::not_found,
 * any other status errc::http_status; both carry the status. 400, 401, 403 and 404 are named,
 * other statuses read "HTTP 503".
 */
error status_error(int status, std::string_view what, std::string_view body, status_hints hints = {});

/// A request with a client's limits: its total timeout, a connect timeout no longer than that, a
/// body cap. What every client (and detect_cloud's probes) sends, built in one place.
inline http_request metadata_request(http_method method, std::string url, std::chrono::milliseconds timeout,
                                     std::chrono::milliseconds connect_timeout, std::size_t max_body,
                                     http_headers headers = {}) {
    http_request req;
    req.method = method;
    req.url = std::move(url);
    req.headers = std::move(headers);
    req.timeout = timeout;
    req.connect_timeout = detail::smaller(connect_timeout, timeout);
    req.max_body = max_body;
    return req;
}

/// "GET https://... -> 200 (3 ms)" for a debug log line.
std::string request_log_line(const http_request& req, const result<http_response>& r, std::chrono::nanoseconds took);

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/http-inl.hpp>
#endif
