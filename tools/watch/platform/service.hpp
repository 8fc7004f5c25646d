// SPDX-License-Identifier: MIT
// `forewarn-watch service ...`: the agent as a Windows service (docs/windows.md).
//   service install [--log-file PATH] [OPTIONS...]   registers it with the service control manager
//       (automatic start, restarted 2 s after a failure, as the systemd unit does), the options
//       checked now and kept in its command line; its output goes to PATH (default
//       forewarn-watch.log beside the program)
//   service uninstall                                 stops and removes it
//   service run [--log-file PATH] [OPTIONS...]       what the service control manager starts
// A service stop or a system shutdown stops the agent as Ctrl+C does. On Linux the agent is a
// systemd unit instead (forewarn-watch.service, docs/operators.md): the command says so.
// The platform's half: service_windows.cpp, service_posix.cpp.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace watch {
namespace service {

/// Where the agent writes its lines (stdout) and its log (stderr); a service's are its log file.
struct streams {
    std::FILE* lines;
    std::FILE* log;
};

/// The agent itself: its arguments (program name first) and streams to its exit code.
using agent_main = int (*)(const std::vector<std::string>& args, streams out);

/// Checks the agent's arguments as it will read them: an exit code when they are bad or asked
/// for --help (said on stderr or stdout), nothing when they are good.
using options_check = std::optional<int> (*)(const std::vector<std::string>& args);

/// When args[1] is "service": runs that command and gives its exit code (2 for a bad one).
/// Otherwise nothing, and the program runs the agent.
std::optional<int> command(const std::vector<std::string>& args, agent_main agent, options_check check);

}  // namespace service
}  // namespace watch
