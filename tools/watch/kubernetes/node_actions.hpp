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
// - The types whose rules take the node out of service (rules.hpp; by default all but live
//   migration, freeze and rebalance), at NotBefore less the drain lead, or at once, as the rules say: the taint `forewarn/maintenance=<type>:NoSchedule` and a cordon, recorded in
//   the annotation `forewarn/cordoned-for` only when this agent made it (a node already cordoned
//   is an administrator's); for a drain, the label `node.kubernetes.io/exclude-from-external-load-balancers`
//   (the service controller then takes the node out of cloud load balancers), recorded in
//   `forewarn/excluded-for` only when this agent added it, and `lb_drain` seconds for the
//   balancers to let go; then the drain (drain.hpp): `DrainInProgress`, the evictions, and
//   `Drained` with an Event, or at its deadline a Warning Event `DrainTimedOut` naming each pod
//   left. The deadline is NotBefore less the hook deadline and the drain margin (the time a
//   prepare hook and the approval get after it), or the drain timeout from its start for an
//   event with no time. A drain never holds up the other work: each round is one task.
// - Started: `MaintenanceInProgress`.
// - Over: the taint removed, the node uncordoned only if `forewarn/cordoned-for` says forewarn
//   cordoned it, the load-balancer label removed only if `forewarn/excluded-for` says forewarn
//   added it, the conditions False with reason `MaintenanceOver`, the label removed, an Event
//   `MaintenanceOver` with the reason. While another announced event is still on, what it needs
//   stays.

#include "../defaults.hpp"
#include "../node_side.hpp"
#include "connection.hpp"
#include "drain.hpp"
#include "node.hpp"
#include "rules.hpp"

#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace watch::kubernetes {

inline constexpr const char* maintenance_taint = "forewarn/maintenance";
inline constexpr const char* maintenance_time_label = "forewarn/scheduled-maintenance-time";
inline constexpr const char* cordoned_for_annotation = "forewarn/cordoned-for";
/// The well-known label the service controller reads to leave a node out of cloud load balancers.
inline constexpr const char* exclude_lb_label = "node.kubernetes.io/exclude-from-external-load-balancers";
inline constexpr const char* excluded_for_annotation = "forewarn/excluded-for";
/// The events this agent acts on now (announced, not over), each as its change's JSON line, by
/// id: what a restarted agent resumes, even when its state file is lost.
inline constexpr const char* events_annotation = "forewarn/events";

/// The annotation's value with `id` set to `record` (a change's JSON object) or removed (nullopt):
/// "" when no event is left. A value that is not a JSON object is started afresh.
std::string with_record(const std::string* annotation, const std::string& id, const std::optional<std::string>& record);
/// Each record in the annotation's value (a change's JSON object as text); none when malformed.
std::vector<std::string> records_of(const std::string& annotation);
/// Whether the annotation's value holds a record for `id`: looked up by its key, no record is
/// read back into a change.
bool has_record(const std::string& annotation, const std::string& id);

/// The condition's reason for a type: a stable CamelCase word (`Reboot`, `LiveMigrate`, ...).
std::string condition_reason(forewarn::event_type t);

/// The drain's deadline: NotBefore less the hook deadline and the drain margin, or `start` plus
/// the drain timeout for an event with no time.
std::chrono::system_clock::time_point drain_deadline(const forewarn::event& e, std::chrono::system_clock::time_point start,
                                                     std::chrono::seconds hook_deadline, std::chrono::seconds drain_margin,
                                                     std::chrono::seconds drain_timeout);

struct node_actions_options {
    std::chrono::seconds drain_lead = defaults::drain_lead;        ///< taint and cordon this long before NotBefore
    std::chrono::seconds hook_deadline = defaults::hook_deadline;  ///< the prepare hook's end, this long before NotBefore (--hook-deadline)
    std::chrono::seconds drain_margin = defaults::drain_margin;    ///< the drain ends this long before the hook deadline
    std::chrono::seconds drain_timeout = defaults::drain_timeout;  ///< a drain's length for an event with no time
    std::chrono::milliseconds drain_round{1000};  ///< between a drain's rounds
    std::chrono::seconds lb_drain{0};          ///< from the load-balancer label to the first eviction (--lb-drain)
    node_rules rules;                          ///< per event type: taint, cordon, drain
    std::string cloud;                         ///< named in the Events' messages
    std::function<void(const std::string&)> log;  ///< one line each (failures once per streak, recoveries)
    /// Whether the metadata service's document still lists the event (nullopt: no document yet):
    /// a resumed event that is gone is over.
    std::function<std::optional<bool>(const std::string& id)> still_on;
    /// This VM's name as the metadata service names it (the poller's self()): an event that names
    /// other VMs only (a document may list its neighbours' events too) never touches the node.
    /// Empty, or a function that returns "": only events that name no VM are the node's.
    std::function<std::string()> self;
    api_options api;
};

