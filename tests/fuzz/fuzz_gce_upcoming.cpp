// SPDX-License-Identifier: MIT
// libFuzzer target: GCE's upcoming-maintenance answer (status and body fuzzed). Invariants: no
// crash, hang, leak or UB; 404 and the 503 "no notifications" answer are never errors; a window
// becomes an event with the fixed id, type maintenance, and a status that follows
// maintenance_status.
#include <forewarn/gce/upcoming_maintenance.hpp>

#include "fuzz_check.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    static constexpr int statuses[] = {200, 200, 200, 404, 503, 500, 0};
    const int status = statuses[in.ConsumeIntegralInRange<std::size_t>(0, std::size(statuses) - 1)];
    const std::string body = in.ConsumeRemainingBytesAsString();
    auto m = forewarn::gce::parse_upcoming_maintenance(status, body);
    if (status == 404) FOREWARN_FUZZ_CHECK(m && !*m, "404 is not 'nothing announced'");
    if (!m) {
        FOREWARN_FUZZ_CHECK(!m.error().message.empty(), "error without a message");
        return 0;
    }
    if (!*m) return 0;
    const auto e = forewarn::gce::to_event(**m);
    FOREWARN_FUZZ_CHECK(e.id == "upcoming-maintenance", "event id");
    FOREWARN_FUZZ_CHECK(e.type == forewarn::event_type::maintenance, "event type");
    const bool pending = forewarn::detail::iequals((*m)->status, "PENDING");
    const bool ongoing = forewarn::detail::iequals((*m)->status, "ONGOING");
    FOREWARN_FUZZ_CHECK(pending == (e.status == forewarn::event_status::scheduled), "PENDING is scheduled");
    FOREWARN_FUZZ_CHECK(ongoing == (e.status == forewarn::event_status::started), "ONGOING is started");
    FOREWARN_FUZZ_CHECK(e.not_before == (*m)->window_start, "not_before is the window start");
    return 0;
}
