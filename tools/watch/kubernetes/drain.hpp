// SPDX-License-Identifier: MIT
#pragma once

// The drain of one node through the Eviction API (docs/kubernetes.md, "The drain"), one round at a
// time so that the node's other work goes on between rounds:
// - the pods bound to the node (`GET /api/v1/pods?fieldSelector=spec.nodeName=NODE`);
// - DaemonSet pods, mirror (static) pods and finished pods stay; every other pod is evicted, one
//   that no controller owns included (the report names those: nothing recreates them);
// - critical pods (priorityClassName system-node-critical or system-cluster-critical, or a
//   priority of 2,000,000,000 or more: what the cluster needs to run) go last: once every other
//   evicted pod is gone, or when the deadline comes so near that their grace would no longer fit;
// - each eviction asks for the pod's own grace period, capped at the time left to the deadline;
// - a 429 is a PodDisruptionBudget that forbids the eviction now: asked again every few seconds
//   until the deadline, and what the server said (it names the budget) kept for the report;
// - a pod is gone when the node's list no longer has its name, or has it with another UID;
// - drained when every evicted pod is gone; timed out at the deadline with pods left.
// The Eviction's group version comes from discovery, once, as kubectl asks: `policy/v1`, or
// `policy/v1beta1` on servers before 1.22.

#include "api.hpp"

#include <forewarn/result.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace watch::kubernetes {

/// A pod on the node, as the drain reads it.
struct pod_view {
    std::string namespace_name;
    std::string name;
    std::string uid;
    std::string phase;                   ///< Pending, Running, Succeeded, Failed, Unknown
    bool being_deleted = false;          ///< metadata.deletionTimestamp is set
    bool mirror = false;                 ///< the annotation kubernetes.io/config.mirror
    bool daemon_set = false;             ///< its controller is a DaemonSet
    bool controlled = false;             ///< some controller owns it (it will be made again elsewhere)
    std::optional<long long> grace;      ///< spec.terminationGracePeriodSeconds
    std::string priority_class;          ///< spec.priorityClassName
    std::optional<long long> priority;   ///< spec.priority (the admission controller's number)

    std::string key() const { return namespace_name + "/" + name; }
    /// What the cluster needs to run: evicted after every other pod (see the top).
    bool critical() const noexcept;
};

/// The priority at and above which a pod is critical (the system classes' own: 2,000,000,000 and
/// 2,000,001,000; user classes are at most 1,000,000,000).
constexpr long long critical_priority = 2000000000;

/// What the drain does with a pod.
enum class pod_fate { evict, stays_daemon_set, stays_mirror, stays_finished };
pod_fate fate_of(const pod_view& p) noexcept;

/// A PodList's items; an answer that is not a PodList is an error.
forewarn::result<std::vector<pod_view>> parse_pod_list(std::string_view body);

/// The group version of the Eviction subresource in the server's `/api/v1` discovery document
/// (the resource `pods/eviction` of kind Eviction): "policy/v1" or "policy/v1beta1". A document
/// without it is an error (the server cannot evict).
forewarn::result<std::string> eviction_version(std::string_view api_v1_discovery);

/// An Eviction's body for that group version, with deleteOptions.gracePeriodSeconds when given.
std::string eviction_body(const std::string& group_version, const pod_view& p, std::optional<long long> grace_seconds);

/// What an eviction's answer means.
struct eviction_answer {
    enum class kind { evicted, refused, gone, failed } what = kind::failed;
    std::string why;  ///< refused: what the server said (the budget's message); failed: the error
};
eviction_answer read_eviction_answer(const api_answer& a);

/// The grace period an eviction asks for: the pod's own (30 s when unset, as the API defaults
/// it), at most the whole seconds left to the deadline, at least 1 (0 would be a forced delete).
long long capped_grace(std::optional<long long> pod_grace, std::chrono::seconds left) noexcept;

/// One drain. `api` outlives it; each step() is one round of requests. An eviction that fails
/// (a 403, a 500 left after the API client's retries) is that pod's reason and is asked again
/// later; only a failed discovery or pod list fails the round.
class drain {
public:
    enum class state { draining, drained, timed_out };

    /// Pods still on the node at the end, and why.
    struct left_pod {
        std::string key;     ///< namespace/name
        std::string reason;  ///< what refused its eviction, or "not gone yet"
    };

    drain(api_client& api, std::string node, std::chrono::system_clock::time_point deadline,
          std::chrono::seconds refused_retry = std::chrono::seconds(2));

    /// One round: list the node's pods, evict those due, see which are gone. An error leaves the
    /// drain as it was (the next round asks again); at the deadline the drain ends, timed out.
    forewarn::result<state> step(std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

    std::chrono::system_clock::time_point deadline() const noexcept { return deadline_; }
    /// Evictions the server accepted (or found gone), and those a budget refused (each refusal).
    std::size_t evicted() const noexcept { return evicted_.size(); }
    std::size_t refusals() const noexcept { return refusals_; }
    /// Evicted pods that no controller owns: nothing recreates them.
    const std::vector<std::string>& unowned() const noexcept { return unowned_; }
    /// After a timeout: each pod left and why.
    const std::vector<left_pod>& left() const noexcept { return left_; }
    /// The grace period asked for each evicted pod (namespace/name), for the report and tests.
    const std::map<std::string, long long>& grace_given() const noexcept { return grace_given_; }
    const std::string& version() const noexcept { return version_; }
    /// Evictions that failed (not a budget's refusal: a 403, a 500 left after the retries) since
    /// the last call, for the log.
    std::vector<std::string> take_failures() { return std::exchange(failures_, {}); }

private:
    forewarn::result<void> discover();
    api_client& api_;
    std::string node_;
    std::chrono::system_clock::time_point deadline_;
    std::chrono::seconds refused_retry_;
    std::string version_;                                        // the Eviction's group version
    std::map<std::string, std::string> evicted_;                 // namespace/name → UID it had
    std::map<std::string, std::string> refused_;                 // namespace/name → what refused it
    std::map<std::string, std::chrono::system_clock::time_point> retry_at_;
    std::map<std::string, long long> grace_given_;
    std::vector<std::string> unowned_;
    std::vector<left_pod> left_;
    std::vector<std::string> failures_;
    std::size_t refusals_ = 0;
};

}  // namespace watch::kubernetes
