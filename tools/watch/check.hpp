// SPDX-License-Identifier: MIT
// `forewarn-watch check` (check.cpp): the chain from this VM to its maintenance notices walked
// once, reported in text or JSON (docs/operators.md, "When it does not work").
#pragma once

#include <string>
#include <vector>

namespace watch {

/// `forewarn-watch check [options] [--timeout SECONDS]` (args without "check"): the report on
/// stdout, exit 0 (no failure), 1 (a step failed) or 2 (usage).
int check_main(std::vector<std::string> args);

}  // namespace watch
