// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// Which metadata service a document or event came from.
enum class cloud { none, azure, gce, aws, alibaba, tencent };

/// What kind of maintenance an event announces, cloud-neutral. The mapping of each cloud's
/// wire words is in docs/architecture.md ("The model"); event::raw_type keeps the word itself.
enum class event_type {
    unknown,         ///< a wire value this version does not know; see event::raw_type
    freeze,          ///< Azure Freeze: paused for seconds (memory-preserving maintenance)
    reboot,          ///< Azure Reboot; AWS instance-reboot, system-reboot
    redeploy,        ///< Azure Redeploy: moved to another host, temporary disk lost
    preempt,         ///< Azure Preempt (Spot eviction); AWS spot instance-action terminate
    terminate,       ///< Azure Terminate: scale-set deletion
    live_migrate,    ///< GCE maintenance-event MIGRATE_ON_HOST_MAINTENANCE
    host_terminate,  ///< GCE maintenance-event TERMINATE_ON_HOST_MAINTENANCE
    preempted,       ///< GCE instance/preempted TRUE
    maintenance,     ///< host maintenance of unannounced impact: AWS system-maintenance, GCE upcoming-maintenance
    retirement,      ///< AWS instance-retirement: the host is going away for good
    stop,            ///< AWS instance-stop; AWS spot instance-action stop
    hibernate,       ///< AWS spot instance-action hibernate
    rebalance,       ///< AWS rebalance recommendation: a Spot instance at elevated risk of interruption
};

/// Where an event is in its life. Azure and GCE have no "completed": a finished event
/// disappears. AWS keeps finished scheduled events in its list with a final State.
enum class event_status {
    unknown,    ///< a wire value this version does not know; see event::raw_status
    scheduled,  ///< announced; waits for approval or NotBefore
    started,    ///< in progress (or about to be, with no way to delay it)
    completed,  ///< over, as the service says (AWS State completed)
    cancelled,  ///< withdrawn before it started, as the service says (AWS State canceled)
};

/// True for completed and cancelled: the service itself says the event is over.
constexpr bool is_final(event_status s) noexcept { return s == event_status::completed || s == event_status::cancelled; }

/// Who asked for the event (Azure EventSource, in the api-versions that have it).
enum class event_source { unknown, platform, user };

/// One maintenance event, cloud-neutral. Wire strings are kept raw beside their enumerators.
struct event {
    std::string id;               ///< Azure EventId; for GCE a synthetic id per kind
    event_type type = event_type::unknown;
    std::string raw_type;         ///< the wire string, e.g. "Freeze" or "MIGRATE_ON_HOST_MAINTENANCE"
    event_status status = event_status::unknown;
    std::string raw_status;       ///< the wire string, e.g. "Scheduled"
    std::string resource_type;    ///< Azure ResourceType, e.g. "VirtualMachine"
    std::vector<std::string> resources;  ///< VM names this event affects (Azure Resources)
    /// The earliest time the event may start; empty when the wire value is absent or "".
    std::optional<std::chrono::system_clock::time_point> not_before;
    std::string description;
    std::optional<event_source> source;  ///< absent in api-versions that predate EventSource
    std::string raw_source;
    /// Azure DurationInSeconds as sent: -1 means the platform does not know; absent in api-versions that predate it.
    std::optional<std::int64_t> duration_in_seconds;
    /**
     * Whether this event can be approved (started early) through its source: set by the source
     * (Azure: every Scheduled event; GCE: an upcoming window that can be rescheduled, with
     * perform_maintenance on; AWS: the Auto Scaling termination, with a lifecycle hook named;
     * Alibaba, Tencent: none), absent when a source does not say.
     * The poller fills in an absent one from the source's can_approve() before anything sees the
     * document. An event that cannot be approved never waits for an approval, never asks a
     * coordinator for a slot and never joins an approval request. Not content: not compared by ==.
     */
    std::optional<bool> approvable;

    /// The expected impact, or nothing when absent or unknown (-1).
    std::optional<std::chrono::seconds> duration() const {
        if (!duration_in_seconds || *duration_in_seconds < 0) return std::nullopt;
        return std::chrono::seconds(*duration_in_seconds);
    }

    /// True when `name` is listed in resources (exact, case-sensitive match as Azure sends it).
    bool affects(std::string_view name) const {
        for (const auto& r : resources)
            if (r == name) return true;
        return false;
    }

    friend bool operator==(const event& a, const event& b) {
        return a.id == b.id && a.type == b.type && a.raw_type == b.raw_type && a.status == b.status &&
               a.raw_status == b.raw_status && a.resource_type == b.resource_type &&
               a.resources == b.resources && a.not_before == b.not_before &&
               a.description == b.description && a.source == b.source &&
               a.raw_source == b.raw_source && a.duration_in_seconds == b.duration_in_seconds;
    }
    friend bool operator!=(const event& a, const event& b) { return !(a == b); }
};

