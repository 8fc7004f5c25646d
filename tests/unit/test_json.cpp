// SPDX-License-Identifier: MIT
// json.hpp: forewarn's one JSON form of an event and a change, and reading it back.
#include <forewarn/json.hpp>

#include "catch.hpp"

#include <chrono>
#include <string>

namespace test_json {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::change;
using forewarn::change_kind;
using forewarn::event;
using forewarn::event_source;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::recover_reason;

namespace {

event full_event() {
    event e;
    e.id = "C7061BAC-AFDC-4513-B24B-AA5F13A16123";
    e.type = event_type::freeze;
    e.raw_type = "Freeze";
    e.status = event_status::scheduled;
    e.raw_status = "Scheduled";
    e.resource_type = "VirtualMachine";
    e.resources = {"WestNO_0", "WestNO_1"};
    e.not_before = std::chrono::system_clock::time_point(1649716018s);
    e.description = "Virtual machine is being paused because of a memory-preserving Live Migration operation.";
    e.source = event_source::platform;
    e.raw_source = "Platform";
    e.duration_in_seconds = 5;
    return e;
}

}  // namespace

TEST_CASE("json: an event in its documented form", "[json][public]") {
    auto text = forewarn::to_json(full_event());
    REQUIRE(text);
    CHECK(*text ==
          R"({"id":"C7061BAC-AFDC-4513-B24B-AA5F13A16123","type":"freeze","raw_type":"Freeze","status":"scheduled",)"
          R"("raw_status":"Scheduled","resource_type":"VirtualMachine","resources":["WestNO_0","WestNO_1"],)"
          R"("not_before":"2022-04-11T22:26:58Z","description":"Virtual machine is being paused because of a )"
          R"(memory-preserving Live Migration operation.","source":"platform","raw_source":"Platform","duration_s":5})");
}

TEST_CASE("json: a document is its cloud, incarnation, service time and events, each in the event form",
          "[json][public]") {
    forewarn::document d;
    d.origin = forewarn::cloud::azure;
    d.incarnation = "42";
    d.service_time = std::chrono::system_clock::time_point(1649716000s);
    d.events = {full_event()};
    auto text = forewarn::to_json(d);
    REQUIRE(text);
    CHECK(text->rfind(R"({"cloud":"azure","incarnation":"42","service_time":"2022-04-11T22:26:40Z","events":[)", 0) == 0);
    CHECK(text->find(*forewarn::to_json(full_event())) != std::string::npos);
    forewarn::document empty;
    CHECK(*forewarn::to_json(empty) == R"({"cloud":"none","incarnation":"","service_time":null,"events":[]})");
    d.events[0].description = std::string("bad \xC3 byte");
    CHECK_FALSE(forewarn::to_json(d));
    auto replaced = forewarn::to_json(d, forewarn::invalid_utf8::replace);
    REQUIRE(replaced);
    CHECK(replaced->find("bad \xEF\xBF\xBD byte") != std::string::npos);
}

TEST_CASE("json: absent members are null - -1 stays -1", "[json][public]") {
    event e;
    e.id = "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE";
    e.type = event_type::live_migrate;
    auto text = forewarn::to_json(e);
    REQUIRE(text);
    CHECK(text->find(R"("not_before":null)") != std::string::npos);
    CHECK(text->find(R"("source":null)") != std::string::npos);
    CHECK(text->find("raw_source") == std::string::npos);
    CHECK(text->find(R"("duration_s":null)") != std::string::npos);
    e.duration_in_seconds = -1;
    CHECK(forewarn::to_json(e)->find(R"("duration_s":-1)") != std::string::npos);
}

TEST_CASE("json: every event reads back equal, sub-second NotBefore and wire words included", "[json][public]") {
    auto e = full_event();
    e.not_before = *e.not_before + 250ms;
    e.type = event_type::unknown;
    e.raw_type = "LiveMigration";  // a word this version does not know survives
    e.source = event_source::unknown;
    e.raw_source = "Customer";
    for (auto status : {event_status::scheduled, event_status::started, event_status::completed,
                        event_status::cancelled, event_status::unknown}) {
        e.status = status;
        auto text = forewarn::to_json(e);
        REQUIRE(text);
        auto back = forewarn::event_from_json(*text);
        REQUIRE(back);
        CHECK(*back == e);
    }
}

