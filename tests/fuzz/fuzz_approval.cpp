// SPDX-License-Identifier: MIT
// libFuzzer target: the approval body. Any list of ids (any bytes: quotes, backslashes, control
// characters, NULs, invalid UTF-8) and an optional DocumentIncarnation go through
// azure::write_start_requests. Invariants: when every id is non-empty valid UTF-8 (judged by an
// independent validator) the body is written, parses back with forewarn's own parser, and holds
// exactly those ids in order, byte for byte; otherwise it is a clear invalid_argument error. The
// same ids through the client's approve() over a scripted transport give the same body.
#include <forewarn/azure/parse.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "fuzz_check.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    std::optional<std::string> incarnation;
    if (in.ConsumeBool()) incarnation = in.ConsumeRandomLengthString(32);
    std::vector<std::string> ids;
    const int n = in.ConsumeIntegralInRange(0, 8);
    for (int i = 0; i < n; ++i) ids.push_back(in.ConsumeRandomLengthString(128));

    bool writable = !ids.empty() && (!incarnation || forewarn_fuzz::valid_utf8(*incarnation));
    for (const auto& id : ids) writable = writable && !id.empty() && forewarn_fuzz::valid_utf8(id);

    auto body = forewarn::azure::write_start_requests(ids, incarnation);
    if (!writable) {
        FOREWARN_FUZZ_CHECK(!body, "a body written for an empty or invalid id");
        FOREWARN_FUZZ_CHECK(body.error().code == forewarn::errc::invalid_argument && !body.error().message.empty(),
                            "not a clear invalid_argument error");
    } else {
        FOREWARN_FUZZ_CHECK(body.has_value(), "valid ids refused");
        auto doc = forewarn::detail::parse_json(*body);
        FOREWARN_FUZZ_CHECK(doc.has_value(), "the approval body does not parse back");
        const auto& root = *doc;
        FOREWARN_FUZZ_CHECK(root.IsObject(), "body is not an object");
        const auto* sr = forewarn::detail::json_member(root, "StartRequests");
        FOREWARN_FUZZ_CHECK(sr && sr->IsArray() && sr->Size() == ids.size(), "StartRequests has other entries");
        for (rapidjson::SizeType i = 0; i < sr->Size(); ++i) {
            const auto& entry = (*sr)[i];
            FOREWARN_FUZZ_CHECK(entry.IsObject() && entry.MemberCount() == 1, "an entry is not {EventId}");
            const auto* id = forewarn::detail::json_member(entry, "EventId");
            FOREWARN_FUZZ_CHECK(id && id->IsString() && forewarn::detail::json_string_view(*id) == ids[i],
                                "an id does not parse back byte for byte");
        }
        const auto* inc = forewarn::detail::json_member(root, "DocumentIncarnation");
        FOREWARN_FUZZ_CHECK(incarnation ? (inc && inc->IsString() && forewarn::detail::json_string_view(*inc) == *incarnation)
                                        : inc == nullptr,
                            "DocumentIncarnation does not parse back");
        for (const char c : *body) {
            const auto b = static_cast<unsigned char>(c);
            FOREWARN_FUZZ_CHECK(b >= 0x20, "a raw control character in the body");
        }
    }

    // The client sends exactly that body (or nothing at all).
    forewarn::testing::fake_transport t;
    t.respond(200);
    forewarn::azure::client_options o;
    o.endpoint = "http://127.0.0.1:9";
    o.rate_limit = false;
    o.retry.max_attempts = 1;
    forewarn::azure::basic_scheduled_events_client<forewarn::testing::fake_transport> c(o, t);
    auto approved = c.approve(ids);
    bool ids_ok = true;
    for (const auto& id : ids) ids_ok = ids_ok && !id.empty() && forewarn_fuzz::valid_utf8(id);
    if (ids.empty()) {
        FOREWARN_FUZZ_CHECK(approved && t.request_count() == 0, "an empty approval reached the network");
    } else if (!ids_ok) {
        FOREWARN_FUZZ_CHECK(!approved && approved.error().code == forewarn::errc::invalid_argument &&
                                t.request_count() == 0,
                            "a bad id reached the network");
    } else {
        FOREWARN_FUZZ_CHECK(approved.has_value(), "approve failed on valid ids");
        const auto sent = t.requests();
        const auto expected = forewarn::azure::write_start_requests(ids);
        FOREWARN_FUZZ_CHECK(expected && sent.size() == 1 && sent[0].body == *expected, "approve sent another body");
    }
    return 0;
}
