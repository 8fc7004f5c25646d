// SPDX-License-Identifier: MIT
#pragma once

// What every fuzz target shares: an invariant check that aborts (libFuzzer then saves the input
// as a crash artifact), and a strict UTF-8 validator written apart from RapidJSON's, so the
// approval target checks the library against an independent opinion.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string_view>

/// Aborts with the failed condition and a note; the input becomes a crash artifact.
#define FOREWARN_FUZZ_CHECK(cond, note)                                                             \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            std::fprintf(stderr, "forewarn fuzz invariant failed: %s (%s) at %s:%d\n", #cond, note, \
                         __FILE__, __LINE__);                                                       \
            std::abort();                                                                           \
        }                                                                                           \
    } while (0)

namespace forewarn_fuzz {

/// RFC 3629 UTF-8: no overlong forms, no surrogates (U+D800..DFFF), nothing above U+10FFFF.
inline bool valid_utf8(std::string_view s) noexcept {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b0 = static_cast<unsigned char>(s[i]);
        if (b0 < 0x80) {
            ++i;
            continue;
        }
        std::size_t n = 0;
        unsigned long cp = 0, min = 0;
        if ((b0 & 0xE0) == 0xC0) {
            n = 1;
            cp = b0 & 0x1Fu;
            min = 0x80;
        } else if ((b0 & 0xF0) == 0xE0) {
            n = 2;
            cp = b0 & 0x0Fu;
            min = 0x800;
        } else if ((b0 & 0xF8) == 0xF0) {
            n = 3;
            cp = b0 & 0x07u;
            min = 0x10000;
        } else {
            return false;
        }
        if (n >= s.size() - i) return false;  // the sequence runs past the end
        for (std::size_t k = 1; k <= n; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if ((b & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (b & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += n + 1;
    }
    return true;
}

}  // namespace forewarn_fuzz
