// SPDX-License-Identifier: MIT
#pragma once

// The fleet budget's vocabulary and its one rule, shared by the etcd coordinator
// (etcd/maintenance_budget.hpp) and the in-process fake (testing/fake_fleet.hpp), so that a user's
// unit test with the fake decides exactly as production does.

#include <forewarn/config.hpp>
#include <forewarn/poller/coordinator.hpp>
#include <forewarn/event.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// Where a member stands in its group's budget.
enum class slot_state {
    none,     ///< no maintenance wanted or under way
    waiting,  ///< an event is ready to approve: queued for a slot
    holding,  ///< holds one of the group's K slots: may approve, in maintenance until recover (+ settle)
    forced,   ///< the platform started an event without this VM's approval: counted, even beyond K
};

constexpr std::string_view to_string(slot_state s) noexcept {
    switch (s) {
    case slot_state::none: return "none";
    case slot_state::waiting: return "waiting";
    case slot_state::holding: return "holding";
    case slot_state::forced: return "forced";
    }
    return "none";
}

/// The wire word back to the state; anything else is none.
slot_state slot_state_from_string(std::string_view s) noexcept;

/// One member of a group as the fleet view shows it.
struct fleet_member {
    std::string name;
    slot_state slot = slot_state::none;
    std::vector<event> events;  ///< what is pending on that VM (its last published document)
    std::string updated;        ///< when it last published, ISO-8601 UTC
};

/// A change of this VM's slot, for logs and forewarn-watch's JSON lines.
struct slot_change {
    std::string group;
    std::string member;
    slot_state from = slot_state::none;
    slot_state to = slot_state::none;
    std::string event_id;  ///< the event that asked for it (waiting, holding), if known
};

namespace detail {

/// One queue entry: a member's slot key, in the order it was created (etcd's create_revision).
struct slot_entry {
    std::string member;
    slot_state state = slot_state::none;
    std::int64_t order = 0;
};

/**
 * The budget's rule: may `self`, waiting, take a slot now? Members holding a slot or forced into
 * maintenance are busy; the waiting ones are served in the order they asked (no starvation).
 * `self` may take one when busy + (waiting members ahead of it) < max.
 */
bool slot_admits(std::vector<slot_entry> entries, std::string_view self, std::size_t max);

/// Whether an event of the document takes this VM down: it names it (or names no VM at all).
inline bool concerns(const event& e, std::string_view self) { return e.resources.empty() || e.affects(self); }

/// This VM is in maintenance: an event naming it was approved by it or started by the platform.
bool in_maintenance(const std::vector<local_event>& events, std::string_view self);

bool any_started(const std::vector<local_event>& events, std::string_view self);

/// A member name inside an etcd key or a file name: '%', '/' and bytes outside printable ASCII
/// percent-encoded, so that a name from the network is data and never a path of keys.
std::string encode_key_part(std::string_view name);

}  // namespace detail

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/fleet-inl.hpp>
#endif
