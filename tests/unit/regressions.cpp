// SPDX-License-Identifier: MIT
// One TEST_CASE per defect found by fuzzing, the soak or the security tests, named after the
// finding (docs/reliability.md lists them with the input that found each). Each one fails on the
// code as it was before its fix.
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/parse.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "catch.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace regressions {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;

TEST_CASE("fuzz_approval-1: an id ending in a truncated UTF-8 sequence is refused, nothing past it is read",
          "[regression][json][approve]") {
    // RapidJSON 1.1.0's validating Writer decodes a whole sequence from its lead byte without
    // looking at the string's length: "ab\xF0" followed in memory by continuation bytes was
    // written as "ab\xF0\x90\x80\x80", bytes that were not part of the id (a heap over-read, and
    // those bytes sent to the server). The buffer below holds exactly such a neighbour.
    const char memory[] = "ab\xF0\x90\x80\x80";
    const std::string_view id(memory, 3);  // "ab\xF0": a 4-byte lead with nothing after it

    forewarn::detail::json_writer w;
    CHECK_FALSE(w.string(id));
    CHECK(w.view().find("\x90") == std::string_view::npos);

    // Through the public writer, with ids long enough to live on the heap (past the small-string
    // buffer), so that under ASan a read past the end is reported, not just a wrong result.
    for (const char* tail : {"\xF0", "\xE2\x98", "\xC3", "\xF4\x8F\xBF"}) {
        std::string s = "EventId-0123456789abcdef-";
        s += tail;
        auto body = forewarn::azure::write_start_requests({s});
        INFO(s.size());
        REQUIRE_FALSE(body.has_value());
        CHECK(body.error().code == errc::invalid_argument);
        CHECK(body.error().message.find("UTF-8") != std::string::npos);
    }
    // Well-formed ids at the same places still pass, byte for byte.
    for (const char* tail : {"\xF0\x9F\x98\x80", "\xE2\x98\x83", "\xC3\xA9", "\xF4\x8F\xBF\xBF"}) {
        const std::string s = std::string("EventId-0123456789abcdef-") + tail;
        auto body = forewarn::azure::write_start_requests({s});
        REQUIRE(body.has_value());
        CHECK(body->find(s) != std::string::npos);
    }
    // The check that replaced RapidJSON's is as strict as it was: surrogates, overlong forms,
    // code points above U+10FFFF, stray continuation bytes, in values and in keys.
    for (const char* bad : {"\xED\xA0\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xF4\x90\x80\x80", "\xF8\x88\x80\x80\x80",
                            "\x80", "\xFF"}) {
        forewarn::detail::json_writer writer;
        INFO(std::strlen(bad));
        CHECK_FALSE(writer.string(bad));
        CHECK_FALSE(forewarn::detail::is_valid_utf8(bad));
    }
    forewarn::detail::json_writer keys;
    keys.begin_object();
    CHECK_FALSE(keys.key("k\xC3"));
    CHECK_FALSE(keys.complete());
}

TEST_CASE("fuzz_gce-1: a GCE endpoint without a host (\"http://\") is refused, not turned into \"http:\"",
          "[regression][gce]") {
    // The trailing-'/' trim ate the "//" of the scheme: "http://" became "http:", which has an
    // "authority" to url_authority, and every request went to "http:/computeMetadata/v1/...".
    for (const char* e : {"http://", "https://", "http:///", "http:////computeMetadata/v1/", "HTTP://"}) {
        auto r = forewarn::detail::gce_normalize_endpoint(e, "client_options::endpoint");
        INFO(e << " -> " << (r ? *r : r.error().describe()));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_argument);
    }
    forewarn::testing::fake_transport t;
    forewarn::gce::client_options o;
    o.endpoint = "http://";
    o.rate_limit = false;
    forewarn::gce::basic_metadata_client<forewarn::testing::fake_transport> c(o, t);
    auto d = c.fetch();
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().code == errc::invalid_argument);
    CHECK(t.request_count() == 0);
    // What must keep working.
    for (const auto& [in, out] : std::vector<std::pair<std::string, std::string>>{
             {"http://127.0.0.1:8080/", "http://127.0.0.1:8080"},
             {"http://metadata.google.internal/computeMetadata/v1/", "http://metadata.google.internal"},
             {"169.254.169.254", "http://169.254.169.254"}}) {
        auto r = forewarn::detail::gce_normalize_endpoint(in, "x");
        REQUIRE(r.has_value());
        CHECK(*r == out);
    }
}

TEST_CASE("validate() refused endpoints that fail on every poll: a port past 65535, an unclosed IPv6 bracket, "
          "a scheme without its ://",
          "[regression][endpoint]") {
    // They were accepted, and each poll failed instead of start() (docs/poller.md, docs/azure.md).
    using t = forewarn::testing::fake_transport;
    auto check_all = [](const std::string& endpoint) -> std::vector<forewarn::result<void>> {
        forewarn::azure::client_options a;
        a.endpoint = endpoint;
        forewarn::gce::client_options g;
        g.endpoint = endpoint;
        forewarn::aws::client_options w;
        w.endpoint = endpoint;
        return {forewarn::azure::basic_scheduled_events_client<t>(a).validate(),
                forewarn::gce::basic_metadata_client<t>(g).validate(),
                forewarn::aws::basic_instance_metadata_client<t>(w).validate()};
    };
    for (const char* bad : {"http://127.0.0.1:99999", "https://[::1", "http//host", "http:/host", "http://host:",
                            "http://host:0", "http://host:8o", "http://us er@host", "http://user@host",
                            "http://ho$t", "http://[]:80", "http://[::1]x"}) {
        for (const auto& r : check_all(bad)) {
            INFO(bad);
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error().code == errc::invalid_argument);
        }
    }
    for (const char* good : {"http://127.0.0.1:8080", "https://[::1]:443", "http://[fd00:ec2::254]", "fd00:ec2::254",
                             "metadata.google.internal.", "169.254.169.254:80/", "http://my_host-1.example:65535"}) {
        for (const auto& r : check_all(good)) {
            INFO(good << ": " << (r ? std::string() : r.error().describe()));
            CHECK(r.has_value());
        }
    }
}

}  // namespace regressions
