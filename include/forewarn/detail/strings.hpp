// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

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

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// An integer as decimal text (what std::to_string writes), for cat(): a view of it lives until
/// the end of the full expression that made it.
class num {
public:
    template <class Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
    explicit num(Int v) noexcept {
        const auto magnitude = static_cast<unsigned long long>(v);  // modulo 2^64: exact for any value
        if constexpr (std::is_signed_v<Int>)
            write(v < 0 ? 0 - magnitude : magnitude, v < 0);
        else
            write(magnitude, false);
    }
    operator std::string_view() const noexcept { return {digits_ + start_, sizeof digits_ - start_}; }

private:
    void write(unsigned long long magnitude, bool negative) noexcept;
    char digits_[24];  // 20 digits and a sign at most
    std::size_t start_ = sizeof digits_;
};

/// The pieces joined, in one allocation: a message built with `a + b + c` inlines a temporary and
/// an append per piece at every call site; cat() is one out-of-line function for all of them. For
/// what is built when something happens (an error, a log line, a first request): it is
/// FOREWARN_COLD, and so are the paths that call it. What every poll builds (its URL) stays `+`.
std::string cat(std::initializer_list<std::string_view> pieces);

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/strings-inl.hpp>
#endif
