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

// Compiled mode (CMake option FOREWARN_COMPILED_LIB, docs/building.md): the library libforewarn
// holds the default instantiations (the clients over default_transport, the pollers over them), and
// a user's translation unit declares them `extern template` (detail/extern_templates.hpp) instead
// of compiling them again. Header-only, the default, is untouched. FOREWARN_BUILDING_LIB is
// defined only while libforewarn itself is compiled.
#if defined(FOREWARN_COMPILED_LIB) && !defined(FOREWARN_BUILDING_LIB)
#define FOREWARN_EXTERN_TEMPLATES 1
#else
#define FOREWARN_EXTERN_TEMPLATES 0
#endif

// Where the out-of-line definitions of forewarn's non-template functions go: header `x.hpp`
// declares them and `x-inl.hpp` beside it defines them (spdlog's -inl files), included at the end
// of `x.hpp` when FOREWARN_HEADER_DEFINITIONS is 1. Header-only they are inline functions every
// translation unit sees; in compiled mode only libforewarn compiles them (as ordinary functions,
// once) and a user's translation unit sees declarations alone, so it neither parses their bodies
// nor instantiates what they use.
#if defined(FOREWARN_COMPILED_LIB) && !defined(FOREWARN_BUILDING_LIB)
#define FOREWARN_HEADER_DEFINITIONS 0
#else
#define FOREWARN_HEADER_DEFINITIONS 1
#endif
#if defined(FOREWARN_BUILDING_LIB)
#define FOREWARN_INLINE
#else
#define FOREWARN_INLINE inline
#endif

// FOREWARN_COLD marks a function whose speed does not matter: it runs once (construction, start,
// stop, identity), when something happens (an approval, an error, a pause measured, a handler
// called), or as the poller's bookkeeping beside each poll's request (the approval policy's look at
// each event: microseconds a poll). GCC and Clang compile it for size and take its calls as
// unlikely: a program gets less code and compiles faster (docs/benchmarks.md, "Cold code"); no
// behaviour changes. Never on the poll path: each poll's round, exchange, transport and parse, and
// the document's events through the parse, the diff and the change tracker (poll_once() too);
// tests/house/check.py cold holds that list.
#if defined(__GNUC__) || defined(__clang__)
#define FOREWARN_COLD __attribute__((cold))
#else
#define FOREWARN_COLD
#endif

// FOREWARN_NOINLINE keeps a small helper that many call sites share out of line, so that it is
// compiled once rather than at each of them; for one that the poll path calls too (detail::num,
// which writes every poll's DocumentIncarnation), where FOREWARN_COLD would not be true.
#if defined(__GNUC__) || defined(__clang__)
#define FOREWARN_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define FOREWARN_NOINLINE __declspec(noinline)
#else
#define FOREWARN_NOINLINE
#endif

// What libforewarn exports. It is built with default visibility on purpose: every function whose
// definition only libforewarn compiles (FOREWARN_HEADER_DEFINITIONS) is declared without a mark
// of its own and must be exported, and the inline functions both sides still compile (templates,
// one-line members) must resolve to one copy per process.
#if defined(__GNUC__) || defined(__clang__)
#define FOREWARN_API __attribute__((visibility("default")))
#else
#define FOREWARN_API
#endif
