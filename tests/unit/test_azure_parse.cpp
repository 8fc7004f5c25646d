// SPDX-License-Identifier: MIT
#include <forewarn/azure/parse.hpp>
#include <forewarn/detail/json.hpp>

#include "catch.hpp"

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace test_azure_parse {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::document;
using forewarn::errc;
using forewarn::event_source;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::azure::parse_document;
using forewarn::azure::write_start_requests;

namespace {

std::string seed(const std::string& name) {
    std::ifstream in(std::string(FOREWARN_SOURCE_DIR) + "/tests/unit/data/azure/" + name, std::ios::binary);
    INFO("tests/unit/data/azure/" << name);
    REQUIRE(in.good());
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::chrono::system_clock::time_point epoch_s(std::int64_t s) {
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(s)));
}

document parsed(const std::string& body, std::string_view version = forewarn::azure::latest_api_version) {
    auto r = parse_document(body, version);
    INFO(body);
    INFO((r ? std::string("ok") : r.error().describe()));
    REQUIRE(r.has_value());
    CHECK(r->origin == forewarn::cloud::azure);
    return *r;
}

forewarn::error rejected(const std::string& body, errc code) {
    auto r = parse_document(body);
    INFO(body.substr(0, 200));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == code);
    CHECK_FALSE(r.error().message.empty());
    return r.error();
}

// One event with `member` replaced by `json` (or removed when json is empty).
std::string with_member(const std::string& member, const std::string& json) {
    std::map<std::string, std::string> m = {{"EventId", R"("e1")"},
                                            {"EventType", R"("Reboot")"},
                                            {"EventStatus", R"("Scheduled")"},
                                            {"ResourceType", R"("VirtualMachine")"},
                                            {"Resources", R"(["vm0"])"},
                                            {"NotBefore", R"("Mon, 11 Apr 2022 22:26:58 GMT")"},
                                            {"Description", R"("d")"},
                                            {"EventSource", R"("Platform")"},
                                            {"DurationInSeconds", "5"}};
    if (json.empty())
        m.erase(member);
    else
        m[member] = json;
    std::string ev;
    for (const auto& [k, v] : m) ev += (ev.empty() ? "" : ",") + ("\"" + k + "\":" + v);
    return R"({"DocumentIncarnation":3,"Events":[{"EventId":"ok","EventType":"Freeze","EventStatus":"Started"},{)" +
           ev + "}]}";
}

// The seeds' schemas with their placeholders filled in and alternative number `alt` of each
// `"A" | "B" | ...` chosen: the seeds' own shapes, made into JSON the way a service would send them.
std::string fill(std::string text, const std::map<std::string, std::string>& values, std::size_t alt,
                 std::vector<std::string>* chosen_type = nullptr) {
    for (const auto& [k, v] : values) {
        for (auto p = text.find(k); p != std::string::npos; p = text.find(k, p + v.size())) text.replace(p, k.size(), v);
    }
    static const std::regex alts(R"re("(\w+)"(\s*\|\s*"\w+")+)re");
    std::string out;
    auto it = std::sregex_iterator(text.begin(), text.end(), alts);
    std::size_t last = 0;
    for (; it != std::sregex_iterator(); ++it) {
        std::vector<std::string> options;
        static const std::regex word(R"re("(\w+)")re");
        const std::string m = it->str();
        for (auto w = std::sregex_iterator(m.begin(), m.end(), word); w != std::sregex_iterator(); ++w)
            options.push_back((*w)[1]);
        const auto& pick = options[std::min(alt, options.size() - 1)];
        out += text.substr(last, static_cast<std::size_t>(it->position()) - last) + "\"" + pick + "\"";
        last = static_cast<std::size_t>(it->position() + it->length());
        if (chosen_type && chosen_type->empty()) *chosen_type = options;  // the first list is EventType's
    }
    out += text.substr(last);
    static const std::regex trailing_comma(R"re(,(\s*[}\]]))re");
    return std::regex_replace(out, trailing_comma, "$1");
}

}  // namespace

