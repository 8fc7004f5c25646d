// SPDX-License-Identifier: MIT
// forewarn-watch's command line and environment as UTF-8. On POSIX they are taken as they come;
// on Windows from their UTF-16 form (GetCommandLineW, GetEnvironmentVariableW), since main()'s
// argv and getenv are in the ANSI code page, which cannot hold every path or command an operator
// writes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace watch {
namespace platform {

/// The program's arguments, the program's name first.
std::vector<std::string> arguments(int argc, char** argv);

/// An environment variable's value; nothing when it is not set.
std::optional<std::string> environment(const std::string& name);

}  // namespace platform
}  // namespace watch
