// SPDX-License-Identifier: MIT
#include <forewarn/aws/parse.hpp>
#include <forewarn/time.hpp>

#include "catch.hpp"

#include <fstream>
#include <iterator>
#include <string>

namespace test_aws_parse {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::event_status;
using forewarn::event_type;

namespace {

std::string data(const std::string& name) {
    std::ifstream in(std::string(FOREWARN_SOURCE_DIR) + "/tests/unit/data/aws/" + name, std::ios::binary);
    REQUIRE(in.good());
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string iso(const std::optional<std::chrono::system_clock::time_point>& t) {
    REQUIRE(t.has_value());
    return forewarn::format_iso8601(*t);
}

}  // namespace

TEST_CASE("aws time: the scheduled events' form - one-digit days - GMT only", "[aws][parse][time]") {
    CHECK(iso(*forewarn::parse_aws_time("21 Jan 2019 09:00:43 GMT")) == "2019-01-21T09:00:43Z");
    CHECK(iso(*forewarn::parse_aws_time("8 May 2020 09:00:00 GMT")) == "2020-05-08T09:00:00Z");
    CHECK_FALSE(forewarn::parse_aws_time("").value().has_value());
    CHECK(forewarn::format_aws_time(*forewarn::parse_aws_time("8 May 2020 09:00:00 GMT").value()) == "08 May 2020 09:00:00 GMT");
    for (const char* bad : {"Mon, 21 Jan 2019 09:00:43 GMT", "21 Jan 2019 09:00:43", "21 Jan 2019 09:00:43 CET",
                            "32 Jan 2019 09:00:43 GMT", "21 Foo 2019 09:00:43 GMT", "2019-01-21T09:00:43Z"}) {
        INFO(bad);
        auto t = forewarn::parse_aws_time(bad);
        REQUIRE_FALSE(t.has_value());
        CHECK(t.error().code == errc::parse_error);
    }
}

TEST_CASE("aws scheduled events: AWS's example becomes a reboot with its NotBefore", "[aws][parse]") {
    auto events = forewarn::aws::parse_scheduled_events(data("scheduled-events.json"));
    REQUIRE(events.has_value());
    REQUIRE(events->size() == 1);
    const auto& e = (*events)[0];
    CHECK(e.id == "instance-event-0d59937288b749b32");
    CHECK(e.type == event_type::reboot);
    CHECK(e.raw_type == "system-reboot");
    CHECK(e.status == event_status::scheduled);
    CHECK(e.raw_status == "active");
    CHECK(iso(e.not_before) == "2019-01-21T09:00:43Z");
    CHECK(e.description == "scheduled reboot");
}

TEST_CASE("aws scheduled events: every Code and State maps - unknown words stay raw", "[aws][parse]") {
    auto past = forewarn::aws::parse_scheduled_events(data("scheduled-events-past.json"));
    REQUIRE(past.has_value());
    REQUIRE(past->size() == 2);
    CHECK((*past)[0].type == event_type::retirement);
    CHECK((*past)[0].status == event_status::completed);
    CHECK((*past)[1].type == event_type::maintenance);
    CHECK((*past)[1].status == event_status::cancelled);
    CHECK((*past)[1].raw_status == "canceled");

    struct row {
        const char* code;
        event_type type;
    };
    for (const auto& r : {row{"instance-reboot", event_type::reboot}, row{"system-reboot", event_type::reboot},
                          row{"system-maintenance", event_type::maintenance},
                          row{"instance-retirement", event_type::retirement}, row{"instance-stop", event_type::stop},
                          row{"instance-teleport", event_type::unknown}}) {
        INFO(r.code);
        auto events = forewarn::aws::parse_scheduled_events(std::string(R"([{"EventId":"e","Code":")") + r.code +
                                                            R"(","State":"active"}])");
        REQUIRE(events.has_value());
        CHECK((*events)[0].type == r.type);
        CHECK((*events)[0].raw_type == r.code);
    }
    auto odd = forewarn::aws::parse_scheduled_events(R"([{"EventId":"e","Code":"instance-stop","State":"paused"}])");
    REQUIRE(odd.has_value());
    CHECK((*odd)[0].status == event_status::unknown);
    CHECK((*odd)[0].raw_status == "paused");
    auto none = forewarn::aws::parse_scheduled_events("[]");
    REQUIRE(none.has_value());
    CHECK(none->empty());
}