TEST_CASE("the Linux seed's DocumentIncarnation 1..4 sequence, verbatim", "[azure][parse][seed]") {
    const auto d1 = parsed(seed("linux_incarnation_1.json"));
    CHECK(d1.incarnation == "1");
    CHECK(d1.events.empty());

    const auto d2 = parsed(seed("linux_incarnation_2.json"));
    CHECK(d2.incarnation == "2");
    REQUIRE(d2.events.size() == 1);
    const auto& e = d2.events[0];
    CHECK(e.id == "C7061BAC-AFDC-4513-B24B-AA5F13A16123");
    CHECK(e.type == event_type::freeze);
    CHECK(e.raw_type == "Freeze");
    CHECK(e.status == event_status::scheduled);
    CHECK(e.raw_status == "Scheduled");
    CHECK(e.resource_type == "VirtualMachine");
    CHECK(e.resources == std::vector<std::string>{"WestNO_0", "WestNO_1"});
    CHECK(e.affects("WestNO_1"));
    CHECK_FALSE(e.affects("WestNO_2"));
    REQUIRE(e.not_before.has_value());
    CHECK(*e.not_before == epoch_s(1649716018));  // Mon, 11 Apr 2022 22:26:58 GMT
    CHECK(e.description == "Virtual machine is being paused because of a memory-preserving Live Migration operation.");
    CHECK(e.source == event_source::platform);
    CHECK(e.raw_source == "Platform");
    CHECK(e.duration_in_seconds == 5);
    CHECK(e.duration() == std::chrono::seconds(5));
    CHECK(e.approvable == true);  // StartRequests starts a Scheduled event

    const auto d3 = parsed(seed("linux_incarnation_3.json"));
    CHECK(d3.incarnation == "3");
    REQUIRE(d3.events.size() == 1);
    CHECK(d3.events[0].id == e.id);
    CHECK(d3.events[0].status == event_status::started);
    CHECK(d3.events[0].approvable == false);  // it started: nothing to approve
    CHECK_FALSE(d3.events[0].not_before.has_value());  // "NotBefore": "" once started

    const auto d4 = parsed(seed("linux_incarnation_4.json"));
    CHECK(d4.incarnation == "4");
    CHECK(d4.events.empty());
    CHECK(d4 != d1);  // same (empty) events, different incarnation
}

TEST_CASE("the seeds' schemas verbatim are templates, not JSON, and are refused", "[azure][parse][seed]") {
    for (const char* name : {"linux_schema.txt", "windows_schema.txt", "terminate_schema.txt", "preview_2017_schema.txt"}) {
        const auto text = seed(name);
        auto r = parse_document(text);
        INFO(name);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::parse_error);
        REQUIRE(r.error().offset != forewarn::error::npos);
        REQUIRE(r.error().offset > 0);
        CHECK(text.compare(r.error().offset - 1, 15, "{IncarnationID}") == 0);  // where it stops
    }
}

TEST_CASE("the seeds' schemas, filled in, give every event type of every api-version", "[azure][parse][seed]") {
    struct schema {
        const char* file;
        const char* version;
        const char* time;
        std::int64_t expected_not_before;
        std::size_t types;
    };
    const schema schemas[] = {
        {"preview_2017_schema.txt", "2017-03-01", R"("2016-09-19T18:29:47Z")", 1474309787, 3},
        {"windows_schema.txt", "2017-11-01", R"("Mon, 19 Sep 2016 18:29:47 GMT")", 1474309787, 4},
        {"terminate_schema.txt", "2019-01-01", R"("Mon, 11 Apr 2022 22:26:58 GMT")", 1649716018, 1},
        {"linux_schema.txt", "2020-07-01", R"("Mon, 11 Apr 2022 22:26:58 GMT")", 1649716018, 5},
    };
    for (const auto& s : schemas) {
        for (std::size_t alt = 0; alt < 5; ++alt) {
            std::vector<std::string> types;
            const auto body = fill(seed(s.file),
                                   {{"{IncarnationID}", "7"},
                                    {"{eventID}", R"("602d9444-d2cd-49c7-8624-8643e7171297")"},
                                    {"{resourceName}", R"("FrontEnd_IN_0", "BackEnd_IN_0")"},
                                    {"{timeInUTC}", s.time},
                                    {"{eventDescription}", R"("Host server is undergoing maintenance.")"},
                                    {"{timeInSeconds}", "-1"}},
                                   alt, &types);
            INFO(s.file << " alternative " << alt);
            if (types.empty()) types = {"Terminate"};  // the Terminate seed names a single type
            REQUIRE(types.size() == s.types);
            const auto doc = parsed(body, s.version);
            CHECK(doc.incarnation == "7");
            REQUIRE(doc.events.size() == 1);
            const auto& e = doc.events[0];
            CHECK(e.id == "602d9444-d2cd-49c7-8624-8643e7171297");
            CHECK(e.raw_type == types[std::min(alt, types.size() - 1)]);
            CHECK(e.type != event_type::unknown);
            CHECK(e.status != event_status::unknown);
            CHECK(e.resources == std::vector<std::string>{"FrontEnd_IN_0", "BackEnd_IN_0"});
            CHECK(e.not_before == epoch_s(s.expected_not_before));
            if (std::string(s.file) == "linux_schema.txt") {
                CHECK(e.description == "Host server is undergoing maintenance.");
                CHECK(e.duration_in_seconds == -1);
                CHECK_FALSE(e.duration().has_value());  // -1: the platform does not know
                CHECK(e.source == (alt == 0 ? event_source::platform : event_source::user));
            } else {
                CHECK_FALSE(e.source.has_value());  // absent before 2020-07-01
                CHECK_FALSE(e.duration_in_seconds.has_value());
            }
        }
    }
}

