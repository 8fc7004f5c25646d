// SPDX-License-Identifier: MIT
// aws::sign_v4 against AWS's Signature Version 4 test suite (tests/unit/data/sigv4/, Apache 2.0,
// see its README): for every case that normalizes its path, the canonical request, the string to
// sign, the signature and the Authorization header, byte for byte. Then what the suite does not
// cover: the Host taken from the URL, and the requests that are refused.
#include <forewarn/aws/sigv4.hpp>
#include <forewarn/time.hpp>

#include "catch.hpp"

#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace test_sigv4 {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::http_method;
using forewarn::http_request;
using forewarn::aws::credentials;
using forewarn::aws::sigv4_options;

namespace {

const std::string suite = std::string(FOREWARN_SOURCE_DIR) + "/tests/unit/data/sigv4/";

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// request.txt: "METHOD PATH HTTP/1.1", then "Name:value" lines (a line starting with a space
// continues the value before it), then a blank line and the body.
http_request read_request(const std::string& text) {
    http_request r;
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    const auto sp1 = line.find(' ');
    const auto sp2 = line.rfind(' ');
    const std::string method = line.substr(0, sp1);
    r.method = method == "POST" ? http_method::post : method == "PUT" ? http_method::put : http_method::get;
    const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    std::string host;
    while (std::getline(in, line) && !line.empty()) {
        if (line[0] == ' ' || line[0] == '\t') {
            REQUIRE_FALSE(r.headers.empty());
            r.headers.back().value += " " + line;
            continue;
        }
        const auto colon = line.find(':');
        REQUIRE(colon != std::string::npos);
        r.headers.push_back({line.substr(0, colon), line.substr(colon + 1)});
        if (r.headers.back().name == "Host") host = r.headers.back().value;
    }
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    r.body = body;
    r.url = "https://" + host + target;
    return r;
}

std::chrono::system_clock::time_point time_of(const char* text) {
    auto t = forewarn::parse_time(text);
    REQUIRE(t);
    REQUIRE(t->has_value());
    return **t;
}

std::string authorization_of(const std::string& signed_request) {
    std::istringstream in(signed_request);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("Authorization:", 0) == 0) return line.substr(14);
    return {};
}

}  // namespace

TEST_CASE("sign_v4: every normalized case of AWS's SigV4 test suite, header signing", "[sigv4]") {
    int cases = 0;
    for (const auto& dir : std::filesystem::directory_iterator(suite)) {
        if (!dir.is_directory()) continue;
        const std::string name = dir.path().filename().string();
        const std::string at = suite + name + "/";
        INFO("case " << name);
        rapidjson::Document ctx;
        const std::string ctx_text = slurp(at + "context.json");
        REQUIRE_FALSE(ctx.Parse(ctx_text.c_str()).HasParseError());
        REQUIRE(ctx["normalize"].GetBool());
        credentials c;
        const auto& cr = ctx["credentials"];
        c.access_key_id = cr["access_key_id"].GetString();
        c.secret_access_key = cr["secret_access_key"].GetString();
        if (cr.HasMember("token")) c.session_token = cr["token"].GetString();
        sigv4_options o;
        o.region = ctx["region"].GetString();
        o.service = ctx["service"].GetString();
        o.sign_body = ctx["sign_body"].GetBool();
        o.sign_session_token = !(ctx.HasMember("omit_session_token") && ctx["omit_session_token"].GetBool());
        const auto when = time_of(ctx["timestamp"].GetString());

        auto req = read_request(slurp(at + "request.txt"));
        auto s = forewarn::aws::sign_v4(req, c, o, when);
        REQUIRE(s);
        CHECK(s->canonical_request == slurp(at + "header-canonical-request.txt"));
        CHECK(s->string_to_sign == slurp(at + "header-string-to-sign.txt"));
        CHECK(s->signature == slurp(at + "header-signature.txt"));
        CHECK(s->authorization == authorization_of(slurp(at + "header-signed-request.txt")));
        const auto* auth = forewarn::find_header(req.headers, "authorization");
        REQUIRE(auth);
        CHECK(*auth == s->authorization);
        const auto* date = forewarn::find_header(req.headers, "x-amz-date");
        REQUIRE(date);
        CHECK(*date == "20150830T123600Z");
        if (!c.session_token.empty()) {
            const auto* token = forewarn::find_header(req.headers, "x-amz-security-token");
            REQUIRE(token);
            CHECK(*token == c.session_token);
        }
        ++cases;
    }
    CHECK(cases == 31);  // the README's count: a case lost from the folder fails here
}