TEST_CASE("json: a change is the event's members between its kind and its incarnation", "[json][public]") {
    change c;
    c.kind = change_kind::recover;
    c.event = full_event();
    c.reason = recover_reason::unknown;
    c.evidence = "a gap of 6.0 s in watching";
    c.origin = forewarn::cloud::azure;
    c.incarnation = "5";
    auto text = forewarn::to_json(c);
    REQUIRE(text);
    CHECK(text->rfind(R"({"change":"recover","cloud":"azure","id":"C7061BAC)", 0) == 0);
    CHECK(text->find(R"("reason":"unknown","evidence":"a gap of 6.0 s in watching","observed_pause_s":null,)"
                     R"("observed_pause_seen_by":null,"incarnation":"5"})") != std::string::npos);
    auto back = forewarn::change_from_json(*text);
    REQUIRE(back);
    CHECK(back->kind == change_kind::recover);
    CHECK(back->event == c.event);
    CHECK(back->reason == recover_reason::unknown);
    CHECK(back->evidence == c.evidence);
    CHECK(back->origin == forewarn::cloud::azure);
    CHECK(back->incarnation == "5");
    CHECK_FALSE(back->pause);
    c.kind = change_kind::prepare;
    CHECK(forewarn::to_json(c)->find("reason") == std::string::npos);  // recover only
    CHECK(forewarn::to_json(c)->find("observed_pause") == std::string::npos);
}

TEST_CASE("json: a recover's observed pause, in seconds to the millisecond, and the clock that saw it", "[json][public]") {
    change c;
    c.kind = change_kind::recover;
    c.event = full_event();
    c.reason = recover_reason::completed;
    forewarn::observed_pause op;
    op.monotonic_gap = std::chrono::milliseconds(2900);
    op.wall_jump = std::chrono::microseconds(3012400);
    op.longest = op.wall_jump;
    c.pause = op;
    auto text = forewarn::to_json(c);
    REQUIRE(text);
    CHECK(text->find(R"("observed_pause_s":3.012,"observed_pause_seen_by":"wall",)") != std::string::npos);
    auto back = forewarn::change_from_json(*text);
    REQUIRE(back);
    REQUIRE(back->pause);
    CHECK(back->pause->longest == std::chrono::milliseconds(3012));
    CHECK(back->pause->seen_by() == "wall");
    for (const char* bad : {R"("observed_pause_s":"3")", R"("observed_pause_s":-1)",
                            R"("observed_pause_s":3,"observed_pause_seen_by":"Wall")",
                            R"("observed_pause_s":null,"observed_pause_seen_by":"wall")"}) {
        std::string t = *text;
        t.replace(t.find(R"("observed_pause_s":3.012)"), std::string(R"("observed_pause_s":3.012)").size(), bad);
        CAPTURE(t);
        CHECK_FALSE(forewarn::change_from_json(t));
    }
}

TEST_CASE("json: text that is not UTF-8 fails, or is replaced for log lines", "[json][public]") {
    auto e = full_event();
    e.description = std::string("cut \xE2\x82", 6);
    auto strict = forewarn::to_json(e);
    REQUIRE_FALSE(strict);
    CHECK(strict.error().code == forewarn::errc::invalid_argument);
    auto lossy = forewarn::to_json(e, forewarn::invalid_utf8::replace);
    REQUIRE(lossy);
    CHECK(lossy->find("\"description\":\"cut \xEF\xBF\xBD\xEF\xBF\xBD\"") != std::string::npos);
}

TEST_CASE("json: reading refuses wrong types with the member named, and ignores unknown members", "[json][public]") {
    CHECK(forewarn::event_from_json(R"({"id":"A","type":"reboot","extra":[1,2]})"));
    auto no_id = forewarn::event_from_json(R"({"type":"reboot"})");
    REQUIRE_FALSE(no_id);
    CHECK(no_id.error().field == "id");
    auto bad = forewarn::event_from_json(R"({"id":"A","resources":"vm_0"})");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().field == "resources");
    auto date = forewarn::event_from_json(R"({"id":"A","not_before":"yesterday"})");
    REQUIRE_FALSE(date);
    CHECK(date.error().field == "not_before");
    CHECK_FALSE(forewarn::change_from_json(R"({"change":"exploded","id":"A"})"));
    CHECK_FALSE(forewarn::event_from_json("[]"));
    CHECK_FALSE(forewarn::event_from_json(""));
}

TEST_CASE("json_string: a string of one's own JSON line, escaped - bad UTF-8 refused or replaced", "[json]") {
    using forewarn::invalid_utf8;
    using forewarn::json_string;
    CHECK(json_string("vm0").value() == "\"vm0\"");
    CHECK(json_string("a\"b\\c\nd").value() == "\"a\\\"b\\\\c\\nd\"");
    CHECK(json_string(std::string("\0x", 2)).value() == "\"\\u0000x\"");
    CHECK(json_string("caf\xC3\xA9").value() == "\"caf\xC3\xA9\"");
    auto bad = json_string("bad\xC3");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == forewarn::errc::invalid_argument);
    CHECK(json_string("bad\xC3", invalid_utf8::replace).value() == "\"bad\xEF\xBF\xBD\"");
}

}  // namespace test_json
