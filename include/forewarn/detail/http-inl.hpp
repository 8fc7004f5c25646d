// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/http.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/http.hpp>
#include <forewarn/detail/strings.hpp>

#include <algorithm>

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

FOREWARN_INLINE FOREWARN_COLD std::string service_said(std::string_view body) {
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

FOREWARN_INLINE FOREWARN_COLD error status_error(int status, std::string_view what, std::string_view body, status_hints hints) {
    std::string text(what);
    switch (status) {
    case 400: text += ": 400 Bad Request"; break;
    case 401: text += ": 401 Unauthorized"; break;
    case 403: text += ": 403 Forbidden"; break;
    case 404: text += ": 404 Not Found"; break;
    default: text += cat({": HTTP ", num(status)}); break;
    }
    text += service_said(body);
    for (std::size_t i = 0; i < hints.count; ++i)
        if (hints.first[i].status == status) {
            text += " (";
            text += hints.first[i].why;
            text += ')';
            break;
        }
    return error(status == 404 ? errc::not_found : errc::http_status, std::move(text), status);
}

FOREWARN_INLINE std::string request_log_line(const http_request& req, const result<http_response>& r,
                                             std::chrono::nanoseconds took) {
    std::string line(to_string(req.method));
    line += ' ';
    line += req.url;
    line += " -> ";
    if (r)
        line += num(r->status);
    else
        line += r.error().describe();
    line += " (";
    line += num(std::chrono::duration_cast<std::chrono::milliseconds>(took).count());
    line += " ms)";
    return line;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
