// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/transport.hpp> (spdlog's -inl files). Header-only: included at the
// end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and empty
// in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/transport.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE bool valid_header_name(std::string_view name) noexcept {
    if (name.empty()) return false;
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f) return false;
        switch (c) {  // RFC 9110's delimiters: not in a token
        case '"': case '(': case ')': case ',': case '/': case ':': case ';': case '<': case '=':
        case '>': case '?': case '@': case '[': case '\\': case ']': case '{': case '}': return false;
        default: break;
        }
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

}  // namespace detail

FOREWARN_INLINE std::optional<error> check_request(const http_request& request) {
    if (!detail::http_url(request.url))
        return error(errc::invalid_argument, detail::cat({"URL must start with http:// or https://: ", request.url}));
    for (const char c : request.url)
        if (c == '\r' || c == '\n' || c == '\0' || c == ' ')
            return error(errc::invalid_argument, "URL contains a space or a control character");
    if (request.timeout.count() <= 0) return error(errc::invalid_argument, "request timeout must be positive");
    if (request.connect_timeout.count() <= 0)
        return error(errc::invalid_argument, "request connect_timeout must be positive");
    for (const auto& h : request.headers) {
        if (detail::iequals(h.name, "X-Forwarded-For"))
            return error(errc::invalid_argument,
                         "X-Forwarded-For is never sent: the metadata service rejects requests that carry it");
        if (!detail::valid_header_name(h.name)) return error(errc::invalid_argument, detail::cat({"invalid header name \"", h.name, "\""}));
        if (!detail::valid_header_value(h.value))
            return error(errc::invalid_argument, detail::cat({"header ", h.name, " has a CR, LF or NUL in its value"}));
    }
    return std::nullopt;
}

FOREWARN_END_NAMESPACE

#endif
