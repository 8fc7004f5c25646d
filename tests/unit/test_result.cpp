// SPDX-License-Identifier: MIT
#include <forewarn/result.hpp>

#include "catch.hpp"

#include <string>

using forewarn::errc;
using forewarn::error;
using forewarn::result;

TEST_CASE("result holds a value or an error", "[result]") {
    result<int> ok = 42;
    REQUIRE(ok.has_value());
    REQUIRE(static_cast<bool>(ok));
    CHECK(ok.value() == 42);
    CHECK(*ok == 42);

    result<int> bad = error(errc::http_status, "service unavailable", 503);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code == errc::http_status);
    CHECK(bad.error().http_status == 503);
    CHECK(bad.value_or(7) == 7);
}

TEST_CASE("value() on an error throws bad_result_access carrying the error", "[result]") {
    result<std::string> bad = error(errc::parse_error, "malformed JSON");
    try {
        (void)bad.value();
        FAIL("value() did not throw");
    } catch (const forewarn::bad_result_access& e) {
        CHECK(e.error().code == errc::parse_error);
        CHECK(std::string(e.what()).find("malformed JSON") != std::string::npos);
    }
    result<void> v = error(errc::cancelled, "stop");
    CHECK_THROWS_AS(v.value(), forewarn::bad_result_access);
    result<void> fine;
    CHECK_NOTHROW(fine.value());
}

TEST_CASE("error::describe names the code, status, field and offset", "[result]") {
    error e(errc::invalid_document, "expected string, got number");
    e.field = "Events[0].EventId";
    CHECK(e.describe() == "invalid_document at Events[0].EventId: expected string, got number");
    error p(errc::parse_error, "malformed JSON");
    p.offset = 17;
    CHECK(p.describe() == "parse_error at offset 17: malformed JSON");
    CHECK(error(errc::http_status, "bad request", 400).describe() == "http_status (HTTP 400): bad request");
}
