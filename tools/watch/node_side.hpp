// SPDX-License-Identifier: MIT
// The node under the agent (--kubernetes, --kubeconfig), as the agent and check see it: what it
// does with this VM's events, its drains for /metrics, its failures for /healthz, and its steps in
// check's report. The Kubernetes room implements it (kubernetes/node_actions.hpp) and makes one
// from the settings (kubernetes/node_side.cpp); a build without that room has node_side_none.cpp,
// which refuses the flags with the reason. CMake links one of the two, so the agent and check
// hold no #if for it.
#pragma once

#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>

#include "check_row.hpp"
#include "metrics.hpp"
#include "options.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace watch {

class node_side {
public:
    virtual ~node_side() = default;

    /// Whether `e` is this node's: it names no VM, or names this one. The calls below do nothing
    /// for an event that is not (announced() says ready at once).
    virtual bool acts_on(const forewarn::event& e) const = 0;
    /// The node's work for an announcement, queued; `then` runs once it has ended, with whether
    /// the event may be approved (false: the drain reached its deadline with pods left). `line` is
    /// the change's JSON line, what the node records.
    virtual void announced(const forewarn::change& c, std::string line, std::function<void(bool ready)> then) = 0;
    /// An event an earlier run recorded on the node: its work again, without a second record.
    virtual void resumed(const forewarn::change& c, std::string line, std::function<void(bool ready)> then) = 0;
    /// The changes an earlier run recorded on the node, read now.
    virtual forewarn::result<std::vector<forewarn::change>> recorded() = 0;
    virtual void started(const forewarn::event& e) = 0;
    virtual void over(const forewarn::event& e, const std::string& reason) = 0;
    /// Ends the node's thread; what is queued is left to the next start.
    virtual void stop() = 0;
    /// While the node's writes fail: the last failure ("" when they do not).
    virtual std::string failing() const = 0;
    virtual drain_stats drains() const = 0;
};

/// What the node asks of the agent it serves.
struct node_context {
    std::string cloud;  ///< named in the node's Events
    /// Whether the metadata service's document still lists an event (nullopt: no document yet).
    std::function<std::optional<bool>(const std::string& id)> still_on;
    /// This VM's name as the metadata service names it.
    std::function<std::string()> self;
};

/// The node for these settings, its choice logged: nullptr when they name none (neither
/// --kubernetes nor --kubeconfig); an error whose message is the line to log (exit 2) when they
/// cannot be used, or this build has no Kubernetes room.
forewarn::result<std::unique_ptr<node_side>> make_node_side(const settings& s, node_context context);

/// check's rows for the node named by the settings (none when they name none): the connection,
/// then what the API server lets this agent do, within `bound`.
std::vector<check_row> node_side_check(const settings& s, std::chrono::milliseconds bound);

}  // namespace watch
