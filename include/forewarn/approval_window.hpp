// SPDX-License-Identifier: MIT
#pragma once

// When early approvals may happen: a daily window of wall-clock time, on some days of the week,
// at a fixed offset from UTC (approval_options::window; forewarn-watch's --approve-window).

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE

/**
 * A daily window, e.g. 22:00-04:00 on Monday to Friday, UTC+01:00. The window belongs to the day
 * it opens on: 22:00-04:00/fri is open from Friday 22:00 to Saturday 04:00. An end equal to the
 * start is the whole day. Fixed offsets only: named time zones (and their summer time) are not
 * known here; write the offset that applies, or UTC.
 */
struct approval_window {
    int start_minute = 0;             ///< minutes after local midnight, 0..1439
    int end_minute = 0;               ///< exclusive; at or before the start: the next day
    std::uint8_t days = 0x7f;         ///< bit 0 Monday ... bit 6 Sunday: the days it opens on
    std::chrono::minutes utc_offset{0};  ///< local time = UTC + this

    /// Whether `t` falls inside the window.
    bool contains(std::chrono::system_clock::time_point t) const noexcept {
        const auto local = minutes_since_epoch(t);
        const long long day = floor_div(local, 1440);
        const int minute = static_cast<int>(local - day * 1440);
        const int length = (end_minute - start_minute + 1440) % 1440 == 0 ? 1440 : (end_minute - start_minute + 1440) % 1440;
        for (long long d : {day, day - 1}) {  // opened today, or yesterday and runs past midnight
            if (!opens_on(d)) continue;
            const long long since_open = (day - d) * 1440 + minute - start_minute;
            if (since_open >= 0 && since_open < length) return true;
        }
        return false;
    }

    /// The next time the window opens after `t` (within eight days; `t` itself when it has no open day).
    std::chrono::system_clock::time_point next_open(std::chrono::system_clock::time_point t) const noexcept {
        const auto local = minutes_since_epoch(t);
        const long long day = floor_div(local, 1440);
        for (long long d = day; d <= day + 8; ++d) {
            const long long open = d * 1440 + start_minute;
            if (open > local && opens_on(d))
                return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
                    std::chrono::minutes(open) - utc_offset));
        }
        return t;
    }

    /// "22:00-04:00/mon,tue,wed,thu,fri UTC+01:00"; the days and the offset only when not every day / UTC.
    std::string to_string() const {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%02d:%02d-%02d:%02d", start_minute / 60, start_minute % 60, end_minute / 60, end_minute % 60);
        std::string out = buf;
        if (days != 0x7f) {
            static const char* const names[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
            std::string list;
            for (int i = 0; i < 7; ++i)
                if (days & (1u << i)) list += (list.empty() ? "" : ",") + std::string(names[i]);
            out += "/" + list;
        }
        const auto off = utc_offset.count();
        if (off != 0) {
            std::snprintf(buf, sizeof buf, " UTC%c%02d:%02d", off < 0 ? '-' : '+', static_cast<int>((off < 0 ? -off : off) / 60),
                          static_cast<int>((off < 0 ? -off : off) % 60));
            out += buf;
        } else {
            out += " UTC";
        }
        return out;
    }

    /**
     * Parses HH:MM-HH:MM[/DAYS][ UTC|UTC+HH:MM|UTC-HH:MM]. DAYS: names (mon, tue, wed, thu, fri,
     * sat, sun) separated by commas, or a range (mon-fri). errc::invalid_argument saying what is
     * wrong.
     */
    static result<approval_window> parse(std::string_view text) {
        approval_window w;
        auto fail = [&](const std::string& why) -> result<approval_window> {
            return error(errc::invalid_argument, "approval window \"" + std::string(text) + "\": " + why);
        };
        std::string_view rest = text;
        auto time_of = [&](int& out) -> bool {
            if (rest.size() < 5 || rest[2] != ':') return false;
            for (int i : {0, 1, 3, 4})
                if (rest[static_cast<std::size_t>(i)] < '0' || rest[static_cast<std::size_t>(i)] > '9') return false;
            const int h = (rest[0] - '0') * 10 + (rest[1] - '0'), m = (rest[3] - '0') * 10 + (rest[4] - '0');
            if (h > 23 || m > 59) return false;
            out = h * 60 + m;
            rest.remove_prefix(5);
            return true;
        };
        if (!time_of(w.start_minute)) return fail("it starts with HH:MM (00:00 to 23:59)");
        if (rest.empty() || rest.front() != '-') return fail("HH:MM-HH:MM");
        rest.remove_prefix(1);
        if (!time_of(w.end_minute)) return fail("the end is HH:MM (00:00 to 23:59)");
        static const char* const names[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
        auto day_of = [&](std::string_view s) -> int {
            for (int i = 0; i < 7; ++i)
                if (s == names[i]) return i;
            return -1;
        };
        if (!rest.empty() && rest.front() == '/') {
            rest.remove_prefix(1);
            const auto space = rest.find(' ');
            std::string_view list = rest.substr(0, space);
            rest = space == std::string_view::npos ? std::string_view() : rest.substr(space);
            w.days = 0;
            while (!list.empty()) {
                const auto comma = list.find(',');
                const std::string_view item = list.substr(0, comma);
                list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
                const auto dash = item.find('-');
                const int a = day_of(item.substr(0, dash));
                const int b = dash == std::string_view::npos ? a : day_of(item.substr(dash + 1));
                if (a < 0 || b < 0) return fail("days are mon, tue, wed, thu, fri, sat, sun, separated by commas or as a range (mon-fri)");
                for (int i = a;; i = (i + 1) % 7) {
                    w.days = static_cast<std::uint8_t>(w.days | (1u << i));
                    if (i == b) break;
                }
            }
            if (w.days == 0) return fail("no day named after '/'");
        }
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        if (rest.empty() || rest == "UTC" || rest == "Z") return w;
        if (rest.size() != 9 || rest.substr(0, 3) != "UTC" || (rest[3] != '+' && rest[3] != '-'))
            return fail("the zone is UTC or a fixed offset, UTC+HH:MM or UTC-HH:MM (named zones are not known)");
        rest.remove_prefix(3);
        const bool negative = rest.front() == '-';
        rest.remove_prefix(1);
        int offset = 0;
        if (!time_of(offset) || offset > 14 * 60) return fail("the offset is HH:MM, at most 14:00");
        w.utc_offset = std::chrono::minutes(negative ? -offset : offset);
        return w;
    }

private:
    long long minutes_since_epoch(std::chrono::system_clock::time_point t) const noexcept {
        const auto m = std::chrono::duration_cast<std::chrono::minutes>(t.time_since_epoch()) + utc_offset;
        // floor for times before the epoch
        const auto exact = std::chrono::duration_cast<std::chrono::system_clock::duration>(m - utc_offset);
        return m.count() - (exact > t.time_since_epoch() ? 1 : 0);
    }
    static long long floor_div(long long a, long long b) noexcept { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
    bool opens_on(long long day_since_epoch) const noexcept {
        const int weekday = static_cast<int>(((day_since_epoch % 7) + 7 + 3) % 7);  // 1970-01-01 was a Thursday (3)
        return (days >> weekday) & 1u;
    }
};

FOREWARN_END_NAMESPACE
