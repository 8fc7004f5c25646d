// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/aws/sigv4.hpp> (spdlog's -inl files). Header-only: included at the end
// of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and empty in a
// user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/aws/sigv4.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/sha256.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/time.hpp>

#include <algorithm>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace aws {
namespace detail_sigv4 {

inline int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// %XX decoded; a '%' not followed by two hex digits stays as it is.
inline std::string percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

// The path with "." and ".." segments and empty segments removed; "/" at least, and a trailing
// slash kept.
inline std::string normalized_path(std::string_view path) {
    std::vector<std::string_view> segments;
    std::size_t i = 0;
    while (i <= path.size()) {
        std::size_t j = path.find('/', i);
        if (j == std::string_view::npos) j = path.size();
        const auto seg = path.substr(i, j - i);
        if (seg == "..") {
            if (!segments.empty()) segments.pop_back();
        } else if (!seg.empty() && seg != ".") {
            segments.push_back(seg);
        }
        i = j + 1;
    }
    std::string out = "/";
    for (std::size_t k = 0; k < segments.size(); ++k) {
        if (k > 0) out += '/';
        out += segments[k];
    }
    if (!segments.empty() && path.size() > 1 && path.back() == '/') out += '/';
    return out;
}

inline std::string canonical_query(std::string_view query) {
    std::vector<std::pair<std::string, std::string>> params;
    std::size_t i = 0;
    while (i < query.size()) {
        std::size_t j = query.find('&', i);
        if (j == std::string_view::npos) j = query.size();
        const auto part = query.substr(i, j - i);
        if (!part.empty()) {
            const auto eq = part.find('=');
            const auto key = eq == std::string_view::npos ? part : part.substr(0, eq);
            const auto value = eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1);
            params.emplace_back(uri_encode(percent_decode(key)), uri_encode(percent_decode(value)));
        }
        i = j + 1;
    }
    std::sort(params.begin(), params.end());
    std::string out;
    for (const auto& [k, v] : params) {
        if (!out.empty()) out += '&';
        out += k;
        out += '=';
        out += v;
    }
    return out;
}

// Trimmed, each run of whitespace one space.
inline std::string canonical_value(std::string_view v) {
    std::string out;
    bool space = false;
    for (char c : v) {
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

}  // namespace detail_sigv4

FOREWARN_INLINE std::string uri_encode(std::string_view s, bool keep_slash) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~' || (keep_slash && c == '/')) {
            out += ch;
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 0xf];
        }
    }
    return out;
}

FOREWARN_INLINE std::string amz_date(std::chrono::system_clock::time_point t) {
    std::string out;
    for (char c : format_iso8601(t)) // "2015-08-30T12:36:00Z"
        if (c != '-' && c != ':') out += c;
    return out;
}

