// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/http.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/http.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE std::optional<std::chrono::system_clock::time_point> service_time_of(const http_response& r) {
    const std::string* date = r.header("Date");
    if (!date) return std::nullopt;
    auto t = parse_rfc1123(trim(*date));
    if (!t) return std::nullopt;
    return *t;
}

FOREWARN_INLINE std::string service_said(std::string_view body) {
    constexpr std::size_t most = 200;
    body = trim(body);
    if (body.empty()) return {};
    std::string out = ": ";
    std::size_t n = (std::min)(body.size(), most);
    // Never cut a UTF-8 sequence: back off to the start of the one at the cut.
    if (n < body.size())
        while (n > 0 && (static_cast<unsigned char>(body[n]) & 0xC0) == 0x80) --n;
    for (std::size_t i = 0; i < n; ++i) {
        const auto b = static_cast<unsigned char>(body[i]);
        out += (b < 0x20 || b == 0x7F) ? ' ' : body[i];
    }
    if (n < body.size()) out += "...";
    return out;
}

FOREWARN_INLINE std::string request_log_line(const http_request& req, const result<http_response>& r,
                                             std::chrono::nanoseconds took) {
    std::string line(to_string(req.method));
    line += ' ';
    line += req.url;
    line += " -> ";
    line += r ? std::to_string(r->status) : r.error().describe();
    line += " (";
    line += std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count());
    line += " ms)";
    return line;
}

FOREWARN_INLINE bool valid_header_name(std::string_view name) noexcept {
    if (name.empty()) return false;
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f) return false;
        if (std::string_view("\"(),/:;<=>?@[\\]{}").find(c) != std::string_view::npos) return false;
    }
    return true;
}

FOREWARN_INLINE bool valid_header_value(std::string_view value) noexcept {
    for (const char c : value)
        if (c == '\r' || c == '\n' || c == '\0') return false;
    return true;
}

FOREWARN_INLINE bool http_url(std::string_view url) noexcept {
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos) return false;
    const auto s = url.substr(0, scheme);
    return iequals(s, "http") || iequals(s, "https");
}

FOREWARN_INLINE std::optional<error> check_request(const http_request& request) {
    if (!http_url(request.url))
        return error(errc::invalid_argument, "URL must start with http:// or https://: " + request.url);
    if (request.url.find_first_of(std::string_view("\r\n\0 ", 4)) != std::string::npos)
        return error(errc::invalid_argument, "URL contains a space or a control character");
    if (request.timeout.count() <= 0) return error(errc::invalid_argument, "request timeout must be positive");
    if (request.connect_timeout.count() <= 0)
        return error(errc::invalid_argument, "request connect_timeout must be positive");
    for (const auto& h : request.headers) {
        if (iequals(h.name, "X-Forwarded-For"))
            return error(errc::invalid_argument,
                         "X-Forwarded-For is never sent: the metadata service rejects requests that carry it");
        if (!valid_header_name(h.name)) return error(errc::invalid_argument, "invalid header name \"" + h.name + "\"");
        if (!valid_header_value(h.value))
            return error(errc::invalid_argument, "header " + h.name + " has a CR, LF or NUL in its value");
    }
    return std::nullopt;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
