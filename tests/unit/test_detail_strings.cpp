// SPDX-License-Identifier: MIT
#include <forewarn/detail/strings.hpp>

#include "catch.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace test_detail_strings {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::detail::cat;
using forewarn::detail::num;

namespace {
std::string text(const num& n) { return std::string(std::string_view(n)); }
}  // namespace

TEST_CASE("num writes an integer as std::to_string does, for every integer type and its limits", "[strings]") {
    CHECK(text(num(0)) == "0");
    CHECK(text(num(7)) == "7");
    CHECK(text(num(-7)) == "-7");
    CHECK(text(num(1234567890)) == "1234567890");
    CHECK(text(num(std::numeric_limits<int>::min())) == std::to_string(std::numeric_limits<int>::min()));
    CHECK(text(num(std::numeric_limits<long long>::min())) == std::to_string(std::numeric_limits<long long>::min()));
    CHECK(text(num(std::numeric_limits<long long>::max())) == std::to_string(std::numeric_limits<long long>::max()));
    CHECK(text(num(std::numeric_limits<unsigned long long>::max())) ==
          std::to_string(std::numeric_limits<unsigned long long>::max()));
    CHECK(text(num(std::uint64_t(1) << 63)) == "9223372036854775808");  // above long long: never negative
    CHECK(text(num(static_cast<short>(-300))) == "-300");
    CHECK(text(num(std::size_t(1) << 20)) == "1048576");
}

TEST_CASE("cat joins its pieces in order, numbers and empty pieces included", "[strings]") {
    const std::string owned = "https://example.test";
    CHECK(cat({}) == "");
    CHECK(cat({"one"}) == "one");
    CHECK(cat({"request to ", owned, " failed"}) == "request to https://example.test failed");
    CHECK(cat({"month ", num(13), " is not 1..12"}) == "month 13 is not 1..12");
    CHECK(cat({"", "a", "", num(-1), ""}) == "a-1");
    // A piece may hold NUL bytes and be longer than any small-string buffer.
    const std::string big(1000, 'x');
    const auto joined = cat({big, std::string_view("\0", 1), big});
    CHECK(joined.size() == 2001);
    CHECK(joined[1000] == '\0');
}

}  // namespace test_detail_strings
