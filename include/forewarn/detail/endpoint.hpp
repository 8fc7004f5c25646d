// SPDX-License-Identifier: MIT
#pragma once

// Where a client sends its requests: an option, else environment variables, else the cloud's
// address. One set of URL rules for every client (and detect_cloud), so a fix reaches them all.

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/result.hpp>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Where the services under /latest/ that have session tokens hand them out: each such cloud's
/// token_path, and latest_metadata's PUT.
inline constexpr std::string_view latest_token_path = "/latest/api/token";
/// The instance's id under /latest/: each such cloud's instance_id_path.
inline constexpr std::string_view latest_instance_id_path = "/latest/meta-data/instance-id";

/// An environment variable, or "" when unset. (getenv without MSVC's deprecation warning.)
std::string getenv_string(const char* name);

/// Drops trailing '/' from a URL, never into the "//" of "scheme://" (so "http://" stays host-less).
void strip_trailing_slashes(std::string& url);

/**
 * "host", "1.2.3.4", "fd00::5", "http://host:8080/" -> "http://host", "http://1.2.3.4",
 * "http://[fd00::5]", "http://host:8080": a base URL without a trailing '/'. Only http and https;
 * no host, a space, a control character, '?', '#' or '\\' is invalid_argument naming `what`
 * (the option or variable it came from).
 */
result<std::string> normalize_endpoint(std::string_view e, std::string_view what);

/// What is wrong with a URL authority ("host", "host:port", "[v6]:port"): an empty host, user
/// information, a character no host name holds, an unclosed IPv6 bracket, a port that is not
/// 1..65535; "" when nothing is.
std::string authority_problem(std::string_view authority);

/// The first non-blank of an option and environment variables, as written, with where it came
/// from; `text` is empty when none is set (the caller's default applies).
struct chosen_endpoint {
    std::string text;
    std::string_view source;  ///< the option's name or the variable's, for error messages
};

chosen_endpoint choose_endpoint(std::string_view option, std::string_view option_name,
                                std::initializer_list<const char*> variables);

/// The first of an option and environment variables, normalized, else `fallback`.
inline result<std::string> resolve_endpoint(std::string_view option, std::string_view option_name,
                                            std::initializer_list<const char*> variables, std::string_view fallback) {
    const auto chosen = choose_endpoint(option, option_name, variables);
    if (chosen.text.empty()) return std::string(fallback);
    return normalize_endpoint(chosen.text, chosen.source);
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/endpoint-inl.hpp>
#endif
