// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/result.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/result.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE const error& no_error() noexcept {
    static const error e(errc::unknown, "no error: the result holds a value");
    return e;
}

}  // namespace detail

FOREWARN_INLINE FOREWARN_COLD std::string error::describe() const {
    std::string out(to_string(code));
    if (http_status != 0) {
        out += " (HTTP ";
        out += detail::num(http_status);
        out += ')';
    }
    if (!field.empty()) {
        out += " at ";
        out += field;
    }
    if (offset != npos) {
        out += " at offset ";
        out += detail::num(offset);
    }
    if (!message.empty()) {
        out += ": ";
        out += message;
    }
    if (!event_id.empty()) {
        out += " (event ";
        out += event_id;
        out += ')';
    }
    if (!url.empty()) {
        out += " [";
        out += url;
        out += ']';
    }
    return out;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
