// SPDX-License-Identifier: MIT
// The node under the agent, made from the settings (node_side.hpp): the API server's connection,
// the node's name, the rules, and node_actions over them; check's rows for the node's access.
#include "../node_side.hpp"

#include "../lines.hpp"
#include "access.hpp"
#include "node_actions.hpp"

#include <utility>

namespace watch {

forewarn::result<std::unique_ptr<node_side>> make_node_side(const settings& s, node_context context) {
    if (!s.kubernetes && s.kubeconfig.empty()) return std::unique_ptr<node_side>();
    auto refused = [](const std::string& flag, const forewarn::error& e) {
        return forewarn::error(forewarn::errc::invalid_argument, flag + ": " + one_line(e.describe()));
    };
    auto c = kubernetes::connect(s.kubeconfig);
    if (c)
        if (auto v = kubernetes::validate_node_name(s.node_name); !v) c = std::move(v).error();
    if (!c) return refused("kubernetes", c.error());
    const std::string origin = c->origin;
    kubernetes::node_actions_options o;
    o.drain_lead = s.drain_lead;
    o.hook_deadline = s.hook_deadline;
    o.drain_margin = s.drain_margin;
    o.drain_timeout = s.drain_timeout;
    o.lb_drain = s.lb_drain;  // from the load-balancer label to the first eviction
    if (!s.kubernetes_rules.empty()) {
        auto rules = kubernetes::node_rules::from_file(s.kubernetes_rules);
        if (!rules) return refused("--kubernetes-rules", rules.error());
        o.rules = std::move(*rules);
    }
    o.rules.drain_also({s.drain_also.begin(), s.drain_also.end()});
    if (s.no_drain) o.rules.no_drain();
    const std::string rules_said = o.rules.describe();
    o.cloud = std::move(context.cloud);
    o.log = [](const std::string& line) { log_line(one_line(line)); };
    o.still_on = std::move(context.still_on);
    o.self = std::move(context.self);
    auto node = std::make_unique<kubernetes::node_actions>(std::move(*c), s.node_name, std::move(o));
    log_line("kubernetes: node " + s.node_name + " through " + one_line(origin) + "; out of service: " + rules_said);
    return std::unique_ptr<node_side>(std::move(node));
}

std::vector<check_row> node_side_check(const settings& s, std::chrono::milliseconds bound) {
    if (!s.kubernetes && s.kubeconfig.empty()) return {};
    auto c = kubernetes::connect(s.kubeconfig);
    if (!c)
        return {{"kubernetes", check_result::fail, c.error().describe(), "the connection's settings cannot be used",
                 s.kubeconfig.empty() ? "run in a pod with its service account mounted, or give --kubeconfig" : "correct the kubeconfig"}};
    return kubernetes::check_access(std::move(*c), s.node_name, bound);
}

}  // namespace watch
