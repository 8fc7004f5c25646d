// SPDX-License-Identifier: MIT
// The node under the agent in a build without the Kubernetes room (node_side.hpp): Windows, or
// Linux without yaml-cpp. --kubernetes and --kubeconfig are refused with the reason.
#include "node_side.hpp"

namespace watch {

forewarn::result<std::unique_ptr<node_side>> make_node_side(const settings& s, node_context) {
    if (!s.kubernetes && s.kubeconfig.empty()) return std::unique_ptr<node_side>();
    return forewarn::error(forewarn::errc::invalid_argument,
                           "--kubernetes and --kubeconfig: this forewarn-watch was built without its Kubernetes part (Linux, with yaml-cpp)");
}

std::vector<check_row> node_side_check(const settings& s, std::chrono::milliseconds) {
    if (!s.kubernetes && s.kubeconfig.empty()) return {};
    return {{"kubernetes", check_result::fail, "this forewarn-watch was built without its Kubernetes part",
             "--kubernetes and --kubeconfig need the Linux build with yaml-cpp", "use the Linux package or image"}};
}

}  // namespace watch
