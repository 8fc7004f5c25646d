// SPDX-License-Identifier: MIT
#pragma once

// The only forewarn header that includes libcurl: a user's header that only names the type can
// include <forewarn/fwd.hpp> instead.

#include <forewarn/config.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#if !defined(LIBCURL_VERSION_NUM) || LIBCURL_VERSION_NUM < 0x074400
#error "forewarn::curl_transport needs libcurl 7.68.0 or later (curl_multi_poll, curl_multi_wakeup)"
#endif

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
    /// the metadata services need. On: for a cloud's public API (Auto Scaling, Compute), which many
    /// VMs reach only through a proxy.
    bool proxy_from_environment = false;
};

namespace detail {

/// curl_global_init is not thread-safe and must run once before any other libcurl call; every
/// transport constructor goes through here. It is never undone: a header-only library cannot know
/// when the last user is gone, and libcurl cleans up at exit anyway.
CURLcode curl_global_once() noexcept;

/// Clamps a duration to the `long` milliseconds libcurl takes (long is 32 bits on Windows).
long curl_millis(std::chrono::milliseconds d) noexcept;

/// State of one exchange, reached from libcurl's C callbacks through their userdata pointer.
struct curl_exchange {
    const std::atomic<bool>* cancelled = nullptr;
    std::size_t max_body = 0;
    std::size_t max_header_bytes = 0;
    http_response response;
    std::size_t header_bytes = 0;   // of the current block
    int block_status = 0;           // status line of the current header block
    bool head = false;              // a HEAD: the Content-Length is the GET's, no body comes
    bool in_headers = false;        // between a status line and its blank line
    bool connected = false;         // libcurl reached the point of sending the request
    bool body_too_large = false;    // the write callback refused more bytes than max_body
    bool content_length_too_large = false;
    bool headers_too_large = false;
    bool out_of_memory = false;

    // CURLOPT_HEADERFUNCTION: one whole header line per call, CRLF included.
    static size_t on_header(char* data, size_t size, size_t count, void* userdata);

    // CURLOPT_WRITEFUNCTION: the body, after transfer (chunked) decoding.
    static size_t on_body(char* data, size_t size, size_t count, void* userdata);

    // CURLOPT_XFERINFOFUNCTION: a second way out for cancel() while libcurl is busy in perform.
    static int on_progress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t);

#if LIBCURL_VERSION_NUM >= 0x075000
    // CURLOPT_PREREQFUNCTION (7.80): the connection is up (new or reused), the request goes next.
    // Tells a connect timeout from a slow answer.
    static int on_connected(void* userdata, char*, char*, int, int) {
        static_cast<curl_exchange*>(userdata)->connected = true;
        return CURL_PREREQFUNC_OK;
    }
#endif
};

/// Frees a curl_slist on every way out of send().
struct curl_slist_owner {
    curl_slist* list = nullptr;
    curl_slist_owner() = default;
    curl_slist_owner(const curl_slist_owner&) = delete;
    curl_slist_owner& operator=(const curl_slist_owner&) = delete;
    ~curl_slist_owner() { curl_slist_free_all(list); }
    bool append(const std::string& line) noexcept;
};

bool same_headers(const std::vector<http_header>& a, const std::vector<http_header>& b) noexcept;

}  // namespace detail

namespace detail {
/// Which connection failure a libcurl code is (network_failure), with CURLINFO_OS_ERRNO.
network_failure curl_network_failure(CURLcode rc, long os_error) noexcept;
}  // namespace detail

/**
 * The default transport: libcurl, one connection kept alive per transport, cancellable from any
 * thread within milliseconds, also in the middle of a GCE hanging GET.
 *
 * Requests never go through a proxy (IMDS must be reached directly whatever http_proxy says;
 * curl_transport_options::proxy_from_environment turns that off, for public APIs),
 * redirects are never followed, only http and https are spoken, the body is capped at
 * request.max_body while it is read, and an X-Forwarded-For header is refused (Azure's IMDS rejects
 * requests that carry one). See docs/transport.md.
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
    bool cancelled() const noexcept { return state_ && state_->cancelled.load(std::memory_order_acquire); }

    /// TCP connections opened so far (CURLINFO_NUM_CONNECTS summed): stays 1 while keep-alive works.
    std::size_t connections_opened() const noexcept;

    /// The options this transport was built with (copies get the same).
    const curl_transport_options& options() const noexcept;

private:
    struct state {
        curl_transport_options options;
        CURLcode init = CURLE_OK;
        CURLcode setup = CURLE_OK;  // configure_once()'s outcome
        CURL* easy = nullptr;
        CURLM* multi = nullptr;
        std::atomic<bool> cancelled{false};
        std::atomic<std::size_t> connections{0};
        char error_text[CURL_ERROR_SIZE] = {};
        // The last request's header list and what it was built from (send() reuses it).
        detail::curl_slist_owner header_list;
        std::vector<http_header> listed;
        bool listed_body = false;
        bool listed_user_agent = false;
        bool listed_valid = false;
        std::string checked_url;  // the last request's URL that check_request() passed, with `listed`

        explicit state(curl_transport_options o);
        state(const state&) = delete;
        state& operator=(const state&) = delete;
        ~state();

        bool is_cancelled() const noexcept { return cancelled.load(std::memory_order_acquire); }

        result<http_response> send(const http_request& request);

        static constexpr bool connected_known() noexcept { return LIBCURL_VERSION_NUM >= 0x075000; }

        // "<what>: <curl's detailed message>" (the error buffer, else the code's generic text).
        std::string message(CURLcode rc, const std::string& what) const;

        // The options every request shares, set once on the easy handle: libcurl keeps them
        // between transfers, so a request sets only what is its own (configure()).
        CURLcode configure_once();
        CURLcode configure(const http_request& request, detail::curl_exchange& x);
    };

    std::unique_ptr<state> state_;
};

static_assert(is_transport_v<curl_transport>, "curl_transport must satisfy the transport contract");

/// Auto Scaling's (a public API's) libcurl transport: the metadata transport's options, with the
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
#include <forewarn/transport/curl-inl.hpp>
#endif
