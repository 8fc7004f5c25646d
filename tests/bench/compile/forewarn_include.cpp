// SPDX-License-Identifier: MIT
// Compile cost: the umbrella header alone (run-all.sh compiles this file; no target builds it).
#include <forewarn/forewarn.hpp>

int main() { return 0; }
