// SPDX-License-Identifier: MIT
#pragma once

// std::function, and no more. In C++17 libstdc++'s <functional> also brings the searchers and what
// they need (<unordered_map>, <array>, <vector>, the algorithms): about a seventh of what a
// compiled-mode program's compile costs (docs/benchmarks.md, "Narrow includes"). libstdc++ (GCC 7
// and later) declares std::function in <bits/std_function.h>; any other library gets
// <functional>. forewarn's headers that hold or take a std::function include this file; a
// definition file (x-inl.hpp) that needs more of <functional> includes <functional> itself.

#include <cstddef>  // defines __GLIBCXX__ under libstdc++

#if defined(__GLIBCXX__) && defined(__has_include)
#if __has_include(<bits/std_function.h>)
#include <bits/std_function.h>
#define FOREWARN_STD_FUNCTION_ONLY 1
#endif
#endif
#if !defined(FOREWARN_STD_FUNCTION_ONLY)
#include <functional>
#endif