/// A snapshot of the scheduled events, with the service's version tag for it.
struct document {
    cloud origin = cloud::none;
    /// Informative and opaque: Azure's DocumentIncarnation as decimal text, GCE's ETags. It may
    /// start over. Same non-empty incarnation, same content; the sources keep their own cursors.
    std::string incarnation;
    std::vector<event> events;
    /// The service's own time when it answered (its `Date` header), when it sent one: what
    /// NotBefore is judged against when an event disappears.
    std::optional<std::chrono::system_clock::time_point> service_time;
    /**
     * The source's word on an event that is missing from this document: true when its service
     * ends every notice by clearing it and has no other way to say it is over (GCE), so an event
     * that vanished completed. False (Azure, AWS): the recover reason is judged from evidence.
     */
    bool vanished_means_completed = false;
    /**
     * The keys of the source whose last request failed while others answered (AWS's scheduled
     * events beside its Spot notice, GCE's upcoming-maintenance beside its maintenance-event):
     * each key's error, its URL naming the key. Such a key's events are its last good answer's
     * (none before its first). Not content: not compared by ==.
     */
    std::vector<error> key_errors;
    /**
     * The source's word on which events may be happening without a Started status: the types it
     * announces only shortly before they happen and never marks Started (GCE's live migration:
     * its notice is set about 60 s before and cleared after). Empty for the others. Not content.
     */
    std::vector<event_type> under_way_when_announced;

    /// Whether `e` may be happening now: Started, or of a type under way once announced.
    bool under_way(const event& e) const {
        if (e.status == event_status::started) return true;
        for (auto t : under_way_when_announced)
            if (t == e.type) return true;
        return false;
    }

    /// The event with this id, or nullptr.
    const event* find(std::string_view event_id) const {
        for (const auto& e : events)
            if (e.id == event_id) return &e;
        return nullptr;
    }

    /// Same service, incarnation and events (service_time is when it was asked, not content).
    friend bool operator==(const document& a, const document& b) {
        return a.origin == b.origin && a.incarnation == b.incarnation && a.events == b.events;
    }
    friend bool operator!=(const document& a, const document& b) { return !(a == b); }
};

/// "azure", "gce", "aws", "alibaba", "tencent" or "none".
constexpr std::string_view to_string(cloud c) noexcept {
    switch (c) {
    case cloud::azure: return "azure";
    case cloud::gce: return "gce";
    case cloud::aws: return "aws";
    case cloud::alibaba: return "alibaba";
    case cloud::tencent: return "tencent";
    case cloud::none: break;
    }
    return "none";
}

/// The lower-case name used in forewarn's own output: "freeze", "live_migrate", "unknown", ...
constexpr std::string_view to_string(event_type t) noexcept {
    switch (t) {
    case event_type::freeze: return "freeze";
    case event_type::reboot: return "reboot";
    case event_type::redeploy: return "redeploy";
    case event_type::preempt: return "preempt";
    case event_type::terminate: return "terminate";
    case event_type::live_migrate: return "live_migrate";
    case event_type::host_terminate: return "host_terminate";
    case event_type::preempted: return "preempted";
    case event_type::maintenance: return "maintenance";
    case event_type::retirement: return "retirement";
    case event_type::stop: return "stop";
    case event_type::hibernate: return "hibernate";
    case event_type::rebalance: return "rebalance";
    case event_type::unknown: break;
    }
    return "unknown";
}

/// "scheduled", "started", "completed", "cancelled" or "unknown".
constexpr std::string_view to_string(event_status s) noexcept {
    switch (s) {
    case event_status::scheduled: return "scheduled";
    case event_status::started: return "started";
    case event_status::completed: return "completed";
    case event_status::cancelled: return "cancelled";
    case event_status::unknown: break;
    }
    return "unknown";
}

/// "platform", "user" or "unknown".
constexpr std::string_view to_string(event_source s) noexcept {
    switch (s) {
    case event_source::platform: return "platform";
    case event_source::user: return "user";
    case event_source::unknown: break;
    }
    return "unknown";
}

/// The enumerators back from their to_string() names ("unknown" for any other text).
constexpr cloud cloud_from_string(std::string_view name) noexcept {
    for (auto c : {cloud::azure, cloud::gce, cloud::aws, cloud::alibaba, cloud::tencent})
        if (to_string(c) == name) return c;
    return cloud::none;
}
constexpr event_type event_type_from_string(std::string_view name) noexcept {
    for (auto t : {event_type::freeze, event_type::reboot, event_type::redeploy, event_type::preempt, event_type::terminate,
                   event_type::live_migrate, event_type::host_terminate, event_type::preempted, event_type::maintenance,
                   event_type::retirement, event_type::stop, event_type::hibernate, event_type::rebalance})
        if (to_string(t) == name) return t;
    return event_type::unknown;
}
constexpr event_status event_status_from_string(std::string_view name) noexcept {
    for (auto st : {event_status::scheduled, event_status::started, event_status::completed, event_status::cancelled})
        if (to_string(st) == name) return st;
    return event_status::unknown;
}
constexpr event_source event_source_from_string(std::string_view name) noexcept {
    for (auto src : {event_source::platform, event_source::user})
        if (to_string(src) == name) return src;
    return event_source::unknown;
}

FOREWARN_END_NAMESPACE