TEST_CASE("each api-version's document shape parses", "[azure][parse]") {
    // 2017-03-01: ISO NotBefore, underscored resource names.
    auto preview = parsed(R"({"DocumentIncarnation":5,"Events":[{"EventId":"a","EventType":"Reboot","ResourceType":"VirtualMachine",
        "Resources":["_FrontEnd_IN_0","_BackEnd_IN_0"],"EventStatus":"Scheduled","NotBefore":"2016-09-19T18:29:47Z"}]})",
                          "2017-03-01");
    CHECK(preview.events.at(0).resources == std::vector<std::string>{"FrontEnd_IN_0", "BackEnd_IN_0"});
    CHECK(preview.events.at(0).affects("FrontEnd_IN_0"));
    CHECK(preview.events.at(0).not_before == epoch_s(1474309787));
    // From 2017-08-01 on, names are sent without the underscore and kept exactly as sent.
    for (const char* v : {"2017-08-01", "2017-11-01", "2019-01-01", "2019-04-01", "2019-08-01", "2020-07-01"}) {
        INFO(v);
        auto d = parsed(R"({"DocumentIncarnation":6,"Events":[{"EventId":"a","EventType":"Preempt","ResourceType":"VirtualMachine",
            "Resources":["_odd_but_real","vmss_3"],"EventStatus":"Scheduled","NotBefore":"Mon, 19 Sep 2016 18:29:47 GMT"}]})",
                        v);
        CHECK(d.events.at(0).resources == std::vector<std::string>{"_odd_but_real", "vmss_3"});
        CHECK(d.events.at(0).type == event_type::preempt);
    }
    // 2020-07-01 with everything.
    auto full = parsed(R"({"DocumentIncarnation":9,"Events":[{"EventId":"t","EventType":"Terminate","ResourceType":"VirtualMachine",
        "Resources":["myvmss_2"],"EventStatus":"Scheduled","NotBefore":"Mon, 11 Apr 2022 22:26:58 GMT",
        "Description":"","EventSource":"User","DurationInSeconds":-1}]})");
    CHECK(full.events.at(0).type == event_type::terminate);
    CHECK(full.events.at(0).source == event_source::user);
}

