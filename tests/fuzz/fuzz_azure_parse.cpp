// SPDX-License-Identifier: MIT
// libFuzzer target: azure::parse_document over any bytes. Invariants: no crash, leak or UB
// (ASan+UBSan); a success is a well-formed document (Azure origin, decimal incarnation, unique
// non-empty ids); a failure is one of the three body errors with a message.
#include <forewarn/azure/parse.hpp>

#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_set>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    // The preview's rules (underscore stripping) and the current ones, on the same bytes.
    for (std::string_view version : {forewarn::azure::latest_api_version, std::string_view("2017-03-01")}) {
        auto r = forewarn::azure::parse_document(body, version);
        if (!r) {
            const auto code = r.error().code;
            FOREWARN_FUZZ_CHECK(code == forewarn::errc::empty_body || code == forewarn::errc::parse_error ||
                                    code == forewarn::errc::invalid_document,
                                "parse_document failed with an unexpected code");
            FOREWARN_FUZZ_CHECK(!r.error().message.empty(), "error without a message");
            FOREWARN_FUZZ_CHECK(r.error().offset == forewarn::error::npos || r.error().offset <= size,
                                "parse offset past the end of the body");
            continue;
        }
        FOREWARN_FUZZ_CHECK(r->origin == forewarn::cloud::azure, "origin is not azure");
        FOREWARN_FUZZ_CHECK(!r->incarnation.empty(), "empty incarnation");
        for (std::size_t i = 0; i < r->incarnation.size(); ++i) {
            const char c = r->incarnation[i];
            FOREWARN_FUZZ_CHECK((c >= '0' && c <= '9') || (i == 0 && c == '-'), "incarnation is not decimal");
        }
        std::unordered_set<std::string_view> ids;
        for (const auto& e : r->events) {
            FOREWARN_FUZZ_CHECK(!e.id.empty(), "empty EventId accepted");
            FOREWARN_FUZZ_CHECK(ids.insert(e.id).second, "duplicate EventId accepted");
            FOREWARN_FUZZ_CHECK(e.type == forewarn::azure::event_type_of(e.raw_type), "type does not match raw_type");
            FOREWARN_FUZZ_CHECK(e.status == forewarn::azure::event_status_of(e.raw_status), "status does not match raw_status");
        }
        // Parsing is a function of the bytes: a second parse gives the same document.
        auto again = forewarn::azure::parse_document(body, version);
        FOREWARN_FUZZ_CHECK(again && *again == *r, "parse_document is not deterministic");
    }
    return 0;
}