TEST_CASE("aws scheduled events: malformed lists are clear errors naming the field", "[aws][parse]") {
    struct row {
        const char* body;
        errc code;
        const char* field;
    };
    for (const auto& r : {row{"", errc::empty_body, ""}, row{"{}", errc::invalid_document, "scheduled"},
                          row{"[1]", errc::invalid_document, "scheduled[0]"},
                          row{R"([{"Code":"system-reboot"}])", errc::invalid_document, "scheduled[0].EventId"},
                          row{R"([{"EventId":"e"}])", errc::invalid_document, "scheduled[0].Code"},
                          row{R"([{"EventId":7,"Code":"x"}])", errc::invalid_document, "scheduled[0].EventId"},
                          row{R"([{"EventId":"e","Code":"x"},{"EventId":"e","Code":"x"}])", errc::invalid_document,
                              "scheduled[1].EventId"},
                          row{R"([{"EventId":"e","Code":"x","NotBefore":"tomorrow"}])", errc::parse_error,
                              "scheduled[0].NotBefore"},
                          row{"[{", errc::parse_error, ""}}) {
        INFO(r.body);
        auto events = forewarn::aws::parse_scheduled_events(r.body);
        REQUIRE_FALSE(events.has_value());
        CHECK(events.error().code == r.code);
        if (*r.field) CHECK(events.error().field == r.field);
    }
}

TEST_CASE("aws spot instance-action: each action - the time is not_before", "[aws][parse]") {
    auto e = forewarn::aws::parse_spot_instance_action(data("spot-instance-action.json"));
    REQUIRE(e.has_value());
    CHECK(e->id == "spot-instance-action");
    CHECK(e->type == event_type::preempt);
    CHECK(e->raw_type == "terminate");
    CHECK(e->status == event_status::scheduled);
    CHECK(iso(e->not_before) == "2017-09-18T08:22:00Z");
    CHECK(forewarn::aws::parse_spot_instance_action(R"({"action":"stop","time":"2017-09-18T08:22:00Z"})")->type ==
          event_type::stop);
    CHECK(forewarn::aws::parse_spot_instance_action(R"({"action":"hibernate","time":"2017-09-18T08:22:00Z"})")->type ==
          event_type::hibernate);
    for (const char* bad : {"", "[]", R"({"time":"2017-09-18T08:22:00Z"})", R"({"action":"stop"})",
                            R"({"action":"","time":"2017-09-18T08:22:00Z"})", R"({"action":"stop","time":"soon"})",
                            R"({"action":1,"time":"2017-09-18T08:22:00Z"})"}) {
        INFO(bad);
        CHECK_FALSE(forewarn::aws::parse_spot_instance_action(bad).has_value());
    }
}

TEST_CASE("aws rebalance recommendation: noticeTime is not_before", "[aws][parse]") {
    auto e = forewarn::aws::parse_rebalance_recommendation(data("rebalance.json"));
    REQUIRE(e.has_value());
    CHECK(e->id == "rebalance-recommendation");
    CHECK(e->type == event_type::rebalance);
    CHECK(e->status == event_status::scheduled);
    CHECK(iso(e->not_before) == "2020-10-27T08:22:00Z");
    for (const char* bad : {"", "{}", R"({"noticeTime":""})", R"({"noticeTime":5})", "NONE"}) {
        INFO(bad);
        CHECK_FALSE(forewarn::aws::parse_rebalance_recommendation(bad).has_value());
    }
}

TEST_CASE("aws security credentials: an instance profile's answer, and what is refused", "[aws][parse]") {
    const auto c = forewarn::aws::parse_security_credentials(R"({
  "Code" : "Success",
  "LastUpdated" : "2026-11-28T09:00:00Z",
  "Type" : "AWS-HMAC",
  "AccessKeyId" : "ASIAEXAMPLE",
  "SecretAccessKey" : "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "Token" : "IQoJb3JpZ2luX2VjEXAMPLE",
  "Expiration" : "2026-11-28T15:00:00Z"
})");
    REQUIRE(c);
    CHECK(c->access_key_id == "ASIAEXAMPLE");
    CHECK(c->secret_access_key == "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
    CHECK(c->session_token == "IQoJb3JpZ2luX2VjEXAMPLE");
    REQUIRE(c->expiration);
    CHECK(forewarn::format_iso8601(*c->expiration) == "2026-11-28T15:00:00Z");

    auto refused = [](const char* body) {
        const auto r = forewarn::aws::parse_security_credentials(body);
        REQUIRE_FALSE(r);
        return r.error();
    };
    const auto failed = refused(R"({"Code":"AssumeRoleUnauthorizedAccess","Message":"..."})");
    CHECK(failed.field == "security-credentials.Code");
    CHECK(failed.message.find("AssumeRoleUnauthorizedAccess") != std::string::npos);
    const auto no_secret = refused(R"({"Code":"Success","AccessKeyId":"A","Token":"T","Expiration":"2026-11-28T15:00:00Z"})");
    CHECK(no_secret.field == "security-credentials.SecretAccessKey");
    const auto secret_hidden = refused(R"({"Code":"Success","AccessKeyId":"A","SecretAccessKey":7,"Token":"T"})");
    CHECK(secret_hidden.message.find("7") == std::string::npos);  // a value is never quoted back
    CHECK(refused(R"({"Code":"Success","AccessKeyId":"A","SecretAccessKey":"S","Token":"T","Expiration":"soon"})").field ==
          "security-credentials.Expiration");
    CHECK(refused("").code == errc::empty_body);
    CHECK(refused("[]").code == errc::invalid_document);
}

}  // namespace test_aws_parse