TEST_CASE("unknown wire values are kept raw - unknown members ignored - null is absent", "[azure][parse]") {
    auto d = parsed(R"({"DocumentIncarnation":1,"Future":{"x":[1,2]},"Events":[{"EventId":"a","EventType":"Hibernate",
        "EventStatus":"Completed","EventSource":"Tenant","NewField":[{}],"Resources":null,"NotBefore":null,
        "Description":null,"DurationInSeconds":null,"ResourceType":null}]})");
    const auto& e = d.events.at(0);
    CHECK(e.type == event_type::unknown);
    CHECK(e.raw_type == "Hibernate");
    CHECK(e.status == event_status::unknown);
    CHECK(e.raw_status == "Completed");
    CHECK(e.source == event_source::unknown);
    CHECK(e.raw_source == "Tenant");
    CHECK(e.resources.empty());
    CHECK_FALSE(e.not_before.has_value());
    CHECK_FALSE(e.duration_in_seconds.has_value());
    // Wire strings are matched case-insensitively but kept as sent.
    auto lower = parsed(R"({"DocumentIncarnation":1,"Events":[{"EventId":"a","EventType":"freeze","EventStatus":"STARTED"}]})");
    CHECK(lower.events.at(0).type == event_type::freeze);
    CHECK(lower.events.at(0).raw_type == "freeze");
    CHECK(lower.events.at(0).status == event_status::started);
    // Strings with embedded NULs and non-ASCII survive whole.
    auto nul = parsed("{\"DocumentIncarnation\":1,\"Events\":[{\"EventId\":\"a\\u0000b\",\"EventType\":\"Reboot\","
                      "\"EventStatus\":\"Scheduled\",\"Resources\":[\"v\xc3\xa4st_0\"]}]}");
    CHECK(nul.events.at(0).id == std::string("a\0b", 3));
    CHECK(nul.events.at(0).affects("v\xc3\xa4st_0"));
}

TEST_CASE("DocumentIncarnation is an integer kept as decimal text", "[azure][parse]") {
    CHECK(parsed(R"({"DocumentIncarnation":0,"Events":[]})").incarnation == "0");
    CHECK(parsed(R"({"DocumentIncarnation":18446744073709551615,"Events":[]})").incarnation == "18446744073709551615");
    CHECK(parsed(R"({"DocumentIncarnation":-3,"Events":[]})").incarnation == "-3");
    CHECK(rejected(R"({"DocumentIncarnation":"5","Events":[]})", errc::invalid_document).field == "DocumentIncarnation");
    CHECK(rejected(R"({"DocumentIncarnation":1.5,"Events":[]})", errc::invalid_document).field == "DocumentIncarnation");
    CHECK(rejected(R"({"DocumentIncarnation":null,"Events":[]})", errc::invalid_document).field == "DocumentIncarnation");
    CHECK(rejected(R"({"Events":[]})", errc::invalid_document).field == "DocumentIncarnation");
}

TEST_CASE("a 200 that is not a document is an error, never an empty document", "[azure][parse]") {
    rejected("", errc::empty_body);
    rejected(" \r\n\t ", errc::empty_body);
    for (const char* body : {"null", "[]", "{}", "\"x\"", "0", "true", R"({"DocumentIncarnation":1})",
                             R"({"DocumentIncarnation":1,"Events":null})", R"({"DocumentIncarnation":1,"Events":{}})",
                             R"({"DocumentIncarnation":1,"Events":"[]"})"}) {
        auto r = parse_document(body);
        INFO(body);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_document);
    }
    CHECK(rejected(R"({"DocumentIncarnation":1,"events":[]})", errc::invalid_document).field == "Events");
}

TEST_CASE("malformed JSON fails with the parse offset", "[azure][parse]") {
    const std::string full = seed("linux_incarnation_2.json");
    for (std::size_t cut : {std::size_t(1), std::size_t(20), full.size() / 2, full.size() - 3}) {
        auto e = rejected(full.substr(0, cut), errc::parse_error);
        CHECK(e.offset != forewarn::error::npos);
        CHECK(e.offset <= cut);
    }
    CHECK(rejected(R"({"DocumentIncarnation":1,"Events":[]} {})", errc::parse_error).offset == 38);  // trailing garbage
    rejected(R"({"DocumentIncarnation":1,"Events":[]}x)", errc::parse_error);
    rejected("<html><body>502 Bad Gateway</body></html>", errc::parse_error);
    // Regression: a NUL byte used to end the text for RapidJSON, hiding what followed.
    CHECK(rejected(std::string(R"({"DocumentIncarnation":1,"Events":[]})") + '\0' + R"({"Events":[)",
                   errc::parse_error)
              .offset == 37);
    rejected(R"({"DocumentIncarnation":1,"Events":[],})", errc::parse_error);
    rejected(R"({'DocumentIncarnation':1})", errc::parse_error);
    // Invalid UTF-8 inside a string (a lone continuation byte, an overlong encoding).
    rejected("{\"DocumentIncarnation\":1,\"Events\":[{\"EventId\":\"\x80\",\"EventType\":\"Reboot\",\"EventStatus\":\"Started\"}]}",
             errc::parse_error);
    rejected("{\"DocumentIncarnation\":1,\"Events\":[],\"x\":\"\xc0\xaf\"}", errc::parse_error);
}

