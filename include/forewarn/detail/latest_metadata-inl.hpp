// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/latest_metadata.hpp> (spdlog's -inl files).

#include <forewarn/detail/latest_metadata.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/http.hpp>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE error latest_status_error(int status, std::string_view what, std::string_view body) {
    if (status == 404) return error(errc::not_found, std::string(what) + ": 404 Not Found", 404);
    return error(errc::http_status, std::string(what) + ": HTTP " + std::to_string(status) + service_said(body), status);
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
