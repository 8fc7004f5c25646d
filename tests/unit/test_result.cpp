// SPDX-License-Identifier: MIT
#include <forewarn/result.hpp>

#include "catch.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace test_result {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

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

namespace {

// Counts the values alive, so that a result that destroys one twice, or never, shows.
struct counted {
    static inline int alive = 0;
    std::string text;
    explicit counted(std::string t) : text(std::move(t)) { ++alive; }
    counted(const counted& o) : text(o.text) { ++alive; }
    counted(counted&& o) noexcept : text(std::move(o.text)) { ++alive; }
    counted& operator=(const counted&) = default;
    counted& operator=(counted&&) noexcept = default;
    ~counted() { --alive; }
};

}  // namespace

TEST_CASE("result copies, moves and assigns across value and error, each value destroyed once", "[result]") {
    counted::alive = 0;
    {
        result<counted> a = counted("a");
        result<counted> e = error(errc::cancelled, "stop");
        CHECK(counted::alive == 1);

        result<counted> copy = a;  // value copied
        CHECK(copy->text == "a");
        CHECK(counted::alive == 2);
        result<counted> moved = std::move(copy);
        CHECK(moved->text == "a");
        result<counted> ecopy = e;  // error copied
        CHECK(ecopy.error().code == errc::cancelled);
        CHECK(counted::alive == 3);  // a, copy (moved from, still alive), moved

        moved = e;  // value <- error: the value is destroyed
        REQUIRE_FALSE(moved.has_value());
        CHECK(moved.error().message == "stop");
        CHECK(counted::alive == 2);
        moved = a;  // error <- value
        REQUIRE(moved.has_value());
        CHECK(moved->text == "a");
        CHECK(counted::alive == 3);
        moved = result<counted>(counted("b"));  // value <- value
        CHECK(moved->text == "b");
        CHECK(counted::alive == 3);
        ecopy = result<counted>(error(errc::timeout, "slow"));  // error <- error
        CHECK(ecopy.error().code == errc::timeout);
        const auto& self = moved;
        moved = self;  // self-assignment changes nothing
        CHECK(moved->text == "b");
        CHECK(counted::alive == 3);
    }
    CHECK(counted::alive == 0);

    // A move-only value, and an error taken out of an rvalue result.
    result<std::unique_ptr<int>> p = std::make_unique<int>(7);
    result<std::unique_ptr<int>> q = std::move(p);
    REQUIRE(q.has_value());
    CHECK(**q == 7);
    auto owned = std::move(q).value();
    CHECK(*owned == 7);
    result<std::unique_ptr<int>> failed = error(errc::http_status, "gone", 410);
    const error taken = std::move(failed).error();
    CHECK(taken.http_status == 410);
    CHECK(result<int>(5).error().code == errc::unknown);  // a value's error() says so, never throws
}

namespace {

// Its moves and copies throw while `fail` is set.
struct fragile {
    static inline bool fail = false;
    int n = 0;
    explicit fragile(int v) : n(v) {}
    fragile(const fragile& o) : n(o.n) {
        if (fail) throw std::runtime_error("copy failed");
    }
    fragile(fragile&& o) : n(o.n) {  // NOLINT: throwing on purpose
        if (fail) throw std::runtime_error("move failed");
    }
    fragile& operator=(const fragile&) = default;
    fragile& operator=(fragile&&) = default;
};

}  // namespace

TEST_CASE("result: a value that fails to move in leaves the error it held, and traits follow T", "[result]") {
    static_assert(!std::is_copy_constructible_v<result<std::unique_ptr<int>>>);
    static_assert(!std::is_copy_assignable_v<result<std::unique_ptr<int>>>);
    static_assert(std::is_nothrow_move_constructible_v<result<std::unique_ptr<int>>>);
    static_assert(std::is_copy_constructible_v<result<std::string>>);
    static_assert(!std::is_nothrow_move_constructible_v<result<fragile>>);

    result<fragile> r = error(errc::timeout, "slow");
    result<fragile> v = fragile(3);
    fragile::fail = true;
    CHECK_THROWS_AS(r = std::move(v), std::runtime_error);
    CHECK_THROWS_AS(r = v, std::runtime_error);
    fragile::fail = false;
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::timeout);
    CHECK(r.error().message == "slow");
    r = v;
    REQUIRE(r.has_value());
    CHECK(r->n == 3);
}

}  // namespace test_result
