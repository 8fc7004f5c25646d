// SPDX-License-Identifier: MIT
// The agent's wiring, written once for every cloud (agent.cpp): the lines and the log, the hooks
// and their journal, the handlers, the poller's options, the fleet budget, metrics and health,
// webhooks and the ready file, over one poller of a watch::source (source.hpp), whatever its cloud.
#pragma once

#include "options.hpp"
#include "platform/service.hpp"
#include "source.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace watch {

/// Where the lines (stdout) and the log (stderr) go: a Windows service's log file instead. Set
/// once, by the program's main function, before anything is written.
void set_streams(service::streams out);
const service::streams& streams();

/// Text from the network (event ids, descriptions, a hook's output) as one line: control bytes (a
/// newline that would forge a second line, terminal escapes) written as \n, \r, \t or \xNN.
std::string one_line(std::string_view text);
/// One line on the log, whole (hooks, approvals and errors come from several threads).
void log_line(std::string_view text);

/// The agent over `src` until a stop (a signal, or --exit-after's last line): the poller over
/// the source, the hooks, handlers, fleet budget, metrics, webhook and ready file. The exit code.
int run_agent(std::unique_ptr<source> src, const settings& s);

}  // namespace watch
