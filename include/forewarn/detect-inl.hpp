// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detect.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detect.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/json.hpp>  // RapidJSON: for the definitions only

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE result<void> probe_json_object(std::string_view body, std::string_view service) {
    const std::string no = "no " + std::string(service) + " here: ";
    auto doc = parse_json(body);
    if (!doc) return error(errc::not_metadata_server, no + doc.error().describe(), 200);
    if (!doc->IsObject()) return error(errc::not_metadata_server, no + "the answer is not a JSON object", 200);
    return {};
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
