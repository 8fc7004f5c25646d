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

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
