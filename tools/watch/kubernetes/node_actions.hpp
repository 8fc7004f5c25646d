// SPDX-License-Identifier: MIT
#pragma once

// What an event does to this agent's Node (docs/kubernetes.md, "What happens to the node"), done
// on a thread of its own so that an API server that cannot be reached never holds up the watch of
// the metadata service: a write that fails is tried again, with a growing pause, until it is done
// or the agent stops.
//
// - Announced, every event: an Event `MaintenanceScheduled`, the condition `MaintenancePlanned`
//   (reason from the event's type), the label `forewarn/scheduled-maintenance-time` (NotBefore in
//   Unix seconds; none without a time).
// - Disruptive types (all but live migration, freeze and rebalance), at NotBefore less the drain
//   lead, or at once: the taint `forewarn/maintenance=<type>:NoSchedule` and a cordon, recorded in
//   the annotation `forewarn/cordoned-for` only when this agent made it (a node already cordoned
//   is an administrator's).
// - Started: `MaintenanceInProgress`.
// - Over: the taint removed, the node uncordoned only if `forewarn/cordoned-for` says forewarn
//   cordoned it, the conditions False with reason `MaintenanceOver`, the label removed, an Event
//   `MaintenanceOver` with the reason. While another announced event is still on, what it needs
//   stays.

#include "connection.hpp"
#include "node.hpp"

#include <forewarn/event.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace watch::kubernetes {

inline constexpr const char* maintenance_taint = "forewarn/maintenance";
inline constexpr const char* maintenance_time_label = "forewarn/scheduled-maintenance-time";
inline constexpr const char* cordoned_for_annotation = "forewarn/cordoned-for";

/// Whether the event's type takes the node out of service (taint, cordon, later the drain).
bool disruptive(forewarn::event_type t) noexcept;
/// The condition's reason for a type: a stable CamelCase word (`Reboot`, `LiveMigrate`, ...).
std::string condition_reason(forewarn::event_type t);

struct node_actions_options {
    std::chrono::seconds drain_lead{15 * 60};  ///< taint and cordon this long before NotBefore
    std::string cloud;                         ///< named in the Events' messages
    std::function<void(const std::string&)> log;  ///< one line each (failures once per streak, recoveries)
    api_options api;
};

class node_actions {
public:
    node_actions(connection c, std::string node, node_actions_options o);
    ~node_actions();
    node_actions(const node_actions&) = delete;
    node_actions& operator=(const node_actions&) = delete;

    /// Each queues its work and returns at once (called from the poller's handlers).
    /// `then` runs on this object's thread once the node is ready for the event: after the
    /// announcement's writes, and for a disruptive type after its taint and cordon too (at
    /// NotBefore less the drain lead). Never when the event is over first, or the agent stops.
    void announced(const forewarn::event& e, std::function<void()> then = {});
    void started(const forewarn::event& e);
    void over(const forewarn::event& e, const std::string& reason);

    /// Ends the thread: the call under way is cancelled, what is queued is left (the next start
    /// reads the node again and does what is missing).
    void stop();
    /// While the node's writes fail: the last failure ("" when they do not). /healthz names it
    /// and stays 200: an API server outage must not restart every agent of the cluster.
    std::string failing() const;

private:
    enum class step { announce, take_out, start, over };
    struct task {
        step what;
        forewarn::event event;
        std::string reason;
        std::chrono::steady_clock::time_point due;
        std::shared_ptr<std::function<void()>> then;  // the node is ready for the event
    };
    void run();
    forewarn::result<void> apply(const task& t);
    forewarn::result<void> announce(const forewarn::event& e, const std::shared_ptr<std::function<void()>>& then);
    forewarn::result<void> take_out(const forewarn::event& e);
    forewarn::result<void> mark_started(const forewarn::event& e);
    forewarn::result<void> put_back(const forewarn::event& e, const std::string& reason);
    void log(const std::string& line) const;

    node_actions_options options_;
    api_client api_;
    node_api node_;
    mutable std::mutex m_;
    std::string failing_;  // under m_
    std::condition_variable cv_;
    std::deque<task> tasks_;
    std::map<std::string, forewarn::event> on_;  // announced and not over, by id (the worker's)
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace watch::kubernetes
