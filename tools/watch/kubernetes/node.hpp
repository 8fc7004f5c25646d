// SPDX-License-Identifier: MIT
#pragma once

// What forewarn-watch writes to its Node, each write with the patch type that cannot lose anyone
// else's change (docs/kubernetes.md):
// - labels, annotations and the cordon (`spec.unschedulable`): a JSON merge patch of just those
//   fields (a null removes a label);
// - conditions: a strategic merge patch on `nodes/NAME/status`, which merges the list by `type`
//   (a JSON merge patch there would replace the list and drop the kubelet's own conditions);
// - taints: `spec.taints` is an atomic list a strategic merge patch replaces whole, so it is
//   written as a JSON patch whose first op tests the `resourceVersion` it was read at; a change
//   in between fails the test and the write starts again from a fresh read;
// - Events: created in namespace `default`, about the Node.

#include "api.hpp"

#include <rapidjson/document.h>

#include <forewarn/result.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace watch::kubernetes {

struct taint {
    std::string key;
    std::string value;
    std::string effect;  ///< NoSchedule, PreferNoSchedule or NoExecute
};

struct node_condition {
    std::string type;
    std::string status;  ///< "True", "False" or "Unknown"
    std::string reason;
    std::string message;
};

/// What the agent reads of its Node.
struct node_view {
    std::string name;
    std::string uid;
    std::string resource_version;
    bool unschedulable = false;
    std::vector<taint> taints;
    std::vector<std::pair<std::string, std::string>> labels;
    std::vector<std::pair<std::string, std::string>> annotations;
    std::vector<node_condition> conditions;

    const std::string* label(const std::string& key) const;
    const std::string* annotation(const std::string& key) const;
    const node_condition* condition(const std::string& type) const;
    bool has_taint(const std::string& key, const std::string& effect) const;
};

/// A change of labels or annotations: a value, or nullopt to remove the key.
using metadata_change = std::vector<std::pair<std::string, std::optional<std::string>>>;

/// A Kubernetes Event about the Node.
struct node_event {
    std::string reason;   ///< CamelCase: MaintenanceScheduled, Drained, DrainTimedOut, ...
    std::string message;  ///< free text (network input in it is data: JSON-escaped)
    bool warning = false;
};

/// A node's name as the API takes it: a DNS subdomain (lower-case letters, digits, '-' and '.',
/// at most 253). Anything else is refused before it reaches a URL.
forewarn::result<void> validate_node_name(const std::string& name);

class node_api {
public:
    /// `api` outlives this object.
    node_api(api_client& api, std::string node);

    const std::string& name() const noexcept { return node_; }

    forewarn::result<node_view> get();
    /// One merge patch: labels, annotations and the cordon, whichever are given.
    forewarn::result<void> patch_metadata(const metadata_change& labels, const metadata_change& annotations,
                                          std::optional<bool> unschedulable = std::nullopt);
    /// One strategic merge patch of one condition on nodes/NAME/status. Its lastTransitionTime
    /// moves only when its status changes (`current` is the node as last read, if known).
    forewarn::result<void> set_condition(const node_condition& c, const node_view* current = nullptr);
    /// Adds the taint unless one with its key and effect is there: true when added. Other
    /// clients' taints written in between are kept (the resourceVersion test).
    forewarn::result<bool> add_taint(const taint& t);
    /// Removes the taint with this key and effect: true when it was there.
    forewarn::result<bool> remove_taint(const std::string& key, const std::string& effect);
    forewarn::result<void> post_event(const node_event& e);

    /// Writes of taints that met a change in between and were read and written again.
    std::size_t conflicts() const noexcept { return conflicts_; }
    /// Tests: called between a taint write's read of the node and its write (another writer
    /// comes in there).
    void before_taint_write(std::function<void()> f) { before_taint_write_ = std::move(f); }

private:
    forewarn::result<rapidjson::Document> read();  // GET the node, parsed
    forewarn::result<bool> write_taints(const std::string& key, const std::string& effect, const taint* added);
    api_client& api_;
    std::string node_;
    std::string uid_;
    std::size_t conflicts_ = 0;
    std::function<void()> before_taint_write_;
};

/// Now as the API's times are written: "2026-11-28T10:00:00Z".
std::string api_time(std::chrono::system_clock::time_point t);

}  // namespace watch::kubernetes
