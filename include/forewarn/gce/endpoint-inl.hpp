// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/gce/endpoint.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/gce/endpoint.hpp>
#include <forewarn/detail/strings.hpp>

#include <algorithm>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE std::string percent_encode(std::string_view s, bool keep_slash) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        if (gce_is_unreserved(c) || (keep_slash && c == '/')) {
            out += c;
        } else {
            const auto b = static_cast<unsigned char>(c);
            out += '%';
            out += hex[b >> 4];
            out += hex[b & 0x0F];
        }
    }
    return out;
}

FOREWARN_INLINE result<std::string> gce_encode_key(std::string_view key) {
    if (!key.empty() && key.front() == '/') key.remove_prefix(1);
    if (!key.empty() && key.front() == '/') return error(errc::invalid_argument, "metadata key starts with '//'");
    if (key.find("://") != std::string_view::npos) return error(errc::invalid_argument, "metadata key holds a URL");
    const auto first_slash = key.find('/');
    if (key.substr(0, first_slash).find(':') != std::string_view::npos)
        return error(errc::invalid_argument, "metadata key starts with a scheme");
    for (const char c : key) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20 || b == 0x7F) return error(errc::invalid_argument, "metadata key holds a control character");
        if (c == '?' || c == '#')
            return error(errc::invalid_argument, "metadata key holds '?' or '#': use get_options for the query");
        if (c == '\\') return error(errc::invalid_argument, "metadata key holds a backslash");
    }
    std::size_t start = 0;
    while (start <= key.size()) {
        const auto end = (std::min)(key.find('/', start), key.size());
        const auto segment = key.substr(start, end - start);
        if (segment == "." || segment == "..")
            return error(errc::invalid_argument, "metadata key holds a '.' or '..' segment");
        start = end + 1;
    }
    return percent_encode(key, true);
}

FOREWARN_INLINE result<std::string> gce_normalize_endpoint(std::string_view e, std::string_view what) {
    auto r = normalize_endpoint(e, what);
    if (!r) return r;
    std::string& out = *r;
    constexpr std::string_view root = "/computeMetadata/v1";
    if (out.size() > root.size() && std::string_view(out).substr(out.size() - root.size()) == root) {
        // "computeMetadata/v1" alone became "http://computeMetadata/v1": the root is all there is.
        const auto sep = out.find("://");
        if (sep == std::string::npos || sep + 3 >= out.size() - root.size())
            return error(errc::invalid_argument, std::string(what) + ": endpoint has no host");
        out.resize(out.size() - root.size());
        strip_trailing_slashes(out);
        if (url_authority(out).empty()) return error(errc::invalid_argument, std::string(what) + ": endpoint has no host");
    }
    return r;
}

FOREWARN_INLINE result<gce_resolved_endpoint> gce_resolve_endpoint(std::string_view option,
                                                                   std::string_view fallback_default,
                                                                   std::string_view option_name) {
    const auto chosen = choose_endpoint(option, option_name, {"FOREWARN_GCE_ENDPOINT", "GCE_METADATA_HOST"});
    if (chosen.text.empty()) return gce_resolved_endpoint{std::string(fallback_default), true};
    auto r = gce_normalize_endpoint(chosen.text, chosen.source);
    if (!r) return std::move(r).error();
    return gce_resolved_endpoint{std::move(*r), false};
}

FOREWARN_INLINE bool gce_has_google_flavor(const http_response& r) noexcept {
    const std::string* value = r.header(gce::flavor_header);
    return value != nullptr && iequals(trim(*value), gce::flavor);
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
