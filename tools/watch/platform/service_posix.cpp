// SPDX-License-Identifier: MIT
// The POSIX half of platform/service.hpp: there is no service command; systemd runs the agent.
#include "service.hpp"

#include <cstdio>

namespace watch {
namespace service {

std::optional<int> command(const std::vector<std::string>& args, agent_main, options_check) {
    if (args.size() < 2 || args[1] != "service") return std::nullopt;
    std::fputs("forewarn-watch: \"service\" installs a Windows service; on Linux, install the systemd unit "
               "forewarn-watch.service (docs/operators.md)\n",
               stderr);
    return 2;
}

}  // namespace service
}  // namespace watch
