// SPDX-License-Identifier: MIT
#include <forewarn/detail/json.hpp>

#include "catch.hpp"

#include <string>

namespace test_detail_json {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::detail::json_limits;
using forewarn::detail::json_writer;
using forewarn::detail::local_json;
using forewarn::detail::parse_json;

namespace {
std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }
}  // namespace

TEST_CASE("parse_json accepts a whole JSON text", "[json]") {
    auto d = parse_json(R"( {"a":[1,"two",{"b":null}],"c":true} )");
    REQUIRE(d.has_value());
    REQUIRE(d->IsObject());
    CHECK((*d)["a"].Size() == 3);
    // The text is copied: the document outlives its source.
    rapidjson::Document kept;
    {
        std::string text = R"({"k":"value"})";
        auto r = parse_json(text);
        REQUIRE(r.has_value());
        kept = std::move(*r);
        text.assign(text.size(), 'x');
    }
    CHECK(forewarn::detail::json_string_view(kept["k"]) == "value");
}

TEST_CASE("parse_json limits nesting depth before parsing", "[json]") {
    CHECK(parse_json(nested(64)).has_value());
    auto deep = parse_json(nested(65));
    REQUIRE_FALSE(deep.has_value());
    CHECK(deep.error().code == errc::parse_error);
    CHECK(deep.error().offset == 64);
    CHECK(parse_json(nested(1000000)).error().code == errc::parse_error);
    CHECK(parse_json(std::string(1000000, '{')).error().code == errc::parse_error);
    json_limits tight;
    tight.max_depth = 2;
    CHECK(parse_json("[[1]]", tight).has_value());
    CHECK_FALSE(parse_json("[[[1]]]", tight).has_value());
    CHECK_FALSE(parse_json(R"({"a":{"b":{}}})", tight).has_value());
    // Brackets inside strings, escaped quotes included, do not count.
    CHECK(parse_json(R"(["[[[[", "\"[[[[", "\\"])", tight).has_value());
}

TEST_CASE("parse_json refuses malformed text with an offset", "[json]") {
    struct bad {
        std::string text;
        std::size_t offset;
    };
    const bad cases[] = {{"", 0}, {"   ", 3}, {"{", 1}, {"[1,]", 3}, {"[1] [2]", 4}, {"[1]x", 3},
                         {"{\"a\":1,}", 7}, {"nul", 3}, {"'a'", 0}, {"[01]", 2}};
    for (const auto& c : cases) {
        INFO('"' << c.text << '"');
        auto r = parse_json(c.text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::parse_error);
        CHECK(r.error().offset == c.offset);
        CHECK(r.error().message.find("malformed JSON") != std::string::npos);
    }
}

TEST_CASE("parse_json validates UTF-8 and keeps embedded NULs", "[json]") {
    for (const std::string& bad : {std::string("[\"\x80\"]"), std::string("[\"\xc3\"]"), std::string("[\"\xed\xa0\x80\"]"),
                                  std::string("[\"\xc0\xaf\"]"), std::string("[\"\xf8\x88\x80\x80\x80\"]")}) {
        auto r = parse_json(bad);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::parse_error);
    }
    auto ok = parse_json("[\"a\\u0000b\", \"\xe2\x82\xac\"]");
    REQUIRE(ok.has_value());
    CHECK(forewarn::detail::json_string_view((*ok)[0]) == std::string("a\0b", 3));
    CHECK(forewarn::detail::json_string_view((*ok)[1]) == "\xe2\x82\xac");
    // A raw NUL byte is not JSON, nor is anything after one (RapidJSON alone took it for the end).
    for (const std::string& nul : {std::string("[1]\0", 4), std::string("[1]\0garbage{", 13), std::string("[\"a\0b\"]", 7)}) {
        auto r = parse_json(nul);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::parse_error);
        CHECK(nul.at(r.error().offset) == '\0');
    }
}

TEST_CASE("local_json parses as parse_json does, past its own buffer, and refuses the same texts", "[json]") {
    // Small (inside the buffer), and far past it: 6,000 numbers and a 20 kB string, 60 kB.
    std::string big = "{\"n\":[";
    for (int i = 0; i < 6000; ++i) big += (i ? "," : "") + std::to_string(i);
    big += "],\"s\":\"" + std::string(20000, 'x') + "\"}";
    for (const std::string& text : {std::string(R"( {"a":[1,"two",{"b":null}],"c":true} )"), big}) {
        local_json local;
        REQUIRE(local.parse(text).has_value());
        auto heap = parse_json(text);
        REQUIRE(heap.has_value());
        CHECK(local.document() == *heap);  // RapidJSON's deep comparison
    }
    {
        local_json local;
        REQUIRE(local.parse(big).has_value());
        const auto& n = local.document()["n"];
        REQUIRE(n.Size() == 6000);
        CHECK(n[5999].GetInt() == 5999);
        CHECK(local.document()["s"].GetStringLength() == 20000);
    }
    // The same refusals, with the same error.
    for (const std::string& bad : {nested(65), std::string("[1,]"), std::string("[\"a\0b\"]", 7), std::string("[\"\xff\"]")}) {
        local_json local;
        auto r = local.parse(bad);
        auto heap = parse_json(bad);
        REQUIRE_FALSE(r.has_value());
        REQUIRE_FALSE(heap.has_value());
        CHECK(r.error().code == heap.error().code);
        CHECK(r.error().message == heap.error().message);
        CHECK(r.error().offset == heap.error().offset);
    }
}

TEST_CASE("json_member, json_type_name and the shape errors", "[json]") {
    auto d = parse_json(R"({"s":"x","n":1,"a":[],"o":{},"b":false,"z":null})");
    REQUIRE(d.has_value());
    using forewarn::detail::json_member;
    using forewarn::detail::json_type_name;
    REQUIRE(json_member(*d, "s") != nullptr);
    CHECK(json_member(*d, "S") == nullptr);  // member names are case-sensitive
    CHECK(json_member(*d, "missing") == nullptr);
    CHECK(json_type_name(*json_member(*d, "s")) == "string");
    CHECK(json_type_name(*json_member(*d, "n")) == "number");
    CHECK(json_type_name(*json_member(*d, "a")) == "array");
    CHECK(json_type_name(*json_member(*d, "o")) == "object");
    CHECK(json_type_name(*json_member(*d, "b")) == "boolean");
    CHECK(json_type_name(*json_member(*d, "z")) == "null");
    auto e = forewarn::detail::json_type_error("Events[0].EventId", "string", *json_member(*d, "n"));
    CHECK(e.code == errc::invalid_document);
    CHECK(e.field == "Events[0].EventId");
    CHECK(e.describe() == "invalid_document at Events[0].EventId: expected string, got number");
}

TEST_CASE("json_writer writes and escapes", "[json]") {
    json_writer w;
    w.begin_object();
    w.key("s");
    w.string(std::string("q\"b\\c\n\x01\0", 8));
    w.key("i");
    w.int64(-5);
    w.key("u");
    w.uint64(18446744073709551615ULL);
    w.key("t");
    w.boolean(true);
    w.key("n");
    w.null();
    w.key("d");
    w.number(0.5);
    w.key("a");
    w.begin_array();
    w.end_array();
    w.end_object();
    REQUIRE(w.ok());
    REQUIRE(w.complete());
    CHECK(w.str() == R"({"s":"q\"b\\c\n\u0001\u0000","i":-5,"u":18446744073709551615,"t":true,"n":null,"d":0.5,"a":[]})");
    auto back = parse_json(w.view());
    REQUIRE(back.has_value());
    CHECK(forewarn::detail::json_string_view((*back)["s"]) == std::string("q\"b\\c\n\x01\0", 8));
}

TEST_CASE("json_writer refuses invalid UTF-8 and reports incomplete output", "[json]") {
    json_writer w;
    w.begin_array();
    CHECK(w.string("ok"));
    CHECK_FALSE(w.string("\xff"));
    CHECK_FALSE(w.ok());
    CHECK_FALSE(w.string("later"));  // stays failed
    w.end_array();
    CHECK_FALSE(w.complete());

    json_writer open;
    open.begin_object();
    CHECK(open.ok());
    CHECK_FALSE(open.complete());
}

}  // namespace test_detail_json