TEST_CASE("10^6-deep nesting is refused quickly, without recursion", "[azure][parse]") {
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    auto e = rejected(deep, errc::parse_error);
    CHECK(e.message.find("deeper") != std::string::npos);
    CHECK(e.offset == 64);
    const std::string deep_objects =
        R"({"DocumentIncarnation":1,"Events":[{"EventId":"a","EventType":"Reboot","EventStatus":"Started","x":)" +
        std::string(1000000, '{');
    rejected(deep_objects, errc::parse_error);
    // Brackets inside strings do not count towards the depth.
    auto ok = parsed(R"({"DocumentIncarnation":1,"Events":[{"EventId":")" + std::string(1000, '[') +
                     R"(","EventType":"Reboot","EventStatus":"Started"}]})");
    CHECK(ok.events.at(0).id.size() == 1000);
}

TEST_CASE("every member is type-checked and the error names it", "[azure][parse]") {
    struct bad {
        const char* member;
        const char* json;  // "" removes the member
        const char* field;
        errc code;
    };
    const bad cases[] = {
        {"EventId", "", "Events[1].EventId", errc::invalid_document},
        {"EventId", "42", "Events[1].EventId", errc::invalid_document},
        {"EventId", R"("")", "Events[1].EventId", errc::invalid_document},
        {"EventId", "null", "Events[1].EventId", errc::invalid_document},
        {"EventType", "", "Events[1].EventType", errc::invalid_document},
        {"EventType", "[]", "Events[1].EventType", errc::invalid_document},
        {"EventStatus", "", "Events[1].EventStatus", errc::invalid_document},
        {"EventStatus", "true", "Events[1].EventStatus", errc::invalid_document},
        {"ResourceType", "1", "Events[1].ResourceType", errc::invalid_document},
        {"Resources", R"("vm0")", "Events[1].Resources", errc::invalid_document},
        {"Resources", R"(["vm0",7])", "Events[1].Resources[1]", errc::invalid_document},
        {"Resources", R"([null])", "Events[1].Resources[0]", errc::invalid_document},
        {"NotBefore", "1649716018", "Events[1].NotBefore", errc::invalid_document},
        {"NotBefore", R"("tomorrow")", "Events[1].NotBefore", errc::parse_error},
        {"NotBefore", R"("Mon, 31 Apr 2022 22:26:58 GMT")", "Events[1].NotBefore", errc::parse_error},
        {"Description", "{}", "Events[1].Description", errc::invalid_document},
        {"EventSource", "0", "Events[1].EventSource", errc::invalid_document},
        {"DurationInSeconds", R"("5")", "Events[1].DurationInSeconds", errc::invalid_document},
        {"DurationInSeconds", "5.5", "Events[1].DurationInSeconds", errc::invalid_document},
        {"DurationInSeconds", "1e3", "Events[1].DurationInSeconds", errc::invalid_document},
        {"DurationInSeconds", "18446744073709551615", "Events[1].DurationInSeconds", errc::invalid_document},
    };
    for (const auto& c : cases) {
        const auto body = with_member(c.member, c.json);
        auto e = rejected(body, c.code);
        CHECK(e.field == c.field);
        CHECK(e.describe().find(c.field) != std::string::npos);
    }
    CHECK(rejected(R"({"DocumentIncarnation":1,"Events":[{"EventId":"a","EventType":"Reboot","EventStatus":"Started"},7]})",
                   errc::invalid_document)
              .field == "Events[1]");
    // The control case: with_member() with nothing replaced is a valid document.
    CHECK(parsed(with_member("Description", R"("fine")")).events.size() == 2);
}

