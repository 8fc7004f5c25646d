// SPDX-License-Identifier: MIT
#pragma once

// AWS credentials: what SigV4 signs with (aws/sigv4.hpp) and what an instance profile gives
// (aws::parse_security_credentials in aws/parse.hpp).

#include <forewarn/config.hpp>

#include <chrono>
#include <optional>
#include <string>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/// An access key, its secret and, for temporary credentials (an instance profile's), the session
/// token and when they expire. Never logged: error messages name the key id at most.
struct credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;  ///< empty for long-term keys; sent as X-Amz-Security-Token
    std::optional<std::chrono::system_clock::time_point> expiration;
};

}  // namespace aws
FOREWARN_END_NAMESPACE
