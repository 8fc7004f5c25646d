// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/aws/endpoint.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/aws/endpoint.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE result<std::string> aws_resolve_endpoint(std::string_view option, std::string_view option_name,
                                                         bool ipv6) {
    const auto chosen = choose_endpoint(option, option_name, {"AWS_EC2_METADATA_SERVICE_ENDPOINT"});
    if (chosen.text.empty()) return std::string(ipv6 ? aws::ipv6_endpoint : aws::default_endpoint);
    return normalize_endpoint(chosen.text, chosen.source);
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
