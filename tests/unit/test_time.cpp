// SPDX-License-Identifier: MIT
#include <forewarn/time.hpp>

#include "catch.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace test_time {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::format_iso8601;
using forewarn::format_rfc1123;
using forewarn::parse_time;
using std::chrono::system_clock;

namespace {

// Seconds since the epoch, for expectations computed independently of the code under test.
system_clock::time_point at(std::int64_t epoch_seconds) {
    return system_clock::time_point(std::chrono::duration_cast<system_clock::duration>(std::chrono::seconds(epoch_seconds)));
}

system_clock::time_point parsed(const std::string& text) {
    auto r = parse_time(text);
    INFO(text << ": " << (r ? std::string("ok") : r.error().describe()));
    REQUIRE(r.has_value());
    REQUIRE(r->has_value());
    return **r;
}

forewarn::error rejected(const std::string& text) {
    auto r = parse_time(text);
    INFO(text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::parse_error);
    return r.error();
}

}  // namespace

TEST_CASE("parse_time reads the seeds' RFC 1123 NotBefore", "[time]") {
    // date -u -d 'Mon, 11 Apr 2022 22:26:58 GMT' +%s == 1649716018
    CHECK(parsed("Mon, 11 Apr 2022 22:26:58 GMT") == at(1649716018));
    // The Windows seed's example: date -u -d '2016-09-19 18:29:47' +%s == 1474309787
    CHECK(parsed("Mon, 19 Sep 2016 18:29:47 GMT") == at(1474309787));
    CHECK(parsed("mon, 19 sep 2016 18:29:47 gmt") == at(1474309787));  // names are case-insensitive
    CHECK(parsed("Mon, 9 Sep 2024 00:00:00 GMT") == at(1725840000));   // one-digit day
    CHECK(parsed("Thu, 01 Jan 1970 00:00:00 UTC") == at(0));
}

TEST_CASE("parse_time reads ISO-8601 with Z, offsets and fractions", "[time]") {
    CHECK(parsed("2016-09-19T18:29:47Z") == at(1474309787));  // the 2017 preview's example
    CHECK(parsed("2016-09-19T20:29:47+02:00") == at(1474309787));
    CHECK(parsed("2016-09-19T16:59:47-0130") == at(1474309787));
    CHECK(parsed("2016-09-19T19:29:47+01") == at(1474309787));
    CHECK(parsed("2016-09-19t18:29:47z") == at(1474309787));
    const auto frac = parsed("2016-09-19T18:29:47.123456Z");
    CHECK(std::chrono::duration_cast<std::chrono::microseconds>(frac - at(1474309787)).count() == 123456);
    // .NET's seven digits (Microsoft's mock server)
    const auto net = parsed("2016-09-19T18:29:47.1234567Z");
    CHECK(std::chrono::duration_cast<std::chrono::microseconds>(net - at(1474309787)).count() == 123456);
    CHECK(parsed("2024-02-29T12:00:00Z") == at(1709208000));  // leap day of a leap year
    CHECK(parsed("2000-02-29T00:00:00Z") == at(951782400));   // divisible by 400: leap
    CHECK(parsed("1969-12-31T23:59:59Z") == at(-1));
}

TEST_CASE("parse_time: an empty string is no time, not an error", "[time]") {
    auto r = parse_time("");
    REQUIRE(r.has_value());
    CHECK_FALSE(r->has_value());
}

TEST_CASE("parse_time rejects impossible dates and times", "[time]") {
    auto april = rejected("2022-04-31T00:00:00Z");
    CHECK(april.message.find("day 31") != std::string::npos);
    CHECK(april.offset == 8);
    CHECK(rejected("2022-13-01T00:00:00Z").offset == 5);
    CHECK(rejected("Sun, 31 Apr 2022 00:00:00 GMT").offset == 5);
    CHECK(rejected("Sun, 31 Apr 2022 00:00:00 GMT").message.find("Apr") != std::string::npos);
    CHECK(rejected("2021-02-29T00:00:00Z").message.find("day 29") != std::string::npos);
    rejected("1900-02-29T00:00:00Z");  // divisible by 100, not by 400: not a leap year
    auto hour = rejected("Mon, 11 Apr 2022 24:00:00 GMT");
    CHECK(hour.message.find("hour 24") != std::string::npos);
    CHECK(hour.offset == 17);
    rejected("2022-04-11T24:00:00Z");
    rejected("2022-04-11T23:60:00Z");
    rejected("2022-04-11T23:59:61Z");
    rejected("2022-13-01T00:00:00Z");
    rejected("2022-00-01T00:00:00Z");
    rejected("2022-01-00T00:00:00Z");
    rejected("2022-04-11T22:26:58+24:00");
}

