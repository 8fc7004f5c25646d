// SPDX-License-Identifier: MIT
// transport.hpp: check_request, what every transport refuses before sending (each transport's
// use of it: tests/integration/test_curl_transport.cpp, the Windows tests).
#include <forewarn/transport.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>

namespace test_transport {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::check_request;
using forewarn::errc;
using forewarn::http_request;

TEST_CASE("check_request: what no transport sends", "[transport]") {
    http_request ok;
    ok.url = "http://169.254.169.254/metadata/scheduledevents?api-version=2020-07-01";
    ok.headers = {{"Metadata", "true"}};
    CHECK_FALSE(check_request(ok));
    ok.url = "HTTPS://example.test/";
    CHECK_FALSE(check_request(ok));

    struct row {
        const char* what;
        http_request r;
        std::string says;
    };
    auto with = [&](auto change) {
        http_request r = ok;
        change(r);
        return r;
    };
    const row rows[] = {
        {"ftp", with([](http_request& r) { r.url = "ftp://host/"; }), "URL must start with http:// or https://"},
        {"space", with([](http_request& r) { r.url = "http://host/a b"; }), "URL contains a space or a control character"},
        {"NUL", with([](http_request& r) { r.url = std::string("http://host/a\0b", 15); }), "URL contains a space"},
        {"timeout", with([](http_request& r) { r.timeout = 0ms; }), "request timeout must be positive"},
        {"connect", with([](http_request& r) { r.connect_timeout = -1ms; }), "request connect_timeout must be positive"},
        {"XFF", with([](http_request& r) { r.headers.push_back({"x-forwarded-for", "10.0.0.1"}); }), "X-Forwarded-For is never sent"},
        {"name", with([](http_request& r) { r.headers.push_back({"Bad Name", "v"}); }), "invalid header name \"Bad Name\""},
        {"value", with([](http_request& r) { r.headers.push_back({"X", "a\r\nY: b"}); }), "header X has a CR, LF or NUL"},
    };
    for (const auto& r : rows) {
        INFO(r.what);
        auto e = check_request(r.r);
        REQUIRE(e);
        CHECK(e->code == errc::invalid_argument);
        CHECK(e->message.find(r.says) == 0);
    }
}

}  // namespace test_transport
