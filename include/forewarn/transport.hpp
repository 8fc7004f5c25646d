// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// The methods forewarn's clients use: GET and POST (reads, approvals, etcd), PUT (session
/// tokens), HEAD (forewarn-watch check), PATCH (a client that patches a resource, as the Kubernetes
/// API is written to). POST, PUT and PATCH send `http_request::body`.
enum class http_method { get, post, put, head, patch };

/// "GET", "POST", "PUT", "HEAD" or "PATCH".
constexpr std::string_view to_string(http_method m) noexcept {
    switch (m) {
    case http_method::get: return "GET";
    case http_method::post: return "POST";
    case http_method::put: return "PUT";
    case http_method::head: return "HEAD";
    case http_method::patch: return "PATCH";
    }
    return "GET";
}

/// One header line. Names compare case-insensitively (see find_header).
struct http_header {
    std::string name;
    std::string value;
};

using http_headers = std::vector<http_header>;

/// The value of the first header called `name` (case-insensitive), or nullptr.
const std::string* find_header(const http_headers& headers, std::string_view name) noexcept;

/// What a client asks a transport to send. Timeouts are per request: a service's slow first call
/// may take two minutes, a hanging GET lasts timeout_sec plus a margin, a normal poll a few seconds.
struct http_request {
    http_method method = http_method::get;
    std::string url;  ///< absolute: "http://169.254.169.254/metadata/scheduledevents?api-version=..."
    http_headers headers;
    std::string body;  ///< sent as is for POST and PUT (Content-Type given in headers)
    std::chrono::milliseconds timeout{std::chrono::seconds(10)};         ///< whole exchange
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};  ///< TCP connect only
    std::size_t max_body = std::size_t(1) << 20;  ///< a longer body fails with errc::body_too_large
};

/// What came back. Any status is a successful send; interpreting it is the client's job.
struct http_response {
    int status = 0;
    http_headers headers;
    std::string body;

    const std::string* header(std::string_view name) const noexcept { return find_header(headers, name); }
};

/**
 * A transport sends one request at a time and can be cancelled from another thread.
 *
 * Requirements on T (checked by is_transport<T> and, in C++20, the concept forewarn::transport):
 *   result<http_response> t.send(const http_request&);  // transport errors as errc values
 *   void t.cancel() noexcept;  // thread-safe; the in-flight send and every later one return
 *                              // errc::cancelled promptly, until reset()
 *   void t.reset() noexcept;   // clears a cancel() so the transport can be used again
 * Cancellation is sticky so that a stop() racing with the start of a request cannot be lost.
 */
template <class T, class = void>
struct is_transport : std::false_type {};

template <class T>
struct is_transport<T, std::void_t<decltype(std::declval<T&>().send(std::declval<const http_request&>())), decltype(std::declval<T&>().cancel()), decltype(std::declval<T&>().reset())>> : std::bool_constant<std::is_same_v<decltype(std::declval<T&>().send(std::declval<const http_request&>())), result<http_response>> && noexcept(std::declval<T&>().cancel()) && noexcept(std::declval<T&>().reset())> {};

template <class T>
inline constexpr bool is_transport_v = is_transport<T>::value;

namespace detail {
/// A header name is a token: no separators, controls or spaces (RFC 9110 5.1).
bool valid_header_name(std::string_view name) noexcept;
/// A header value must not smuggle a second header line (CR, LF) or a NUL.
bool valid_header_value(std::string_view value) noexcept;
/// "http://" or "https://" (any case): the transports speak nothing else, this gives a clear error.
bool http_url(std::string_view url) noexcept;
}  // namespace detail

/**
 * What every forewarn transport refuses before sending, with errc::invalid_argument (a transport
 * of your own should too): a URL that is not http or https or holds a space or a control byte,
 * a timeout that is not positive, a bad header name or value, an X-Forwarded-For header (a
 * metadata service may reject requests that carry one). Nothing when the request can be sent.
 */
std::optional<error> check_request(const http_request& request);

#if FOREWARN_HAS_CONCEPTS
/// C++20 spelling of is_transport<T>.
template <class T>
concept transport = is_transport_v<T>;
#endif

// Short bodies that need nothing more stay here (the rule: docs/architecture.md).
inline const std::string* find_header(const http_headers& headers, std::string_view name) noexcept {
    for (const auto& h : headers)
        if (detail::iequals(h.name, name)) return &h.value;
    return nullptr;
}

/**
 * The transport a cloud's public API (an approval's call) is reached with, made from a client's
 * metadata transport `t`: a copy, unless the transport specializes this. curl_transport does: the
 * same options, with the environment's proxy honoured (the metadata services are never reached
 * through one, public APIs often only through one).
 */
template <class Transport>
struct public_api_transport {
    static Transport from(const Transport& t) { return t; }
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/transport-inl.hpp>
#endif
