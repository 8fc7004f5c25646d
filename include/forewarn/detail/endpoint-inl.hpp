// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/endpoint.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/endpoint.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

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

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
