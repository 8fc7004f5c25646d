// SPDX-License-Identifier: MIT
#pragma once

// The libcurl transport's class. It names nothing of libcurl: its handles and callbacks are in
// transport/curl_handles.hpp, which its definitions include, so a compiled-mode program never
// parses <curl/curl.h>. A user's header that only names the type can include <forewarn/fwd.hpp>.

#include <forewarn/config.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE

/// Settings of a curl_transport that do not change per request (those are in http_request).
struct curl_transport_options {
    std::string user_agent = "forewarn/" FOREWARN_VERSION_STRING;  ///< sent unless the request sets User-Agent
    bool verbose = false;  ///< CURLOPT_VERBOSE: libcurl traces every exchange to stderr (debugging only)
    std::size_t max_header_bytes = std::size_t(64) << 10;  ///< a longer response header block fails
    /// TLS, for https:// URLs (etcd): the CA bundle that signs the server (empty: the system's),
    /// and a client certificate and its key (PEM files) when the server asks for one.
    std::string ca_file;
    std::string client_cert;
    std::string client_key;
    /// Go through the proxy the environment names (https_proxy/HTTPS_PROXY, http_proxy,
    /// ALL_PROXY, with NO_PROXY), as libcurl reads them. Off (the default): never a proxy, which
    /// the metadata services need. On: for a cloud's public API (an approval's call), which many
    /// VMs reach only through a proxy.
    bool proxy_from_environment = false;
};

/**
 * The default transport: libcurl, one connection kept alive per transport, cancellable from any
 * thread within milliseconds, also in the middle of a hanging GET.
 *
 * Requests never go through a proxy (IMDS must be reached directly whatever http_proxy says;
 * curl_transport_options::proxy_from_environment turns that off, for public APIs),
 * redirects are never followed, only http and https are spoken, the body is capped at
 * request.max_body while it is read, and an X-Forwarded-For header is refused (a metadata service
 * may reject requests that carry one). See docs/transport.md.
 *
 * @code
 * forewarn::curl_transport t;
 * forewarn::http_request req;
 * req.url = "http://169.254.169.254/metadata/scheduledevents?api-version=2020-07-01";
 * req.headers.push_back({"Metadata", "true"});
 * auto r = t.send(req);  // r->status, r->header("ETag"), r->body; or r.error().describe()
 * @endcode
 */
class curl_transport {
public:
    curl_transport();
    explicit curl_transport(curl_transport_options options);

    /// A new transport with the same options and its own connection; not cancelled.
    curl_transport(const curl_transport& other);
    curl_transport& operator=(const curl_transport& other);
    /// Moves the handles; the moved-from transport fails every send with errc::invalid_argument.
    curl_transport(curl_transport&&) noexcept;
    curl_transport& operator=(curl_transport&&) noexcept;
    ~curl_transport();

    /// Sends one request and waits for the whole answer. Any HTTP status is a success.
    result<http_response> send(const http_request& request);

    /// Makes the in-flight send, and every later one until reset(), return errc::cancelled.
    /// Thread-safe: this is how a poller's stop() interrupts a hanging GET.
    void cancel() noexcept;

    /// Clears a cancel() so the transport can be used again.
    void reset() noexcept;

    /// Whether cancel() was called since the last reset().
    bool cancelled() const noexcept;

    /// TCP connections opened so far (CURLINFO_NUM_CONNECTS summed): stays 1 while keep-alive works.
    std::size_t connections_opened() const noexcept;

    /// The options this transport was built with (copies get the same).
    const curl_transport_options& options() const noexcept;

private:
    struct state;  // libcurl's handles and what a send reuses: transport/curl_handles.hpp

    std::unique_ptr<state> state_;
};

static_assert(is_transport_v<curl_transport>, "curl_transport must satisfy the transport contract");

/// A cloud's public API's libcurl transport: the metadata transport's options, with the
/// environment's proxy honoured (transport.hpp's public_api_transport).
template <>
struct public_api_transport<curl_transport> {
    static curl_transport from(const curl_transport& t) {
        curl_transport_options o = t.options();
        o.proxy_from_environment = true;
        return curl_transport(o);
    }
};

FOREWARN_END_NAMESPACE

#define FOREWARN_CURL_TRANSPORT_DEFINED
#include <forewarn/detail/extern_templates.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/transport/curl_handles.hpp>  // which includes curl-inl.hpp last
#endif
