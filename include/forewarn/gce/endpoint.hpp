// SPDX-License-Identifier: MIT
#pragma once

// Where the GCE metadata server is and how its URLs are built: the endpoint precedence, the
// encoding of keys, and the `Metadata-Flavor: Google` check. No client, no JSON.

#include <forewarn/config.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

/// The server's name; it also answers at default_ip_endpoint (the fallback when the name does not resolve).
inline constexpr std::string_view default_host_endpoint = "http://metadata.google.internal.";
inline constexpr std::string_view default_ip_endpoint = "http://169.254.169.254";
/// Every key is under this path.
inline constexpr std::string_view root_path = "/computeMetadata/v1/";

}  // namespace gce

namespace detail {

constexpr bool gce_is_unreserved(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

/// Percent-encodes every byte but RFC 3986's unreserved ones (and '/' when `keep_slash`).
std::string percent_encode(std::string_view s, bool keep_slash);

/**
 * A metadata key as the path part of a URL. The key is relative to /computeMetadata/v1/ (one
 * leading '/' is tolerated). Refused: a scheme or authority (the client must never be pointed at
 * another host through a key), "." or ".." segments, '?', '#', control characters.
 */
result<std::string> gce_encode_key(std::string_view key);

/**
 * An endpoint option or variable as "scheme://authority[/prefix]" without a trailing '/'.
 * A bare "host:port" (GCE_METADATA_HOST's form) gets "http://"; a trailing
 * "/computeMetadata/v1/" is dropped, so the root URL from Google's docs works too.
 */
result<std::string> gce_normalize_endpoint(std::string_view e, std::string_view what);

/// Where the endpoint came from: the option, a variable, or the built-in default.
struct gce_resolved_endpoint {
    std::string base;         ///< "http://host:port" without a trailing '/'
    bool is_default = false;  ///< the built-in name, which falls back to the IP
};

/// An explicit option beats $FOREWARN_GCE_ENDPOINT, which beats $GCE_METADATA_HOST.
result<gce_resolved_endpoint> gce_resolve_endpoint(std::string_view option, std::string_view fallback_default,
                                                   std::string_view option_name = "gce::client_options::endpoint");

/// True when the answer says it comes from Google's metadata server.
bool gce_has_google_flavor(const http_response& r) noexcept;

#if FOREWARN_HEADER_DEFINITIONS
// Compiled into libforewarn in compiled mode (docs/building.md), inline in every user otherwise.

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
    const std::string* flavor = r.header("Metadata-Flavor");
    return flavor != nullptr && iequals(trim(*flavor), "Google");
}

#endif  // FOREWARN_HEADER_DEFINITIONS

}  // namespace detail
FOREWARN_END_NAMESPACE