TEST_CASE("a duplicate EventId is refused: events are keyed by it", "[azure][parse]") {
    auto e = rejected(R"({"DocumentIncarnation":1,"Events":[{"EventId":"a","EventType":"Reboot","EventStatus":"Started"},
        {"EventId":"b","EventType":"Reboot","EventStatus":"Started"},{"EventId":"a","EventType":"Freeze","EventStatus":"Scheduled"}]})",
                      errc::invalid_document);
    CHECK(e.field == "Events[2].EventId");
}

TEST_CASE("validate_api_version accepts the known versions and newer dates", "[azure][parse]") {
    for (auto v : forewarn::azure::known_api_versions) CHECK(forewarn::azure::validate_api_version(v).has_value());
    CHECK(forewarn::azure::validate_api_version("2031-01-01").has_value());
    for (const char* v : {"", "{latest}", "latest", "2016-01-01", "2020-07-01&x=1", "2020/07/01", "2020-07-01 "}) {
        INFO(v);
        auto r = forewarn::azure::validate_api_version(v);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_argument);
    }
    CHECK(forewarn::azure::is_preview_api_version("2017-03-01"));
    CHECK_FALSE(forewarn::azure::is_preview_api_version("2017-08-01"));
}

namespace {
rapidjson::Document json(std::string_view text) {
    auto r = forewarn::detail::parse_json(text);
    INFO(text);
    REQUIRE(r.has_value());
    return std::move(*r);
}
}  // namespace

TEST_CASE("write_start_requests writes the seeds' approval bodies", "[azure][approve][seed]") {
    auto current = write_start_requests({"f020ba2e-3bc0-4c40-a10b-86575a9eabd5"});
    REQUIRE(current.has_value());
    CHECK(*current == R"({"StartRequests":[{"EventId":"f020ba2e-3bc0-4c40-a10b-86575a9eabd5"}]})");
    CHECK(json(*current) == json(seed("linux_approval.json")));
    CHECK(json(*current) == json(seed("windows_approval.json")));
    // The 2017 preview sent the incarnation beside StartRequests, as a string.
    auto preview = write_start_requests({"f020ba2e-3bc0-4c40-a10b-86575a9eabd5"}, std::string("5"));
    REQUIRE(preview.has_value());
    CHECK(json(*preview) == json(seed("preview_2017_approval.json")));
    CHECK(json(*preview) != json(seed("linux_approval.json")));
}

TEST_CASE("write_start_requests escapes any id so it parses back the same", "[azure][approve]") {
    const std::vector<std::string> ids = {
        "plain", "with \"quotes\"", "back\\slash", "tab\tnew\nline\rcr", std::string("nul\0byte", 8),
        "\x01\x1f\x7f", "</script>", "v\xc3\xa4st \xe2\x82\xac \xf0\x9f\x98\x80", "\"},{\"EventId\":\"injected"};
    auto body = write_start_requests(ids);
    REQUIRE(body.has_value());
    const auto doc = json(*body);
    REQUIRE(doc.IsObject());
    REQUIRE(doc.MemberCount() == 1);
    const auto& sr = doc["StartRequests"];
    REQUIRE(sr.IsArray());
    REQUIRE(sr.Size() == ids.size());
    for (rapidjson::SizeType i = 0; i < sr.Size(); ++i) {
        REQUIRE(sr[i].IsObject());
        CHECK(sr[i].MemberCount() == 1);
        CHECK(forewarn::detail::json_string_view(sr[i]["EventId"]) == ids[i]);
    }
}

TEST_CASE("write_start_requests refuses invalid UTF-8, empty ids and an empty list", "[azure][approve]") {
    for (const auto& bad : {std::string("\xff"), std::string("a\xc3"), std::string("\xed\xa0\x80"), std::string("\xc0\xaf")}) {
        auto r = write_start_requests({"good", bad});
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == errc::invalid_argument);
        CHECK(r.error().message.find("#1") != std::string::npos);
    }
    CHECK(write_start_requests({}).error().code == errc::invalid_argument);
    CHECK(write_start_requests({""}).error().code == errc::invalid_argument);
    CHECK(write_start_requests({"a"}, std::string("\xff")).error().code == errc::invalid_argument);
}

}  // namespace test_azure_parse
