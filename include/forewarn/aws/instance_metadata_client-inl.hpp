// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/aws/instance_metadata_client.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/aws/instance_metadata_client.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/json.hpp>  // RapidJSON: for the definitions only

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE error aws_status_error(int status, std::string_view what, std::string_view body) {
    const std::string said = service_said(body);
    switch (status) {
    case 400: return error(errc::http_status, std::string(what) + ": 400 Bad Request (a token TTL outside 1..21600?)", 400);
    case 401: return error(errc::http_status, std::string(what) + ": 401 Unauthorized (missing or expired session token)", 401);
    case 403:
        return error(errc::http_status,
                     std::string(what) + ": 403 Forbidden (IMDS turned off for this instance, or the request carried X-Forwarded-For)",
                     403);
    case 404: {
        error e(errc::not_found, std::string(what) + ": 404 Not Found");
        e.http_status = 404;
        return e;
    }
    default: return error(errc::http_status, std::string(what) + ": HTTP " + std::to_string(status) + said, status);
    }
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
