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

/// The first non-blank of an option and environment variables, as written, with where it came
/// from; `text` is empty when none is set (the caller's default applies).
struct chosen_endpoint {
    std::string text;
    std::string_view source;  ///< the option's name or the variable's, for error messages
};

chosen_endpoint choose_endpoint(std::string_view option, std::string_view option_name,
                                std::initializer_list<const char*> variables);

#if FOREWARN_HEADER_DEFINITIONS
// Compiled into libforewarn in compiled mode (docs/building.md), inline in every user otherwise.

FOREWARN_INLINE std::string getenv_string(const char* name) {
#if defined(_MSC_VER)
    char* buffer = nullptr;
    std::size_t length = 0;
    if (_dupenv_s(&buffer, &length, name) != 0 || buffer == nullptr) return {};
    std::string out(buffer);
    std::free(buffer);
    return out;
#else
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
#endif
}

FOREWARN_INLINE void strip_trailing_slashes(std::string& url) {
    const auto scheme = url.find("://");
    const std::size_t keep = scheme == std::string::npos ? 0 : scheme + 3;
    while (url.size() > keep && url.back() == '/') url.pop_back();
}

FOREWARN_INLINE result<std::string> normalize_endpoint(std::string_view e, std::string_view what) {
    e = trim(e);
    std::string out;
    if (e.find("://") == std::string_view::npos) {
        out = "http://";
        // A bare IPv6 address needs brackets to become a URL authority.
        if (e.find(':') != e.rfind(':') && !e.empty() && e.front() != '[') {
            out += '[';
            out.append(e.data(), e.size());
            out += ']';
        } else {
            out.append(e.data(), e.size());
        }
    } else {
        out.append(e.data(), e.size());
    }
    const auto scheme_end = out.find("://");
    const std::string_view scheme(out.data(), scheme_end);
    if (!iequals(scheme, "http") && !iequals(scheme, "https"))
        return error(errc::invalid_argument, std::string(what) + ": only http:// and https:// endpoints are supported");
    for (const char c : out) {
        const auto b = static_cast<unsigned char>(c);
        if (b <= 0x20 || b == 0x7F || c == '?' || c == '#' || c == '\\')
            return error(errc::invalid_argument, std::string(what) + ": endpoint holds a space, control character, '?', '#' or '\\'");
    }
    strip_trailing_slashes(out);
    if (url_authority(out).empty()) return error(errc::invalid_argument, std::string(what) + ": endpoint has no host");
    return out;
}

FOREWARN_INLINE chosen_endpoint choose_endpoint(std::string_view option, std::string_view option_name,
                                                std::initializer_list<const char*> variables) {
    if (!trim(option).empty()) return {std::string(option), option_name};
    for (const char* var : variables) {
        std::string v = getenv_string(var);
        if (!trim(v).empty()) return {std::move(v), var};
    }
    return {};
}

#endif  // FOREWARN_HEADER_DEFINITIONS

}  // namespace detail
FOREWARN_END_NAMESPACE