/// The node under the agent (node_side.hpp), over the API server.
class node_actions final : public node_side {
public:
    node_actions(connection c, std::string node, node_actions_options o);
    /// The same over a transport of the caller's (tests: forewarn::testing::fake_transport).
    node_actions(connection c, api_transport t, std::string node, node_actions_options o);
    ~node_actions() override;
    node_actions(const node_actions&) = delete;
    node_actions& operator=(const node_actions&) = delete;

    /// Whether `e` is this node's: it names no VM, or names this one (options' self). The calls
    /// below do nothing for an event that is not (announced() says ready at once).
    bool acts_on(const forewarn::event& e) const override;

    /// Each queues its work and returns at once (called from the poller's handlers).
    /// `then` runs on this object's thread once the node's work for the event's announcement
    /// has ended: after the announcement's writes, and for a disruptive type after its taint,
    /// cordon and drain too (from NotBefore less the drain lead). Its argument says whether the
    /// event may be approved: false when the drain reached its deadline with pods left. Never
    /// when the event is over first, or the agent stops. `line` is the change's JSON line (the
    /// agent's to_json, made once per change): what the node records.
    void announced(const forewarn::change& c, std::string line, std::function<void(bool ready)> then) override;
    /// An event an earlier run recorded on the node (recorded()): its work again, without a second
    /// Event, the drain resumed where the node shows it; then checked against the service's
    /// document once there is one (`still_on`), and put back if it is gone.
    void resumed(const forewarn::change& c, std::string line, std::function<void(bool ready)> then) override;
    /// The changes an earlier run recorded on the node (the annotation `forewarn/events`), read now
    /// on the caller's thread.
    forewarn::result<std::vector<forewarn::change>> recorded() override;
    void started(const forewarn::event& e) override;
    void over(const forewarn::event& e, const std::string& reason) override;

    /// Ends the thread: the call under way is cancelled, what is queued is left (the next start
    /// reads the node again and does what is missing).
    void stop() override;
    /// While the node's writes fail: the last failure ("" when they do not). /healthz names it
    /// and stays 200: an API server outage must not restart every agent of the cluster.
    std::string failing() const override;
    drain_stats drains() const override;

private:
    enum class step { announce, take_out, drain, start, over, reconcile };
    using then_fn = std::shared_ptr<std::function<void(bool)>>;
    struct task {
        step what;
        forewarn::event event;
        std::string reason;
        std::chrono::steady_clock::time_point due;
        then_fn then;  // the node's work for the announcement has ended
        std::string record;    // announce: the change's JSON, recorded on the node
        bool resumed = false;  // announce: an earlier run's (no second Event)
    };
    // What a task that worked asks for next: to run again at a time (a drain's next round), and
    // whether `then` runs now, with what.
    struct next {
        std::optional<std::chrono::steady_clock::time_point> again;
        std::optional<bool> then;
    };
    struct drain_run {
        kubernetes::drain drain;
        std::chrono::steady_clock::time_point started;
        bool marked = false;                 // DrainInProgress written
        std::optional<drain::state> ended;   // the outcome, once reached (its writes may be retried)
        std::size_t refusals_counted = 0;    // of drain.refusals(), in stats_ already
        std::set<std::string> logged;        // eviction failures logged (each once)
        std::string last_error;              // the round that failed at the deadline
    };
    void run();
    forewarn::result<next> apply(const task& t);
    forewarn::result<next> announce(const task& t);
    forewarn::result<next> reconcile(const forewarn::event& e);
    void queue(task t);
    forewarn::result<next> take_out(const forewarn::event& e, const then_fn& then);
    forewarn::result<next> drain_round(const forewarn::event& e);
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
    std::map<std::string, std::unique_ptr<drain_run>> drains_;  // by event id (the worker's)
    std::set<std::string> put_back_;  // ids already put back by this run (a second over is nothing)
    drain_stats stats_;  // under m_
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace watch::kubernetes
