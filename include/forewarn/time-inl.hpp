// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/time.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/time.hpp>
#include <forewarn/detail/strings.hpp>  // the definitions only: the model includes nothing from detail/

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD error time_scanner::fail(std::string what, std::size_t at) const {
    error e(errc::parse_error, cat({what, " in time \"", text_, "\""}));
    e.offset = at;
    return e;
}

FOREWARN_INLINE bool time_scanner::digits(std::size_t n, std::int64_t& out) noexcept {
    if (pos_ > text_.size() || text_.size() - pos_ < n) return false;
    std::int64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const char c = text_[pos_ + i];
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    pos_ += n;
    out = v;
    return true;
}

FOREWARN_INLINE bool time_scanner::literal(char c) noexcept {
    if (at_end() || text_[pos_] != c) return false;
    ++pos_;
    return true;
}

FOREWARN_INLINE int time_scanner::name3(const std::string_view* names, int count) noexcept {
    if (pos_ > text_.size() || text_.size() - pos_ < 3) return -1;
    const auto word = text_.substr(pos_, 3);
    for (int i = 0; i < count; ++i) {
        if (iequals(word, names[i])) {
            pos_ += 3;
            return i;
        }
    }
    return -1;
}

FOREWARN_INLINE result<std::int64_t> checked_epoch_seconds(const time_scanner& s, std::int64_t year, std::int64_t month,
                                                           std::int64_t day, std::int64_t hour, std::int64_t minute,
                                                           std::int64_t second, std::size_t month_at,
                                                           std::size_t day_at, std::size_t time_at) {
    if (month < 1 || month > 12) return s.fail(cat({"month ", num(month), " is not 1..12"}), month_at);
    const auto dim = days_in_month(year, static_cast<unsigned>(month));
    if (day < 1 || day > static_cast<std::int64_t>(dim))
        return s.fail(cat({"day ", num(day), " does not exist in ", month_names[month - 1], " ", num(year)}),
                      day_at);
    if (hour > 23) return s.fail(cat({"hour ", num(hour), " is not 0..23"}), time_at);
    if (minute > 59) return s.fail(cat({"minute ", num(minute), " is not 0..59"}), time_at);
    // 60 is a leap second; system_clock does not count them, so it lands on the next second.
    if (second > 60) return s.fail(cat({"second ", num(second), " is not 0..60"}), time_at);
    const auto days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
    return days * 86400 + hour * 3600 + minute * 60 + second;
}

FOREWARN_INLINE result<std::chrono::system_clock::time_point> to_time_point(const time_scanner& s, std::int64_t secs,
                                                                            std::int64_t nanos) {
    using namespace std::chrono;
    using tp = system_clock::time_point;
    const auto max_s = duration_cast<seconds>((tp::max)().time_since_epoch()).count() - 1;
    const auto min_s = duration_cast<seconds>((tp::min)().time_since_epoch()).count() + 1;
    if (secs > max_s || secs < min_s) return s.fail("time outside the range of system_clock", 0);
    // Each part converted on its own: seconds + nanoseconds would be computed in nanoseconds,
    // which overflow after 2262 where system_clock itself reaches further (MSVC, libc++).
    return tp(duration_cast<system_clock::duration>(seconds(secs)) + duration_cast<system_clock::duration>(nanoseconds(nanos)));
}

FOREWARN_INLINE result<std::chrono::system_clock::time_point> parse_day_month_year_time(time_scanner& s) {
    const auto date_at = s.pos();
    std::int64_t day = 0;
    if (!s.digits(2, day) && !s.digits(1, day)) return s.fail("expected the day of the month");
    if (!s.literal(' ')) return s.fail("expected ' ' after the day");
    const auto month_at = s.pos();
    const int month = s.name3(month_names, 12);
    if (month < 0) return s.fail("expected a month name (Jan..Dec)");
    if (!s.literal(' ')) return s.fail("expected ' ' after the month");
    std::int64_t year = 0, hour = 0, minute = 0, second = 0;
    if (!s.digits(4, year)) return s.fail("expected a four-digit year");
    if (!s.literal(' ')) return s.fail("expected ' ' after the year");
    const auto time_at = s.pos();
    if (!s.digits(2, hour) || !s.literal(':') || !s.digits(2, minute) || !s.literal(':') || !s.digits(2, second))
        return s.fail("expected HH:MM:SS");
    if (!s.literal(' ')) return s.fail("expected ' GMT' after the time");
    if (iequals(s.rest(), "GMT") || iequals(s.rest(), "UTC"))
        s.advance(3);
    else
        return s.fail("expected the zone GMT");
    auto secs = checked_epoch_seconds(s, year, month + 1, day, hour, minute, second, month_at, date_at, time_at);
    if (!secs) return std::move(secs).error();
    return to_time_point(s, *secs, 0);
}

FOREWARN_INLINE result<std::chrono::system_clock::time_point> parse_rfc1123(std::string_view text) {
    time_scanner s(text);
    if (s.name3(weekday_names, 7) < 0) return s.fail("expected a day name (Mon..Sun)");
    if (!s.literal(',')) return s.fail("expected ',' after the day name");
    if (!s.literal(' ')) return s.fail("expected ' ' after ','");
    return parse_day_month_year_time(s);
}

