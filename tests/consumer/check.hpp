// SPDX-License-Identifier: MIT
#pragma once
// The consumer programs' assertions: each failed check is printed and counted; finish() says OK
// (what the consumer tests look for) or makes the program fail.

#include <cstdio>

namespace consumer {

struct checks {
    const char* program;
    int failures = 0;

    void operator()(bool ok, const char* what) {
        if (ok) return;
        std::fprintf(stderr, "%s: FAILED: %s\n", program, what);
        ++failures;
    }
    /// The program's exit status: 0 after printing "<program>: OK", else 1.
    int finish() const {
        if (failures != 0) return 1;
        std::printf("%s: OK\n", program);
        return 0;
    }
};

}  // namespace consumer
