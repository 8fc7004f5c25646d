// SPDX-License-Identifier: MIT
#pragma once

// When early approvals may happen: a daily window of wall-clock time, on some days of the week,
// at a fixed offset from UTC (approval_options::window; forewarn-watch's --approve-window).

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstdint>
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
    bool contains(std::chrono::system_clock::time_point t) const noexcept;

    /// The next time the window opens after `t` (within eight days; `t` itself when it has no open day).
    std::chrono::system_clock::time_point next_open(std::chrono::system_clock::time_point t) const noexcept;

    /// "22:00-04:00/mon,tue,wed,thu,fri UTC+01:00"; the days and the offset only when not every day / UTC.
    std::string to_string() const;

    /**
     * Parses HH:MM-HH:MM[/DAYS][ UTC|UTC+HH:MM|UTC-HH:MM]. DAYS: names (mon, tue, wed, thu, fri,
     * sat, sun) separated by commas, or a range (mon-fri). errc::invalid_argument saying what is
     * wrong.
     */
    static result<approval_window> parse(std::string_view text);

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

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/poller/approval_window-inl.hpp>
#endif
