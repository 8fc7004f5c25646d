// SPDX-License-Identifier: MIT
// The flags of each cloud's own API (approvals through it) and --interval's help, which names
// each client's default: the rows of the option table (options.hpp) that speak of one cloud, so
// that the rest of the table speaks of none. The clients read these settings (clients.cpp).
#include "options.hpp"

namespace watch {

std::vector<flag> cloud_flags() {
    return {
        {"aws-lifecycle-hook", "NAME", "AWS: the Auto Scaling termination lifecycle hook to complete (CONTINUE) once the event is approved, with heartbeats until then (docs/aws.md, \"Auto Scaling\"); without it the notice is heard and nothing is completed", text_into(&settings::aws_lifecycle_hook, "--aws-lifecycle-hook needs a name")},
        {"aws-autoscaling-group", "NAME", "AWS: the instance's Auto Scaling group (default: its tag aws:autoscaling:groupName, which needs instance metadata tags on)", text_into(&settings::aws_autoscaling_group, "--aws-autoscaling-group needs a name")},
        {"aws-heartbeat", "SECONDS", "AWS: record a lifecycle action heartbeat this often (at any --interval) while the event waits for its hook or a fleet slot; keep several within the hook's HeartbeatTimeout (default 300)", seconds_into(&settings::aws_heartbeat, "--aws-heartbeat", true)},
        {"aws-api-endpoint", "URL", "AWS: Auto Scaling's endpoint (default https://autoscaling.REGION.amazonaws.com/): a VPC endpoint", url_into(&settings::aws_api_endpoint, "--aws-api-endpoint")},
        {"gce-api-endpoint", "URL", "GCE: Compute's API root for performMaintenance, which starts an upcoming window that can be rescheduled once approved (default https://compute.googleapis.com)", url_into(&settings::gce_api_endpoint, "--gce-api-endpoint")},
    };
}

const char* interval_help() {
    return "poll interval in milliseconds: Azure default 1000 (at least 200); AWS default 5000 (at least 1000) for the "
           "scheduled events, rebalance and Auto Scaling state (the Spot notice is read every second); Alibaba and "
           "Tencent: the Spot notice, default 1000 (at least 200)";
}

}  // namespace watch