FOREWARN_INLINE result<sigv4_signature> sign_v4(http_request& req, const credentials& creds, const sigv4_options& o,
                                                std::chrono::system_clock::time_point when) {
    using namespace detail_sigv4;
    if (o.region.empty() || o.service.empty())
        return error(errc::invalid_argument, "SigV4: the region and the service are needed");
    if (creds.access_key_id.empty() || creds.secret_access_key.empty())
        return error(errc::invalid_argument, "SigV4: no access key id or secret access key");
    const std::string_view url = req.url;
    const auto scheme_end = url.find("://");
    const auto scheme = scheme_end == std::string_view::npos ? std::string_view{} : url.substr(0, scheme_end);
    if (!forewarn::detail::iequals(scheme, "https") && !forewarn::detail::iequals(scheme, "http"))
        return error(errc::invalid_argument, "SigV4: the URL is not absolute http(s): " + req.url);
    const auto rest = url.substr(scheme_end + 3);
    const auto path_at = rest.find_first_of("/?#");
    const auto authority = rest.substr(0, path_at);
    if (authority.empty()) return error(errc::invalid_argument, "SigV4: the URL has no host: " + req.url);
    std::string_view path = path_at == std::string_view::npos ? std::string_view{} : rest.substr(path_at);
    std::string_view query;
    if (const auto hash = path.find('#'); hash != std::string_view::npos) path = path.substr(0, hash);
    if (const auto q = path.find('?'); q != std::string_view::npos) {
        query = path.substr(q + 1);
        path = path.substr(0, q);
    }
    if (path.empty()) path = "/";
    for (const auto& h : req.headers) {
        if (h.value.find_first_of("\r\n") != std::string::npos)
            return error(errc::invalid_argument, "SigV4: the header " + h.name + " holds a line break");
        if (forewarn::detail::iequals(h.name, "authorization") || forewarn::detail::iequals(h.name, "x-amz-date"))
            return error(errc::invalid_argument, "SigV4: the request is signed already (" + h.name + ")");
    }

    const std::string date_time = amz_date(when);
    const std::string date = date_time.substr(0, 8);
    const std::string payload_hash = forewarn::detail::hex_lower(forewarn::detail::sha256_of(req.body));

    http_headers added;
    if (!find_header(req.headers, "host")) {
        // The port stays only when it is not the scheme's own.
        std::string host(authority);
        const std::string_view port = forewarn::detail::iequals(scheme, "https") ? ":443" : ":80";
        if (host.size() > port.size() && host.compare(host.size() - port.size(), port.size(), port) == 0)
            host.erase(host.size() - port.size());
        added.push_back({"Host", host});
    }
    added.push_back({"X-Amz-Date", date_time});
    if (!creds.session_token.empty() && o.sign_session_token) added.push_back({"X-Amz-Security-Token", creds.session_token});
    if (o.sign_body) added.push_back({"X-Amz-Content-Sha256", payload_hash});

    // Lowercase names, values canonical, duplicates joined with ',' in the order they came.
    std::vector<std::pair<std::string, std::string>> signed_headers;
    auto add = [&](const http_header& h) {
        std::string name;
        for (char c : h.name) name += forewarn::detail::ascii_lower(c);
        auto value = canonical_value(h.value);
        for (auto& s : signed_headers)
            if (s.first == name) {
                s.second += ',';
                s.second += value;
                return;
            }
        signed_headers.emplace_back(std::move(name), std::move(value));
    };
    for (const auto& h : req.headers) add(h);
    for (const auto& h : added) add(h);
    std::stable_sort(signed_headers.begin(), signed_headers.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });

    sigv4_signature s;
    std::string names;
    std::string& cr = s.canonical_request;
    cr += to_string(req.method);
    cr += '\n';
    cr += uri_encode(o.normalize_path ? normalized_path(path) : std::string(path), true);
    cr += '\n';
    cr += canonical_query(query);
    cr += '\n';
    for (const auto& [name, value] : signed_headers) {
        cr += name + ':' + value + '\n';
        names += (names.empty() ? "" : ";") + name;
    }
    cr += '\n';
    cr += names;
    cr += '\n';
    cr += payload_hash;

    const std::string scope = date + '/' + o.region + '/' + o.service + "/aws4_request";
    s.string_to_sign = "AWS4-HMAC-SHA256\n" + date_time + '\n' + scope + '\n' +
                       forewarn::detail::hex_lower(forewarn::detail::sha256_of(cr));
    using forewarn::detail::as_bytes;
    using forewarn::detail::hmac_sha256;
    const auto k_date = hmac_sha256("AWS4" + creds.secret_access_key, date);
    const auto k_region = hmac_sha256(as_bytes(k_date), o.region);
    const auto k_service = hmac_sha256(as_bytes(k_region), o.service);
    const auto k_signing = hmac_sha256(as_bytes(k_service), "aws4_request");
    s.signature = forewarn::detail::hex_lower(hmac_sha256(as_bytes(k_signing), s.string_to_sign));
    s.authorization = "AWS4-HMAC-SHA256 Credential=" + creds.access_key_id + '/' + scope + ", SignedHeaders=" + names +
                      ", Signature=" + s.signature;

    for (auto& h : added) req.headers.push_back(std::move(h));
    if (!creds.session_token.empty() && !o.sign_session_token) req.headers.push_back({"X-Amz-Security-Token", creds.session_token});
    req.headers.push_back({"Authorization", s.authorization});
    return s;
}

}  // namespace aws
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
