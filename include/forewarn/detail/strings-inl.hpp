// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/strings.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS
FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_NOINLINE void num::write(unsigned long long magnitude, bool negative) noexcept {
    do {
        digits_[--start_] = static_cast<char>('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    if (negative) digits_[--start_] = '-';
}

FOREWARN_INLINE FOREWARN_COLD std::string cat(std::initializer_list<std::string_view> pieces) {
    std::size_t size = 0;
    for (const auto piece : pieces) size += piece.size();
    std::string out;
    out.reserve(size);
    for (const auto piece : pieces) out.append(piece.data(), piece.size());
    return out;
}

}  // namespace detail
FOREWARN_END_NAMESPACE
#endif
