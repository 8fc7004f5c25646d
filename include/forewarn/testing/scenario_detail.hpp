// SPDX-License-Identifier: MIT
#pragma once

// Small helpers of the scenario engine: wire time formats, durations written as "15m", URL
// query strings, and the ETag hash. Internal (testing::detail); kept apart so that scenario.hpp
// reads as the state machine it is.

#include <forewarn/config.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {
namespace detail {

struct civil_date {
    std::int64_t year;
    unsigned month;  // 1..12
    unsigned day;    // 1..31
};

// Howard Hinnant's days-to-civil algorithm: no timegm/gmtime, no locale, valid far from 1970.
constexpr civil_date civil_from_days(std::int64_t z) noexcept {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<std::uint64_t>(z - era * 146097);
    const std::uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
    const std::uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::uint64_t mp = (5 * doy + 2) / 153;
    const auto d = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
    const auto m = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
    return {m <= 2 ? y + 1 : y, m, d};
}

constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<std::uint64_t>(y - era * 400);
    const std::uint64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const std::uint64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

inline void append_2digits(std::string& out, unsigned v) {
    out += static_cast<char>('0' + (v / 10) % 10);
    out += static_cast<char>('0' + v % 10);
}

inline std::int64_t unix_seconds(std::chrono::system_clock::time_point t) noexcept {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
    // floor, so that times before 1970 do not round toward zero
    return (std::chrono::system_clock::time_point(std::chrono::seconds(s)) > t) ? s - 1 : s;
}

/// "Mon, 11 Apr 2022 22:26:58 GMT" (RFC 1123, what current IMDS versions send).
inline std::string format_rfc1123(std::chrono::system_clock::time_point t) {
    static constexpr const char* weekdays[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
    static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const std::int64_t secs = unix_seconds(t);
    std::int64_t days = secs / 86400;
    std::int64_t rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        --days;
    }
    const civil_date c = civil_from_days(days);
    std::string out;
    out.reserve(29);
    out += weekdays[((days % 7) + 7) % 7];
    out += ", ";
    append_2digits(out, c.day);
    out += ' ';
    out += months[c.month - 1];
    out += ' ';
    out += std::to_string(c.year);
    out += ' ';
    append_2digits(out, static_cast<unsigned>(rem / 3600));
    out += ':';
    append_2digits(out, static_cast<unsigned>(rem / 60 % 60));
    out += ':';
    append_2digits(out, static_cast<unsigned>(rem % 60));
    out += " GMT";
    return out;
}

/// "2016-09-19T18:29:47Z" (ISO-8601 UTC, what api-version 2017-03-01 sends).
inline std::string format_iso8601_utc(std::chrono::system_clock::time_point t) {
    const std::int64_t secs = unix_seconds(t);
    std::int64_t days = secs / 86400;
    std::int64_t rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        --days;
    }
    const civil_date c = civil_from_days(days);
    std::string out = std::to_string(c.year);
    out += '-';
    append_2digits(out, c.month);
    out += '-';
    append_2digits(out, c.day);
    out += 'T';
    append_2digits(out, static_cast<unsigned>(rem / 3600));
    out += ':';
    append_2digits(out, static_cast<unsigned>(rem / 60 % 60));
    out += ':';
    append_2digits(out, static_cast<unsigned>(rem % 60));
    out += 'Z';
    return out;
}

/// Parses "YYYY-MM-DDTHH:MM:SSZ" (the scenario file's wall_epoch); nothing else.
inline std::optional<std::chrono::system_clock::time_point> parse_iso8601_utc(std::string_view s) {
    if (s.size() != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z')
        return std::nullopt;
    auto num = [&](std::size_t pos, std::size_t len) -> std::optional<unsigned> {
        unsigned v = 0;
        for (std::size_t i = pos; i < pos + len; ++i) {
            if (s[i] < '0' || s[i] > '9') return std::nullopt;
            v = v * 10 + static_cast<unsigned>(s[i] - '0');
        }
        return v;
    };
    const auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
    if (!y || !mo || !d || !h || !mi || !se || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *se > 60)
        return std::nullopt;
    const std::int64_t days = days_from_civil(*y, *mo, *d);
    const std::int64_t secs = days * 86400 + *h * 3600 + *mi * 60 + *se;
    return std::chrono::system_clock::time_point(std::chrono::seconds(secs));
}

/// A duration as scenario files write it: "15m", "30s", "500ms", "1h30m", "2d", or a bare
/// number of seconds ("1.5"). Negative or malformed text gives nothing.
inline std::optional<std::chrono::milliseconds> parse_duration(std::string_view s) {
    if (s.empty()) return std::nullopt;
    double total_ms = 0;
    std::size_t i = 0;
    bool any = false;
    while (i < s.size()) {
        double value = 0, scale = 0;
        bool digits = false;
        while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) {
            if (s[i] == '.') {
                if (scale != 0) return std::nullopt;
                scale = 1;
            } else {
                value = value * 10 + (s[i] - '0');
                if (scale != 0) scale *= 10;
                digits = true;
            }
            ++i;
        }
        if (!digits) return std::nullopt;
        if (scale != 0) value /= scale;
        std::size_t j = i;
        while (j < s.size() && s[j] >= 'a' && s[j] <= 'z') ++j;
        const std::string_view unit = s.substr(i, j - i);
        double per = 0;
        if (unit.empty()) {
            if (any || j != s.size()) return std::nullopt;  // a bare number stands alone
            per = 1000;
        } else if (unit == "ms") per = 1;
        else if (unit == "s") per = 1000;
        else if (unit == "m" || unit == "min") per = 60000;
        else if (unit == "h") per = 3600000;
        else if (unit == "d") per = 86400000;
        else return std::nullopt;
        total_ms += value * per;
        any = true;
        i = j;
    }
    if (total_ms > 1e15) return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::int64_t>(total_ms + 0.5));
}

