// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>

#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

/// ASCII case-insensitive equality (header names, wire enum strings); no locale.
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

/// The text without leading and trailing spaces, tabs, CR and LF.
constexpr std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// "host:port" of an absolute http(s) URL ("" when it has none); used to key per-host limits.
constexpr std::string_view url_authority(std::string_view url) noexcept {
    const auto scheme = url.find("://");
    if (scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
    std::size_t end = 0;  // a loop: find_first_of scans the set once per character
    while (end < url.size() && url[end] != '/' && url[end] != '?' && url[end] != '#') ++end;
    url = url.substr(0, end);
    const auto at = url.rfind('@');
    if (at != std::string_view::npos) url.remove_prefix(at + 1);
    return url;
}

}  // namespace detail
FOREWARN_END_NAMESPACE