FOREWARN_INLINE result<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text) {
    time_scanner s(text);
    std::int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!s.digits(4, year)) return s.fail("expected a four-digit year");
    if (!s.literal('-') || !s.digits(2, month) || !s.literal('-') || !s.digits(2, day))
        return s.fail("expected YYYY-MM-DD");
    const auto time_at = s.pos() + 1;
    if (!s.literal('T') && !s.literal('t') && !s.literal(' ')) return s.fail("expected 'T' between date and time");
    if (!s.digits(2, hour) || !s.literal(':') || !s.digits(2, minute) || !s.literal(':') || !s.digits(2, second))
        return s.fail("expected HH:MM:SS");
    std::int64_t nanos = 0;
    if (s.literal('.') || s.literal(',')) {
        // Any number of digits (.NET writes seven); precision past nanoseconds is dropped.
        std::size_t n = 0;
        std::int64_t digit = 0;
        while (s.digits(1, digit)) {
            if (n < 9) nanos = nanos * 10 + digit;
            ++n;
        }
        if (n == 0) return s.fail("expected digits after the decimal point");
        for (; n < 9; ++n) nanos *= 10;
    }
    std::int64_t offset_s = 0;
    if (s.literal('Z') || s.literal('z')) {
        // UTC
    } else if (s.peek() == '+' || s.peek() == '-') {
        const bool minus = s.peek() == '-';
        s.advance(1);
        const auto zone_at = s.pos();
        std::int64_t oh = 0, om = 0;
        if (!s.digits(2, oh)) return s.fail("expected the zone offset hours");
        if (s.literal(':')) {
            if (!s.digits(2, om)) return s.fail("expected the zone offset minutes");
        } else {
            (void)s.digits(2, om);  // "+02" and "+0200" are both valid ISO-8601
        }
        if (oh > 23 || om > 59) return s.fail("zone offset out of range", zone_at);
        offset_s = (oh * 3600 + om * 60) * (minus ? -1 : 1);
    } else if (s.at_end()) {
        return s.fail("missing zone (Z or +HH:MM): a local time is ambiguous");
    } else {
        return s.fail("expected Z or a zone offset");
    }
    if (!s.at_end()) return s.fail("unexpected text after the time");
    auto secs = checked_epoch_seconds(s, year, month, day, hour, minute, second, 5, 8, time_at);
    if (!secs) return std::move(secs).error();
    return to_time_point(s, *secs - offset_s, nanos);
}

FOREWARN_INLINE void append_padded(std::string& out, std::int64_t v, int width) {
    const num n(v);
    std::string_view digits = n;
    if (v < 0) {
        out += '-';
        digits.remove_prefix(1);
    }
    for (int i = static_cast<int>(digits.size()); i < width; ++i) out += '0';
    out += digits;
}

FOREWARN_INLINE civil_time split_time(std::chrono::system_clock::time_point t) noexcept {
    using namespace std::chrono;
    // floor, not truncation: a time before 1970 belongs to the earlier second.
    auto s = duration_cast<seconds>(t.time_since_epoch());
    if (duration_cast<system_clock::duration>(s) > t.time_since_epoch()) s -= seconds(1);
    std::int64_t days = s.count() / 86400;
    std::int64_t rem = s.count() % 86400;
    if (rem < 0) {
        rem += 86400;
        --days;
    }
    return {civil_from_days(days), rem, days};
}

FOREWARN_INLINE void append_hms(std::string& out, std::int64_t secs_of_day) {
    append_padded(out, secs_of_day / 3600, 2);
    out += ':';
    append_padded(out, secs_of_day / 60 % 60, 2);
    out += ':';
    append_padded(out, secs_of_day % 60, 2);
}

}  // namespace detail

FOREWARN_INLINE result<std::optional<std::chrono::system_clock::time_point>> parse_time(std::string_view text) {
    using opt = std::optional<std::chrono::system_clock::time_point>;
    if (text.empty()) return opt{};
    const char c = text.front();
    auto tp = (c >= '0' && c <= '9') ? detail::parse_iso8601(text) : detail::parse_rfc1123(text);
    if (!tp) return std::move(tp).error();
    return opt{*tp};
}

FOREWARN_INLINE result<std::optional<std::chrono::system_clock::time_point>> parse_aws_time(std::string_view text) {
    using opt = std::optional<std::chrono::system_clock::time_point>;
    if (text.empty()) return opt{};
    detail::time_scanner s(text);
    auto tp = detail::parse_day_month_year_time(s);
    if (!tp) return std::move(tp).error();
    return opt{*tp};
}

FOREWARN_INLINE FOREWARN_COLD std::string format_iso8601(std::chrono::system_clock::time_point t, bool exact) {
    const auto ct = detail::split_time(t);
    std::string out;
    out.reserve(30);
    detail::append_padded(out, ct.date.year, 4);
    out += '-';
    detail::append_padded(out, ct.date.month, 2);
    out += '-';
    detail::append_padded(out, ct.date.day, 2);
    out += 'T';
    detail::append_hms(out, ct.secs_of_day);
    if (exact) {
        using namespace std::chrono;
        const auto whole = system_clock::time_point(duration_cast<system_clock::duration>(
            seconds((ct.days * 86400) + ct.secs_of_day)));
        auto frac = duration_cast<nanoseconds>(t - whole).count();
        if (frac > 0) {
            std::string digits;
            detail::append_padded(digits, frac, 9);
            while (!digits.empty() && digits.back() == '0') digits.pop_back();
            out += '.';
            out += digits;
        }
    }
    out += 'Z';
    return out;
}

FOREWARN_INLINE FOREWARN_COLD std::string format_rfc1123(std::chrono::system_clock::time_point t) {
    const auto ct = detail::split_time(t);
    std::string out;
    out.reserve(29);
    out += detail::weekday_names[detail::weekday_from_days(ct.days)];
    out += ", ";
    detail::append_padded(out, ct.date.day, 2);
    out += ' ';
    out += detail::month_names[ct.date.month - 1];
    out += ' ';
    detail::append_padded(out, ct.date.year, 4);
    out += ' ';
    detail::append_hms(out, ct.secs_of_day);
    out += " GMT";
    return out;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