TEST_CASE("sign_v4: Host comes from the URL without the scheme's own port, and the signature is stable",
          "[sigv4]") {
    credentials c{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "", std::nullopt};
    sigv4_options o{"us-east-1", "autoscaling"};
    const auto when = time_of("2015-08-30T12:36:00Z");
    http_request a;
    a.method = http_method::post;
    a.url = "https://autoscaling.us-east-1.amazonaws.com:443/";
    a.body = "Action=RecordLifecycleActionHeartbeat&Version=2011-01-01";
    a.headers.push_back({"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"});
    auto b = a;
    b.url = "https://autoscaling.us-east-1.amazonaws.com";
    const auto sa = forewarn::aws::sign_v4(a, c, o, when);
    const auto sb = forewarn::aws::sign_v4(b, c, o, when);
    REQUIRE(sa);
    REQUIRE(sb);
    CHECK(*forewarn::find_header(a.headers, "host") == "autoscaling.us-east-1.amazonaws.com");
    CHECK(sa->signature == sb->signature);
    CHECK(sa->canonical_request.find("\nhost:autoscaling.us-east-1.amazonaws.com\n") != std::string::npos);
    http_request other_port = b;
    other_port.headers.resize(1);
    other_port.url = "http://127.0.0.1:8080/";
    REQUIRE(forewarn::aws::sign_v4(other_port, c, o, when));
    CHECK(*forewarn::find_header(other_port.headers, "host") == "127.0.0.1:8080");
    // A body changed after signing no longer matches: the payload hash is part of the signature.
    http_request changed = a;
    changed.headers.resize(1);
    changed.body += "&x=1";
    CHECK(forewarn::aws::sign_v4(changed, c, o, when)->signature != sa->signature);
}

TEST_CASE("sign_v4: what cannot be signed is refused, and the request is left as it was", "[sigv4]") {
    credentials c{"AKIDEXAMPLE", "secret", "", std::nullopt};
    sigv4_options o{"us-east-1", "autoscaling"};
    const auto when = time_of("2015-08-30T12:36:00Z");
    auto refused = [&](http_request r, credentials cr, sigv4_options op) {
        const auto before = r.headers.size();
        auto s = forewarn::aws::sign_v4(r, cr, op, when);
        CHECK(r.headers.size() == before);
        REQUIRE_FALSE(s);
        CHECK(s.error().code == forewarn::errc::invalid_argument);
        return s.error().message;
    };
    http_request r;
    r.url = "https://autoscaling.us-east-1.amazonaws.com/";
    CHECK(refused(r, c, {"", "autoscaling"}).find("region") != std::string::npos);
    CHECK(refused(r, {"", "secret", "", {}}, o).find("access key") != std::string::npos);
    auto relative = r;
    relative.url = "/";
    CHECK(refused(relative, c, o).find("not absolute") != std::string::npos);
    auto no_host = r;
    no_host.url = "https:///x";
    CHECK(refused(no_host, c, o).find("no host") != std::string::npos);
    auto split = r;
    split.headers.push_back({"X-Note", "a\r\nInjected: 1"});  // network text must not become a header
    CHECK(refused(split, c, o).find("line break") != std::string::npos);
    auto twice = r;
    REQUIRE(forewarn::aws::sign_v4(twice, c, o, when));
    CHECK(refused(twice, c, o).find("signed already") != std::string::npos);
}

TEST_CASE("uri_encode: unreserved characters stay, every other byte is %XX in uppercase", "[sigv4]") {
    CHECK(forewarn::aws::uri_encode("AZaz09-._~") == "AZaz09-._~");
    CHECK(forewarn::aws::uri_encode("a b/c=d&e+f") == "a%20b%2Fc%3Dd%26e%2Bf");
    CHECK(forewarn::aws::uri_encode("a b/c", true) == "a%20b/c");
    CHECK(forewarn::aws::uri_encode("\xe1\x88\xb4") == "%E1%88%B4");
    CHECK(forewarn::aws::uri_encode("aws:autoscaling:groupName") == "aws%3Aautoscaling%3AgroupName");
}

}  // namespace test_sigv4
