// SPDX-License-Identifier: MIT
// libFuzzer target: parse_time over any bytes. Invariants: no crash or UB (the date arithmetic
// is all signed 64-bit: UBSan watches for overflow); a parsed time formats as ISO-8601 and as
// RFC 1123, and both texts parse back to the same whole second; an error names an offset inside
// the text.
#include <forewarn/time.hpp>

#include "fuzz_check.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

std::chrono::system_clock::time_point whole_second(std::chrono::system_clock::time_point t) {
    return std::chrono::floor<std::chrono::seconds>(t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = forewarn::parse_time(text);
    if (!r) {
        FOREWARN_FUZZ_CHECK(r.error().code == forewarn::errc::parse_error, "parse_time failed with another code");
        FOREWARN_FUZZ_CHECK(r.error().offset != forewarn::error::npos && r.error().offset <= size,
                            "parse_time error without an offset inside the text");
        return 0;
    }
    if (!*r) {
        FOREWARN_FUZZ_CHECK(text.empty(), "no time from a non-empty text");
        return 0;
    }
    const auto t = **r;
    const std::string iso = forewarn::format_iso8601(t);
    auto back = forewarn::parse_time(iso);
    FOREWARN_FUZZ_CHECK(back && *back && **back == whole_second(t), "format_iso8601 does not parse back");
    const std::string rfc = forewarn::format_rfc1123(t);
    auto back2 = forewarn::parse_time(rfc);
    FOREWARN_FUZZ_CHECK(back2 && *back2 && **back2 == whole_second(t), "format_rfc1123 does not parse back");
    return 0;
}
