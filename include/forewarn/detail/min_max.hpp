// SPDX-License-Identifier: MIT
#pragma once

// std::min and std::max for headers, without <algorithm>: a compiled-mode program parses only
// forewarn's declarations and templates, and <algorithm> was a twentieth of its compile
// (docs/benchmarks.md, "Narrow includes"). Definition files (x-inl.hpp) use <algorithm>.

#include <forewarn/config.hpp>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// std::min: the smaller of the two, `a` when they are equal.
template <class T>
constexpr const T& smaller(const T& a, const T& b) {
    return b < a ? b : a;
}

/// std::max: the larger of the two, `a` when they are equal.
template <class T>
constexpr const T& larger(const T& a, const T& b) {
    return a < b ? b : a;
}

}  // namespace detail
FOREWARN_END_NAMESPACE
