// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/poller/approval_window.hpp> (spdlog's -inl files): included at the end of
// that header when FOREWARN_HEADER_DEFINITIONS is 1; compiled once into libforewarn in compiled mode.

#include <forewarn/poller/approval_window.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS

#include <cstdio>

FOREWARN_BEGIN_NAMESPACE

FOREWARN_INLINE FOREWARN_COLD bool approval_window::contains(std::chrono::system_clock::time_point t) const noexcept {
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

FOREWARN_INLINE FOREWARN_COLD std::chrono::system_clock::time_point approval_window::next_open(std::chrono::system_clock::time_point t) const noexcept {
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

FOREWARN_INLINE FOREWARN_COLD std::string approval_window::to_string() const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%02d:%02d-%02d:%02d", start_minute / 60, start_minute % 60, end_minute / 60, end_minute % 60);
    std::string out = buf;
    if (days != 0x7f) {
        static const char* const names[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
        std::string list;
        for (int i = 0; i < 7; ++i)
            if (days & (1u << i)) {
                if (!list.empty()) list += ',';
                list += names[i];
            }
        out += '/';
        out += list;
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

FOREWARN_INLINE FOREWARN_COLD result<approval_window> approval_window::parse(std::string_view text) {
    approval_window w;
    auto fail = [&](const std::string& why) -> result<approval_window> {
        return error(errc::invalid_argument, detail::cat({"approval window \"", text, "\": ", why}));
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

FOREWARN_END_NAMESPACE

#endif
