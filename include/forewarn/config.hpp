// SPDX-License-Identifier: MIT
#pragma once

/// forewarn's version, also the name of the inline namespace that carries its ABI.
#define FOREWARN_VERSION_MAJOR 0
#define FOREWARN_VERSION_MINOR 1
#define FOREWARN_VERSION_PATCH 0
#define FOREWARN_VERSION_STRING "0.1.0"

// Two versions of forewarn linked into one program must not silently share symbols, so every
// declaration lives in forewarn::v1 (an inline namespace: users still write forewarn::).
#define FOREWARN_BEGIN_NAMESPACE \
    namespace forewarn {         \
    inline namespace v1 {
#define FOREWARN_END_NAMESPACE \
    }                          \
    }

#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
#define FOREWARN_HAS_CONCEPTS 1
#else
#define FOREWARN_HAS_CONCEPTS 0
#endif
