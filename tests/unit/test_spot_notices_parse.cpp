// SPDX-License-Identifier: MIT
// The reclaim notices of Alibaba and Tencent and AWS Auto Scaling's target lifecycle state: the
// wire words to events (the parsers alone, no client).
#include <forewarn/alibaba/metadata_client.hpp>
#include <forewarn/aws/parse.hpp>
#include <forewarn/tencent/metadata_client.hpp>
#include <forewarn/time.hpp>

#include "catch.hpp"

#include <string>

namespace test_spot_notices_parse {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::event_status;
using forewarn::event_type;

TEST_CASE("alibaba: termination-time is a preempt at that UTC time - anything but an ISO 8601 time is refused",
          "[alibaba][parse]") {
    auto e = forewarn::alibaba::parse_termination_time("2015-01-05T18:02:00Z\n");
    REQUIRE(e);
    CHECK(e->id == "spot-termination");
    CHECK(e->type == event_type::preempt);
    CHECK(e->raw_type == "termination-time");
    CHECK(e->status == event_status::scheduled);
    REQUIRE(e->not_before);
    CHECK(forewarn::format_iso8601(*e->not_before) == "2015-01-05T18:02:00Z");
    for (const char* bad : {"", "   ", "2015-01-05 18:02:00", "2015-01-05T18:02:00", "<html>404</html>", "null",
                            "2015-13-05T18:02:00Z"}) {
        INFO(bad);
        auto r = forewarn::alibaba::parse_termination_time(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_document);
        CHECK(r.error().field == "termination-time");
    }
}

TEST_CASE("tencent: termination-time is written in UTC+8 - the event's not_before is that instant in UTC",
          "[tencent][parse]") {
    auto e = forewarn::tencent::parse_termination_time("2018-08-18 12:05:33");
    REQUIRE(e);
    CHECK(e->id == "spot-termination");
    CHECK(e->type == event_type::preempt);
    REQUIRE(e->not_before);
    CHECK(forewarn::format_iso8601(*e->not_before) == "2018-08-18T04:05:33Z");
    auto midnight = forewarn::tencent::parse_termination_time("2018-08-19 00:01:00\n");  // the day before in UTC
    REQUIRE(midnight);
    CHECK(forewarn::format_iso8601(*midnight->not_before) == "2018-08-18T16:01:00Z");
    for (const char* bad : {"", "2018-08-18T12:05:33Z", "2018-08-18 12:05", "2018-08-18 12:05:33+08:00", "2018/08/18 12:05:33",
                            "2018-02-30 12:05:33", "2018-08-18 25:05:33", "2018-08-18 12:05:3x"}) {
        INFO(bad);
        auto r = forewarn::tencent::parse_termination_time(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_document);
    }
}

TEST_CASE("aws: the Auto Scaling target lifecycle state - Terminated and Warmed:Terminated are a terminate notice",
          "[aws][parse][autoscaling]") {
    for (const char* state : {"Terminated", "Warmed:Terminated\n"}) {
        INFO(state);
        auto e = forewarn::aws::parse_target_lifecycle_state(state);
        REQUIRE(e);
        REQUIRE(e->has_value());
        CHECK((*e)->id == "autoscaling-termination");
        CHECK((*e)->type == event_type::terminate);
        CHECK((*e)->raw_type == forewarn::detail::trim(state));
        CHECK((*e)->status == event_status::scheduled);
        CHECK_FALSE((*e)->not_before.has_value());
    }
    for (const char* state : {"InService", "Detached", "Standby", "Warmed:Pending", "Warmed:Running", "Warmed:Stopped",
                              "Warmed:Hibernated", "Pending", "terminated", "SomethingNew"}) {
        INFO(state);
        auto e = forewarn::aws::parse_target_lifecycle_state(state);
        REQUIRE(e);
        CHECK_FALSE(e->has_value());
    }
    for (const char* bad : {"", "<html><body>404 - Not Found</body></html>", "{\"state\":\"Terminated\"}", "In Service"}) {
        INFO(bad);
        auto e = forewarn::aws::parse_target_lifecycle_state(bad);
        REQUIRE_FALSE(e);
        CHECK(e.error().code == errc::invalid_document);
    }
}

}  // namespace test_spot_notices_parse
