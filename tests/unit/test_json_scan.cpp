// SPDX-License-Identifier: MIT
// parse_json's pre-pass skips plain string bytes 8 at a time: every special byte (quote,
// backslash, control, non-ASCII) must be found wherever it falls in or across those 8-byte words.
#include <forewarn/detail/json.hpp>

#include "catch.hpp"

#include <string>

namespace test_json_scan {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::detail::json_string_view;
using forewarn::detail::parse_json;

TEST_CASE("parse_json finds bad UTF-8 at every offset of a long string", "[json]") {
    for (const std::string& bad : {std::string("\x80"), std::string("\xc3"), std::string("\xed\xa0\x80"),
                                  std::string("\xc0\xaf"), std::string("\xf4\x90\x80\x80"), std::string("\xff")}) {
        for (std::size_t at = 0; at < 20; ++at) {
            std::string text = "[\"" + std::string(at, 'a') + bad + std::string(20 - at, 'b') + "\"]";
            auto r = parse_json(text);
            INFO("offset " << at << " sequence of " << bad.size() << " bytes");
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::parse_error);
            CHECK(r.error().offset == at + 2);
        }
    }
}

TEST_CASE("parse_json keeps every string byte wherever the special ones fall", "[json]") {
    for (std::size_t at = 0; at < 20; ++at) {
        const std::string pad(at, 'x');
        // a 4-byte character, an escaped quote and an escaped backslash, each after `at` bytes
        for (const auto& [wire, value] :
             {std::pair<std::string, std::string>{"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"}, {"\\\"", "\""}, {"\\\\", "\\"},
              {"\\u00e9", "\xc3\xa9"}}) {
            auto r = parse_json("[\"" + pad + wire + "tail-of-the-string\"]");
            INFO("offset " << at << " wire " << wire);
            REQUIRE(r.has_value());
            CHECK(json_string_view((*r)[0]) == pad + value + "tail-of-the-string");
        }
        // a raw control character and a raw NUL are refused; the NUL at its own offset
        auto ctl = parse_json("[\"" + pad + "\x01" + "0123456789abcdef\"]");
        CHECK_FALSE(ctl.has_value());
        auto nul = parse_json("[\"" + pad + std::string(1, '\0') + "0123456789abcdef\"]");
        REQUIRE_FALSE(nul.has_value());
        CHECK(nul.error().offset == at + 2);
    }
}

TEST_CASE("parse_json: a string that ends in an escape or mid-sequence is malformed, never read past", "[json]") {
    for (std::size_t len = 0; len < 18; ++len) {
        const std::string pad(len, 'y');
        for (const std::string& tail : {std::string("\\"), std::string("\xe2\x82"), std::string("")}) {
            auto r = parse_json("[\"" + pad + tail);
            INFO("length " << len);
            CHECK_FALSE(r.has_value());
        }
    }
    // Text after a valid document: the parse must not stop at the first value.
    CHECK_FALSE(parse_json("[\"0123456789abcdef\"] x").has_value());
}

}  // namespace test_json_scan