/// "15m", "7s", "1.5s", "250ms": the shortest exact spelling, for logs and the state document.
inline std::string format_duration(std::chrono::milliseconds d) {
    const auto ms = d.count();
    if (ms != 0 && ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
    if (ms != 0 && ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

inline int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// Percent-decoding of one query component ('+' is a space, as in forms).
inline std::string url_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 &&
                   hex_value(s[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

/// A request target split into its decoded path and query parameters (in order, repeats kept).
struct parsed_target {
    std::string path;
    std::vector<std::pair<std::string, std::string>> query;

    const std::string* param(std::string_view name) const noexcept {
        for (const auto& kv : query)
            if (kv.first == name) return &kv.second;
        return nullptr;
    }
};

/// Accepts an absolute URL ("http://host/p?q") or an origin-form target ("/p?q").
inline parsed_target parse_target(std::string_view url) {
    const auto scheme = url.find("://");
    if (scheme != std::string_view::npos && scheme < url.find_first_of("/?")) {
        url.remove_prefix(scheme + 3);
        const auto slash = url.find_first_of("/?");
        url = slash == std::string_view::npos ? std::string_view("/") : url.substr(slash);
    }
    const auto hash = url.find('#');
    if (hash != std::string_view::npos) url = url.substr(0, hash);
    parsed_target t;
    const auto q = url.find('?');
    t.path = url_decode(url.substr(0, q));
    if (t.path.empty() || t.path.front() != '/') t.path.insert(t.path.begin(), '/');
    if (q != std::string_view::npos) {
        std::string_view rest = url.substr(q + 1);
        while (!rest.empty()) {
            const auto amp = rest.find('&');
            const std::string_view part = rest.substr(0, amp);
            if (!part.empty()) {
                const auto eq = part.find('=');
                t.query.emplace_back(url_decode(part.substr(0, eq)),
                                     eq == std::string_view::npos ? std::string() : url_decode(part.substr(eq + 1)));
            }
            if (amp == std::string_view::npos) break;
            rest.remove_prefix(amp + 1);
        }
    }
    return t;
}

/// 64-bit FNV-1a as 16 hex digits: the GCE ETag of a value, so the same content has the same tag.
inline std::string content_etag(std::string_view content) {
    std::uint64_t h = 14695981039346656037ull;
    for (const char c : content) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i) {
        out[static_cast<std::size_t>(i)] = digits[h & 0xF];
        h >>= 4;
    }
    return out;
}

/// The text with every byte that is not part of a well-formed UTF-8 sequence replaced by '?', so
/// that whatever a client sent can be echoed in the control API's JSON.
inline std::string sanitize_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        unsigned min = 0;
        if (c < 0x80) len = 1;
        else if (c >= 0xC2 && c <= 0xDF) len = 2, min = 0x80;
        else if (c >= 0xE0 && c <= 0xEF) len = 3, min = 0x800;
        else if (c >= 0xF0 && c <= 0xF4) len = 4, min = 0x10000;
        bool ok = len > 0 && i + len <= s.size();
        unsigned cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) ok = false;
            cp = (cp << 6) | (cc & 0x3Fu);
        }
        if (ok && len > 1 && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
        if (ok) {
            out.append(s.data() + i, len);
            i += len;
        } else {
            out += '?';
            ++i;
        }
    }
    return out;
}

/// splitmix64: a tiny deterministic generator for "a fraction of requests" faults.
struct splitmix64 {
    std::uint64_t state;
    std::uint64_t next() noexcept {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, 1).
    double unit() noexcept { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

/// "a-b-c" → "aBC"-style camelCase used by GCE's recursive JSON ("maintenance-event" → "maintenanceEvent").
inline std::string camel_case(std::string_view s) {
    std::string out;
    bool up = false;
    for (const char c : s) {
        if (c == '-') {
            up = true;
            continue;
        }
        out += (up && c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
        up = false;
    }
    return out;
}

}  // namespace detail
}  // namespace testing
FOREWARN_END_NAMESPACE
