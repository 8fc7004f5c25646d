// SPDX-License-Identifier: MIT
// Compile cost, for comparison: nlohmann/json (Debian's nlohmann-json3-dev), the usual C++ JSON choice.
#include <nlohmann/json.hpp>

int main() { return 0; }
