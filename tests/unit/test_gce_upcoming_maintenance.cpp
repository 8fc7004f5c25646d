// SPDX-License-Identifier: MIT
#include <forewarn/gce/upcoming_maintenance.hpp>

#include "catch.hpp"

#include <fstream>
#include <iterator>
#include <string>

namespace test_gce_upcoming_maintenance {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::event_status;
using forewarn::event_type;
namespace gce = forewarn::gce;

namespace {
std::string data(const std::string& name) {
    std::ifstream in(std::string(FOREWARN_SOURCE_DIR) + "/tests/unit/data/gce/" + name, std::ios::binary);
    REQUIRE(in.good());
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
}  // namespace

TEST_CASE("gce upcoming-maintenance: the documented answer becomes a scheduled maintenance event", "[gce][upcoming]") {
    auto m = gce::parse_upcoming_maintenance(200, data("upcoming-maintenance.json"));
    REQUIRE(m.has_value());
    REQUIRE(m->has_value());
    const auto& w = **m;
    CHECK(w.type == "SCHEDULED");
    CHECK(w.status == "PENDING");
    CHECK(w.can_reschedule);
    CHECK(w.reasons == std::vector<std::string>{"PLANNED_UPDATE"});
    REQUIRE(w.window_start);
    CHECK(forewarn::format_iso8601(*w.window_start) == "2026-12-03T10:00:00Z");
    const auto e = gce::to_event(w);
    CHECK(e.id == "upcoming-maintenance");
    CHECK(e.type == event_type::maintenance);
    CHECK(e.raw_type == "SCHEDULED");
    CHECK(e.status == event_status::scheduled);
    CHECK(e.not_before == w.window_start);
    CHECK(e.description.find("PLANNED_UPDATE") != std::string::npos);

    auto ongoing = gce::parse_upcoming_maintenance(
        200, R"({"type":"UNSCHEDULED","maintenance_status":"ONGOING","window_start_time":"2026-12-03T10:00:00Z","can_reschedule":false})");
    REQUIRE(ongoing.has_value());
    REQUIRE(ongoing->has_value());
    CHECK(gce::to_event(**ongoing).status == event_status::started);
    CHECK_FALSE((*ongoing)->can_reschedule);
}

TEST_CASE("gce upcoming-maintenance: its odd answers mean nothing is announced - not errors", "[gce][upcoming]") {
    struct row {
        int status;
        const char* body;
    };
    for (const auto& r : {row{200, "{}"}, row{200, "NONE"}, row{200, " none\n"}, row{200, ""}, row{404, "Not Found"},
                          row{503, R"({"error": "no notifications have been received yet, try again later"})"}}) {
        INFO(r.status << " " << r.body);
        auto m = gce::parse_upcoming_maintenance(r.status, r.body);
        REQUIRE(m.has_value());
        CHECK_FALSE(m->has_value());
    }
}

TEST_CASE("gce upcoming-maintenance: other statuses and malformed bodies are clear errors", "[gce][upcoming]") {
    struct row {
        int status;
        const char* body;
        errc code;
        const char* field;
    };
    for (const auto& r : {row{503, "busy", errc::http_status, ""}, row{500, "{}", errc::http_status, ""},
                          row{200, "[1]", errc::invalid_document, "upcoming-maintenance"},
                          row{200, "SCHEDULED", errc::parse_error, ""},
                          row{200, R"({"type":1})", errc::invalid_document, "upcoming-maintenance.type"},
                          row{200, R"({"type":"SCHEDULED","window_start_time":"soon"})", errc::parse_error,
                              "upcoming-maintenance.window_start_time"},
                          row{200, R"({"type":"SCHEDULED","maintenance_reasons":"PLANNED"})", errc::invalid_document,
                              "upcoming-maintenance.maintenance_reasons"},
                          row{200, R"({"unrelated":"x"})", errc::invalid_document, "upcoming-maintenance"}}) {
        INFO(r.status << " " << r.body);
        auto m = gce::parse_upcoming_maintenance(r.status, r.body);
        REQUIRE_FALSE(m.has_value());
        CHECK(m.error().code == r.code);
        if (*r.field) CHECK(m.error().field == r.field);
    }
}

}  // namespace test_gce_upcoming_maintenance
