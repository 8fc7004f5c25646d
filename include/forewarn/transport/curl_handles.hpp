// SPDX-License-Identifier: MIT
#pragma once

// What the libcurl transports hold of libcurl: the only forewarn header that includes
// <curl/curl.h>. curl_transport's and curl_stream_transport's definitions include it; their
// classes (transport/curl.hpp, transport/curl_stream.hpp) name none of it, so a compiled-mode
// program never parses libcurl's headers. Header-only, curl.hpp includes it at its end, and it
// includes curl-inl.hpp at its own: the definitions come after both, whichever is included first.

#include <forewarn/config.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/transport/curl.hpp>

#include <curl/curl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#if !defined(LIBCURL_VERSION_NUM) || LIBCURL_VERSION_NUM < 0x074400
#error "forewarn::curl_transport needs libcurl 7.68.0 or later (curl_multi_poll, curl_multi_wakeup)"
#endif

FOREWARN_BEGIN_NAMESPACE

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

/// libcurl's handles of one curl_transport, and what a send reuses from the last.
struct curl_transport::state {
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

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/transport/curl-inl.hpp>
#endif
