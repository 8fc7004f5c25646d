// SPDX-License-Identifier: MIT
// libFuzzer target: AWS instance metadata (and the other services under /latest/). The notice
// parsers (AWS's four, Alibaba's and Tencent's reclaim times) and AWS's date form on fuzzed bodies, and the whole IMDSv2 client over a scripted transport whose answers (status,
// body) are fuzzed. Invariants: no crash, hang, leak or UB; a parsed scheduled list has unique,
// non-empty ids and a status that agrees with its State; a parsed time prints back to a time that
// parses to the same instant; every GET after a token was given carries that token and no
// request carries X-Forwarded-For or goes elsewhere; the token never appears in a log line; a
// document has AWS origin and only AWS ids.
#include <forewarn/alibaba/metadata_client.hpp>
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/tencent/metadata_client.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "fuzz_check.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace {

namespace aws = forewarn::aws;
using forewarn::errc;

void parsers(const std::string& body) {
    if (auto events = aws::parse_scheduled_events(body)) {
        std::set<std::string> ids;
        for (const auto& e : *events) {
            FOREWARN_FUZZ_CHECK(!e.id.empty(), "empty EventId accepted");
            FOREWARN_FUZZ_CHECK(ids.insert(e.id).second, "duplicate EventId accepted");
            FOREWARN_FUZZ_CHECK(e.status == aws::event_status_of_state(e.raw_status), "status disagrees with State");
            FOREWARN_FUZZ_CHECK(e.type == aws::event_type_of_code(e.raw_type), "type disagrees with Code");
        }
    } else {
        FOREWARN_FUZZ_CHECK(!events.error().message.empty(), "error without a message");
    }
    if (auto e = aws::parse_spot_instance_action(body)) {
        FOREWARN_FUZZ_CHECK(e->id == aws::spot_event_id && e->not_before && !e->raw_type.empty(), "spot event shape");
    }
    if (auto e = aws::parse_rebalance_recommendation(body)) {
        FOREWARN_FUZZ_CHECK(e->id == aws::rebalance_event_id && e->not_before, "rebalance event shape");
    }
    if (auto e = aws::parse_target_lifecycle_state(body); e && *e) {
        FOREWARN_FUZZ_CHECK((*e)->id == aws::autoscaling_event_id && (*e)->type == forewarn::event_type::terminate &&
                                ((*e)->raw_type == "Terminated" || (*e)->raw_type == "Warmed:Terminated"),
                            "a lifecycle notice for another state");
    }
    for (auto e : {forewarn::alibaba::parse_termination_time(body), forewarn::tencent::parse_termination_time(body)}) {
        if (!e) {
            FOREWARN_FUZZ_CHECK(e.error().code == errc::invalid_document && e.error().field == "termination-time",
                                "a reclaim time refused with another code");
            continue;
        }
        FOREWARN_FUZZ_CHECK(e->id == "spot-termination" && e->type == forewarn::event_type::preempt && e->not_before,
                            "reclaim event shape");
    }
    if (auto e = forewarn::tencent::parse_termination_time(body)) {
        const auto text = forewarn::detail::trim(body);  // UTC+8 on the wire: eight hours behind in UTC
        auto as_utc = forewarn::detail::parse_iso8601(std::string(text.substr(0, 10)) + 'T' + std::string(text.substr(11)) + 'Z');
        FOREWARN_FUZZ_CHECK(as_utc && *as_utc - *e->not_before == std::chrono::hours(8), "Tencent's time not read as UTC+8");
    }
    if (auto t = forewarn::parse_aws_time(body); t && *t) {
        auto back = forewarn::parse_aws_time(forewarn::format_aws_time(**t));
        FOREWARN_FUZZ_CHECK(back && *back && **back == std::chrono::time_point_cast<std::chrono::seconds>(**t),
                            "an AWS time that does not print back");
    }
}

void client(FuzzedDataProvider& in) {
    forewarn::testing::fake_transport t;
    std::vector<std::string> bodies;
    const int answers = in.ConsumeIntegralInRange(0, 16);
    for (int i = 0; i < answers; ++i) {
        if (in.ConsumeBool() && in.ConsumeBool()) {
            t.fail(forewarn::error(in.ConsumeBool() ? errc::transport : errc::timeout, "fuzzed failure"));
            continue;
        }
        static constexpr int statuses[] = {200, 200, 200, 200, 401, 404, 400, 403, 405, 429, 500, 503, 302, 0};
        const int status = statuses[in.ConsumeIntegralInRange<std::size_t>(0, std::size(statuses) - 1)];
        bodies.push_back(in.ConsumeRandomLengthString(256));
        t.respond(status, bodies.back());
    }
    aws::client_options o;
    o.endpoint = "http://127.0.0.1:9";
    o.rate_limit = false;
    o.retry.max_attempts = 2;
    o.retry.initial_backoff = std::chrono::milliseconds(0);
    o.retry.max_backoff = std::chrono::milliseconds(0);
    o.allow_imdsv1 = in.ConsumeBool();
    o.self_name = in.ConsumeBool() ? std::string() : std::string("i-fuzz");
    std::string logged;
    o.log.level = forewarn::log_level::trace;
    o.log.sink = [&](const forewarn::log_record& r) {
        logged += r.message;
        logged += '\n';
    };
    aws::basic_instance_metadata_client<forewarn::testing::fake_transport> c(o, t);

    for (int round = 0; round < 2; ++round) {
        auto d = c.fetch();
        if (!d) {
            FOREWARN_FUZZ_CHECK(!d.error().message.empty(), "client error without a message");
            continue;
        }
        FOREWARN_FUZZ_CHECK(d->origin == forewarn::cloud::aws, "AWS document with another origin");
    }
    auto id = c.identity();
    if (id) FOREWARN_FUZZ_CHECK(!id->name.empty(), "identity without a name");

    std::string token;
    for (const auto& r : t.requests()) {
        FOREWARN_FUZZ_CHECK(r.url.rfind("http://127.0.0.1:9/latest/", 0) == 0, "request to another place");
        FOREWARN_FUZZ_CHECK(forewarn::find_header(r.headers, "X-Forwarded-For") == nullptr, "X-Forwarded-For sent");
        if (const auto* tok = forewarn::find_header(r.headers, "X-aws-ec2-metadata-token")) {
            FOREWARN_FUZZ_CHECK(!tok->empty(), "an empty token sent");
            token = *tok;
        }
    }
    // The token is in no log line, unless another answer carried its text (an error message
    // quotes a bad body) or a URL holds it by chance.
    // Checked for tokens like IMDS's (base64: '=' or '+' in them), which no URL or message of the
    // client's own holds; a short or plain word would be found in any text.
    const bool distinctive = token.size() >= 8 && token.find_first_of("=+") != std::string::npos;
    if (distinctive && logged.find(token) != std::string::npos) {
        bool elsewhere = std::string("http://127.0.0.1:9/latest/meta-data/api/token").find(token) != std::string::npos;
        // The token's own answer is one body holding it; a second one (an error's body that is the
        // same text, quoted by its error message) is another answer carrying it.
        std::size_t carrying = 0;
        for (const auto& b : bodies) {
            carrying += b.find(token) != std::string::npos;
            elsewhere = elsewhere || (b.find(token) != std::string::npos && forewarn::detail::trim(b) != token);
        }
        elsewhere = elsewhere || carrying >= 2;
        FOREWARN_FUZZ_CHECK(elsewhere, "the token reached the log");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    parsers(in.ConsumeRandomLengthString(1024));
    client(in);
    return 0;
}
