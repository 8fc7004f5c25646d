// SPDX-License-Identifier: MIT
// One include for Catch2 v2 (Debian's 2.13, single header) and v3 (whichever CMake found).
#pragma once
#if defined(FOREWARN_CATCH2_V3)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
