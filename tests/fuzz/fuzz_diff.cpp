// SPDX-License-Identifier: MIT
// libFuzzer target: diff() over pairs of fuzzed documents. The documents are either two fuzzed
// Azure bodies run through parse_document (first byte even) or built directly from the bytes
// (odd: small id alphabet, so ids collide and repeat, duplicates included, any status, origins
// and incarnations). Invariants (the ones the poller relies on):
//   - never crash; diff(d, d) is empty;
//   - every change refers to an event of one of the two documents: prepare/started/updated to
//     the first event of `current` with that id, recover to the first of `previous`;
//   - at most one change per id; recover exactly for the ids of `previous` missing from `current`;
//   - applying the changes to `previous` gives `current` (by id, first occurrence wins), unless
//     both carry the same non-empty incarnation (then, by the protocol, nothing changed).
#include <forewarn/azure/parse.hpp>
#include <forewarn/diff.hpp>

#include "fuzz_check.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

using forewarn::change_kind;
using forewarn::document;
using forewarn::event;

const event* first_with_id(const document& d, const std::string& id) {
    for (const auto& e : d.events)
        if (e.id == id) return &e;
    return nullptr;
}

document built(FuzzedDataProvider& in) {
    static const char* const ids[] = {"a", "b", "c", "d", "e", "f", "", "maintenance-event:X", "preempted"};
    static const char* const statuses[] = {"Scheduled", "Started", "Completed", "", "scheduled"};
    static const char* const types[] = {"Freeze", "Reboot", "Redeploy", "Preempt", "Terminate", "Other"};
    document d;
    const auto origin = in.ConsumeIntegralInRange(0, 2);
    d.origin = origin == 0 ? forewarn::cloud::azure : origin == 1 ? forewarn::cloud::gce : forewarn::cloud::none;
    d.incarnation = in.ConsumeBool() ? std::to_string(in.ConsumeIntegralInRange(0, 3)) : std::string();
    const int n = in.ConsumeIntegralInRange(0, 8);
    for (int i = 0; i < n; ++i) {
        event e;
        e.id = ids[in.ConsumeIntegralInRange<std::size_t>(0, std::size(ids) - 1)];
        e.raw_status = statuses[in.ConsumeIntegralInRange<std::size_t>(0, std::size(statuses) - 1)];
        e.status = forewarn::azure::event_status_of(e.raw_status);
        e.raw_type = types[in.ConsumeIntegralInRange<std::size_t>(0, std::size(types) - 1)];
        e.type = forewarn::azure::event_type_of(e.raw_type);
        if (in.ConsumeBool()) e.resources.push_back(in.ConsumeBool() ? "vm0" : "vm1");
        if (in.ConsumeBool())
            e.not_before = std::chrono::system_clock::time_point(std::chrono::seconds(in.ConsumeIntegralInRange(0, 3)));
        if (in.ConsumeBool()) e.duration_in_seconds = in.ConsumeIntegralInRange(-1, 2);
        if (in.ConsumeBool()) e.description = in.ConsumeRandomLengthString(8);
        d.events.push_back(std::move(e));
    }
    return d;
}

std::optional<document> parsed(FuzzedDataProvider& in) {
    auto r = forewarn::azure::parse_document(in.ConsumeRandomLengthString(4096));
    if (!r) return std::nullopt;
    return std::move(*r);
}

void check(const document& prev, const document& cur) {
    FOREWARN_FUZZ_CHECK(forewarn::diff(prev, prev).empty(), "diff(d, d) is not empty");
    FOREWARN_FUZZ_CHECK(forewarn::diff(cur, cur).empty(), "diff(d, d) is not empty");
    const auto changes = forewarn::diff(prev, cur);

    const bool same_incarnation =
        !prev.incarnation.empty() && prev.incarnation == cur.incarnation && prev.origin == cur.origin;
    if (same_incarnation) {
        FOREWARN_FUZZ_CHECK(changes.empty(), "changes between documents of one incarnation");
        return;
    }

    std::set<std::string> seen;
    for (const auto& c : changes) {
        FOREWARN_FUZZ_CHECK(seen.insert(c.event.id).second, "two changes for one id");
        FOREWARN_FUZZ_CHECK(c.origin == cur.origin && c.incarnation == cur.incarnation, "change not stamped with current");
        const event* now = first_with_id(cur, c.event.id);
        const event* before = first_with_id(prev, c.event.id);
        switch (c.kind) {
        case change_kind::recover:
            FOREWARN_FUZZ_CHECK(before && !now && *before == c.event, "recover of an event not in previous, or still present");
            FOREWARN_FUZZ_CHECK(c.reason != forewarn::recover_reason::none, "recover without a reason");
            break;
        case change_kind::prepare:
            FOREWARN_FUZZ_CHECK(now && !before && *now == c.event, "prepare of an event not new in current");
            FOREWARN_FUZZ_CHECK(now->status != forewarn::event_status::started, "prepare for a Started event");
            break;
        case change_kind::started:
            FOREWARN_FUZZ_CHECK(now && *now == c.event && now->status == forewarn::event_status::started,
                                "started for an event not Started in current");
            FOREWARN_FUZZ_CHECK(!before || before->status != forewarn::event_status::started, "started twice");
            FOREWARN_FUZZ_CHECK(!before || (c.previous && *c.previous == *before), "started without its previous");
            break;
        case change_kind::updated:
            FOREWARN_FUZZ_CHECK(now && before && *now == c.event && *before != *now, "updated without a difference");
            FOREWARN_FUZZ_CHECK(c.previous && *c.previous == *before, "updated without its previous");
            break;
        }
        FOREWARN_FUZZ_CHECK(c.kind == change_kind::recover ? c.reason != forewarn::recover_reason::none
                                                           : c.reason == forewarn::recover_reason::none,
                            "reason on a change that is not a recover");
    }

    // Applying the changes to previous gives current (first occurrence of each id).
    std::map<std::string, event> state;
    for (const auto& e : prev.events) state.emplace(e.id, e);
    for (const auto& c : changes) {
        if (c.kind == change_kind::recover)
            state.erase(c.event.id);
        else
            state[c.event.id] = c.event;
    }
    std::map<std::string, event> want;
    for (const auto& e : cur.events) want.emplace(e.id, e);
    FOREWARN_FUZZ_CHECK(state.size() == want.size(), "applying the changes does not give current's ids");
    for (const auto& [id, e] : want) {
        const auto it = state.find(id);
        FOREWARN_FUZZ_CHECK(it != state.end() && it->second == e, "applying the changes does not give current's events");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    if (in.ConsumeBool()) {
        auto a = parsed(in);
        auto b = parsed(in);
        if (a && b) check(*a, *b);
        if (a) check(*a, document{});
        if (b) check(document{}, *b);
    } else {
        const document a = built(in);
        const document b = built(in);
        check(a, b);
    }
    return 0;
}
