// SPDX-License-Identifier: MIT
#pragma once

// Wall-clock times as the metadata services write them. Parsed by hand: no locale, no timegm,
// no strptime, no std::get_time, so the result never depends on the process's TZ or LC_TIME.

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);                 // [0, 399]
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

/// A civil date (the inverse of days_from_civil).
struct civil_date {
    std::int64_t year;
    unsigned month;  ///< 1..12
    unsigned day;    ///< 1..31
};

constexpr civil_date civil_from_days(std::int64_t z) noexcept {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);                    // [0, 146096]
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
    const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
    const unsigned mp = (5 * doy + 2) / 153;                                     // [0, 11]
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;                             // [1, 31]
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;                                // [1, 12]
    return {y + (m <= 2 ? 1 : 0), m, d};
}

constexpr bool is_leap_year(std::int64_t y) noexcept { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

constexpr unsigned days_in_month(std::int64_t y, unsigned m) noexcept {
    constexpr unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap_year(y) ? 29u : days[(m - 1) % 12];
}

/// 0 = Sunday ... 6 = Saturday.
constexpr unsigned weekday_from_days(std::int64_t z) noexcept {
    return static_cast<unsigned>(z >= -4 ? (z + 4) % 7 : (z + 5) % 7 + 6);
}

inline constexpr std::string_view month_names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
inline constexpr std::string_view weekday_names[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

/// A hand-written scanner over one time string; every failure names the offset and the text.
class time_scanner {
public:
    explicit time_scanner(std::string_view text) noexcept : text_(text) {}

    std::size_t pos() const noexcept { return pos_; }
    bool at_end() const noexcept { return pos_ >= text_.size(); }
    char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }

    error fail(std::string what, std::size_t at) const;
    error fail(std::string what) const { return fail(std::move(what), pos_); }

    /// Exactly `n` ASCII digits (n <= 9).
    bool digits(std::size_t n, std::int64_t& out) noexcept;
    bool literal(char c) noexcept;
    /// Three ASCII letters, case-insensitive, matched against `names`; the index or -1.
    int name3(const std::string_view* names, int count) noexcept;
    std::string_view rest() const noexcept { return text_.substr(pos_); }
    void advance(std::size_t n) noexcept { pos_ += n; }

private:
    std::string_view text_;
    std::size_t pos_ = 0;
};

/// Checks the fields of a civil time and turns them into seconds since the epoch.
result<std::int64_t> checked_epoch_seconds(const time_scanner& s, std::int64_t year, std::int64_t month,
                                           std::int64_t day, std::int64_t hour, std::int64_t minute,
                                           std::int64_t second, std::size_t month_at, std::size_t day_at,
                                           std::size_t time_at);

/// Seconds (plus nanoseconds) since the epoch as a system_clock time, if it fits.
result<std::chrono::system_clock::time_point> to_time_point(const time_scanner& s, std::int64_t secs, std::int64_t nanos);

/// The part of RFC 1123 after the day name: "11 Apr 2022 22:26:58 GMT" (the day may have one
/// digit; GMT or UTC). Some services write their times in exactly this form.
result<std::chrono::system_clock::time_point> parse_day_month_year_time(time_scanner& s);

/// "Mon, 11 Apr 2022 22:26:58 GMT" (RFC 1123; the day may have one digit; GMT or UTC).
result<std::chrono::system_clock::time_point> parse_rfc1123(std::string_view text);

/// "2016-09-19T18:29:47Z", "2016-09-19T18:29:47.123456+02:00", "...-0130": a zone is required.
result<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text);

}  // namespace detail

/**
 * Parses a metadata time: RFC 1123 ("Mon, 11 Apr 2022 22:26:58 GMT"), ISO-8601 with a zone
 * ("2016-09-19T18:29:47Z", "...47.123456+02:00", "...-0130"; an older api-version, a mock
 * server), or "" (no time: a NotBefore once its event started); each cloud's parser says which
 * its service sends. Anything else is errc::parse_error with the offset of the first bad
 * character. The day name of RFC 1123 is checked to be a day name but not against the date: it
 * carries no information.
 */
result<std::optional<std::chrono::system_clock::time_point>> parse_time(std::string_view text);

/**
 * A time without its day name: "21 Jan 2019 09:00:43 GMT" (RFC 1123 without the day name; the
 * day may have one digit, "8 May 2020 ..."), or "" (no time). Anything else is errc::parse_error
 * with the offset of the first bad character.
 */
result<std::optional<std::chrono::system_clock::time_point>> parse_aws_time(std::string_view text);

namespace detail {
void append_padded(std::string& out, std::int64_t v, int width);
struct civil_time {
    civil_date date;
    std::int64_t secs_of_day;
    std::int64_t days;
};
civil_time split_time(std::chrono::system_clock::time_point t) noexcept;
void append_hms(std::string& out, std::int64_t secs_of_day);

}  // namespace detail

/// "2022-04-11T22:26:58Z": UTC, whole seconds (fractions are dropped, rounding down), or with
/// `exact` the fraction too when there is one ("2022-04-11T22:26:58.25Z"), so that
/// parse_iso8601 gives back the same time point.
std::string format_iso8601(std::chrono::system_clock::time_point t, bool exact = false);

/// "Mon, 11 Apr 2022 22:26:58 GMT": RFC 1123, as a service may send NotBefore (the emulator writes it).
std::string format_rfc1123(std::chrono::system_clock::time_point t);

/// A time without its day name: "21 Jan 2019 09:00:43 GMT" (RFC 1123 without the day name).
inline std::string format_aws_time(std::chrono::system_clock::time_point t) { return format_rfc1123(t).substr(5); }

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/time-inl.hpp>
#endif
