// SPDX-License-Identifier: MIT
// forewarn-watch's output lines: where its lines (stdout) and its log (stderr) go, the line a
// change gives a person, and the log's lines, whole and with whatever came from the network on
// one line. Defined in lines.cpp.
#pragma once

#include <forewarn/diff.hpp>

#include "platform/service.hpp"

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

/// The line a change gives a person (without --json): "prepare  reboot ID Scheduled, not before ...".
std::string text_line(const forewarn::change& c);

}  // namespace watch
