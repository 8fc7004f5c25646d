// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/transport.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/transport.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE

FOREWARN_INLINE const std::string* find_header(const http_headers& headers, std::string_view name) noexcept {
    for (const auto& h : headers)
        if (detail::iequals(h.name, name)) return &h.value;
    return nullptr;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
