// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/endpoint.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/strings.hpp>

#include <cctype>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD std::string getenv_string(const char* name) {
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

FOREWARN_INLINE FOREWARN_COLD void strip_trailing_slashes(std::string& url) {
    const auto scheme = url.find("://");
    const std::size_t keep = scheme == std::string::npos ? 0 : scheme + 3;
    while (url.size() > keep && url.back() == '/') url.pop_back();
}

// What is wrong with a URL's authority ("host", "host:port", "[v6]:port"), or "" when nothing.
FOREWARN_INLINE FOREWARN_COLD std::string authority_problem(std::string_view a) {
    if (a.empty()) return "endpoint has no host";
    if (a.find('@') != std::string_view::npos) return "endpoint holds user information ('@'): a metadata service takes none";
    std::string_view host = a;
    std::string_view port;
    bool has_port = false;
    if (a.front() == '[') {
        const auto close = a.find(']');
        if (close == std::string_view::npos) return "endpoint has an IPv6 address without its closing ']'";
        host = a.substr(1, close - 1);
        if (host.empty()) return "endpoint has an empty IPv6 address";
        for (const char c : host)
            if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.' || c == '%'))
                return "endpoint has a malformed IPv6 address";
        const auto rest = a.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return "endpoint has text after its IPv6 address";
            port = rest.substr(1);
            has_port = true;
        }
    } else {
        const auto colon = a.find(':');
        if (colon != std::string_view::npos) {
            host = a.substr(0, colon);
            port = a.substr(colon + 1);
            has_port = true;
        }
        if (host.empty()) return "endpoint has no host";
        for (const char c : host)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
                return "endpoint has a host name with a character a host name cannot hold";
    }
    if (has_port) {
        if (port.empty() || port.size() > 5) return "endpoint has a port that is not a number from 1 to 65535";
        long n = 0;
        for (const char c : port) {
            if (c < '0' || c > '9') return "endpoint has a port that is not a number from 1 to 65535";
            n = n * 10 + (c - '0');
        }
        if (n < 1 || n > 65535) return "endpoint has a port that is not a number from 1 to 65535";
    }
    return {};
}

FOREWARN_INLINE FOREWARN_COLD result<std::string> normalize_endpoint(std::string_view e, std::string_view what) {
    e = trim(e);
    std::string out;
    if (e.find("://") == std::string_view::npos) {
        // "http//host", "http:/host": a scheme gone wrong, not a host name.
        if (e.find("//") != std::string_view::npos || e.find(":/") != std::string_view::npos)
            return error(errc::invalid_argument,
                         cat({what, ": endpoint '", e, "' is not a URL (a scheme must be followed by \"://\")"}));
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
        return error(errc::invalid_argument, cat({what, ": only http:// and https:// endpoints are supported"}));
    for (const char c : out) {
        const auto b = static_cast<unsigned char>(c);
        if (b <= 0x20 || b == 0x7F || c == '?' || c == '#' || c == '\\')
            return error(errc::invalid_argument, cat({what, ": endpoint holds a space, control character, '?', '#' or '\\'"}));
    }
    strip_trailing_slashes(out);
    // The authority as written (url_authority() drops user information, which is refused here).
    std::string_view authority(out);
    authority.remove_prefix(scheme_end + 3);
    authority = authority.substr(0, authority.find('/'));
    if (auto problem = authority_problem(authority); !problem.empty())
        return error(errc::invalid_argument, cat({what, ": ", problem, ": ", out}));
    return out;
}

FOREWARN_INLINE FOREWARN_COLD chosen_endpoint choose_endpoint(std::string_view option, std::string_view option_name,
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