TEST_CASE("parse_time rejects bad names, junk and missing parts with the offset", "[time]") {
    CHECK(rejected("Mox, 11 Apr 2022 22:26:58 GMT").offset == 0);
    CHECK(rejected("Mon, 11 Apx 2022 22:26:58 GMT").offset == 8);
    rejected("Monday, 11 Apr 2022 22:26:58 GMT");
    rejected("Mon, 11 April 2022 22:26:58 GMT");
    rejected("Mon, 11 Apr 2022 22:26:58 PST");
    rejected("Mon, 11 Apr 2022 22:26:58");
    CHECK(rejected("Mon, 11 Apr 2022 22:26:58 GMT ").offset == 26);
    CHECK(rejected("2022-04-11T22:26:58Zjunk").offset == 20);
    CHECK(rejected("2022-04-11T22:26:58").message.find("zone") != std::string::npos);  // local time: ambiguous
    rejected("2022-04-11");
    rejected("2022-4-11T22:26:58Z");
    rejected("2022-04-11T22:26Z");
    rejected("2022-04-11T22:26:58.Z");
    rejected("2022-04-11T22:26:58+2");
    rejected(" 2022-04-11T22:26:58Z");
    rejected("garbage");
    rejected("0");
    rejected(std::string("2022-04-11T22:26:58Z\0", 21));
    auto e = rejected("Mon, 11 Apr 2022 25:00:00 GMT");
    CHECK(e.message.find("Mon, 11 Apr 2022 25:00:00 GMT") != std::string::npos);  // the text is quoted
}

TEST_CASE("parse_time refuses years system_clock cannot hold instead of overflowing", "[time]") {
    if (std::chrono::duration_cast<std::chrono::hours>(system_clock::time_point::max().time_since_epoch()).count() <
        24LL * 366 * 8000) {
        auto e = rejected("9999-12-31T23:59:59Z");
        CHECK(e.message.find("range") != std::string::npos);
    } else {
        CHECK(format_iso8601(parsed("9999-12-31T23:59:59Z")) == "9999-12-31T23:59:59Z");
    }
}

TEST_CASE("format_iso8601 writes UTC whole seconds", "[time]") {
    CHECK(format_iso8601(at(1649716018)) == "2022-04-11T22:26:58Z");
    CHECK(format_iso8601(at(0)) == "1970-01-01T00:00:00Z");
    CHECK(format_iso8601(at(-1)) == "1969-12-31T23:59:59Z");
    CHECK(format_iso8601(at(1709208000)) == "2024-02-29T12:00:00Z");
    // Fractions round down, also before 1970.
    CHECK(format_iso8601(at(10) + std::chrono::milliseconds(999)) == "1970-01-01T00:00:10Z");
    CHECK(format_iso8601(at(0) - std::chrono::milliseconds(1)) == "1969-12-31T23:59:59Z");
}

TEST_CASE("format_rfc1123 writes what Azure sends, weekday included", "[time]") {
    CHECK(format_rfc1123(at(1649716018)) == "Mon, 11 Apr 2022 22:26:58 GMT");
    CHECK(format_rfc1123(at(0)) == "Thu, 01 Jan 1970 00:00:00 GMT");
    CHECK(format_rfc1123(at(-86400)) == "Wed, 31 Dec 1969 00:00:00 GMT");
    CHECK(format_rfc1123(at(1709208000)) == "Thu, 29 Feb 2024 12:00:00 GMT");
}

TEST_CASE("parse_time and the formatters round-trip every day from 1899 to 2102", "[time]") {
    // Every day from 1899-12-25 to 2102-01-14 at a varying time of day: formatting then parsing in
    // both forms gives the same instant, and the civil date advances by exactly one day.
    const std::int64_t first = -2209593600;  // 1899-12-25T00:00:00Z
    std::string previous;
    for (std::int64_t d = 0; d < 73800; ++d) {
        const auto t = at(first + d * 86400 + (d * 7919) % 86400);
        const auto iso = format_iso8601(t);
        const auto rfc = format_rfc1123(t);
        auto a = parse_time(iso);
        auto b = parse_time(rfc);
        if (!a || !b || **a != t || **b != t) {
            FAIL_CHECK(iso << " / " << rfc << " did not round-trip");
            break;
        }
        if (iso.substr(0, 10) == previous) {
            FAIL_CHECK("two days format as " << previous);
            break;
        }
        previous = iso.substr(0, 10);
    }
    CHECK(previous == "2102-01-14");
}

}  // namespace test_time
