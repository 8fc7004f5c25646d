// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/event.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// How the VMs named in an event's Resources pick the one that approves it.
enum class leader_rule {
    first_listed,  ///< the first name in Resources (the seeds' "first machine in Resources")
    lowest_name,   ///< the lowest name in byte order (stable if the service ever reorders Resources)
};

/**
 * Leader election over an event's Resources. Approving an event lets it proceed for every VM it
 * names, so one of them (the leader) approves. For user-initiated events the seeds advise a
 * primary and a secondary: a follower approves too when the event is still Scheduled a grace
 * period after it first saw it, so recovery is not held back by a leader that does not answer.
 * Platform events are left to the leader and to NotBefore.
 */
class leader_election {
public:
    leader_election() = default;
    explicit leader_election(leader_rule rule, std::chrono::nanoseconds follower_grace = std::chrono::seconds(30))
        : rule_(rule), grace_(follower_grace) {}

    leader_rule rule() const noexcept { return rule_; }
    std::chrono::nanoseconds follower_grace() const noexcept { return grace_; }

    /// The elected leader among e.resources; empty when it lists nobody.
    std::string_view leader(const event& e) const noexcept;

    /// True when `self` is named by the event and elected.
    bool is_leader(const event& e, std::string_view self) const noexcept;

    /**
     * Whether `self` may approve `e`, which it first saw `seen_for` ago: the leader always; a
     * follower only a user-initiated event still Scheduled once the grace period has passed.
     * A VM the event does not name never.
     */
    bool may_approve(const event& e, std::string_view self, std::chrono::nanoseconds seen_for) const noexcept;

    /// The follower rule alone: a user-initiated event still Scheduled after the grace period.
    bool follower_may_approve(const event& e, std::chrono::nanoseconds seen_for) const noexcept;

private:
    leader_rule rule_ = leader_rule::first_listed;
    std::chrono::nanoseconds grace_ = std::chrono::seconds(30);
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/poller/leader-inl.hpp>
#endif
