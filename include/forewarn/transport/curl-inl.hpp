// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/transport/curl.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/transport/curl.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/transport/curl_handles.hpp>

#include <algorithm>
#include <cerrno>
#include <mutex>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD CURLcode curl_global_once() noexcept {
    static std::once_flag once;
    static CURLcode code = CURLE_OK;
    try {
        std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
    } catch (...) {
        return CURLE_FAILED_INIT;
    }
    return code;
}

FOREWARN_INLINE long curl_millis(std::chrono::milliseconds d) noexcept {
    const auto ms = d.count();
    if (ms <= 0) return 0;
    if (ms > static_cast<std::chrono::milliseconds::rep>(LONG_MAX)) return LONG_MAX;
    return static_cast<long>(ms);
}

FOREWARN_INLINE size_t curl_exchange::on_header(char* data, size_t size, size_t count, void* userdata) {
    auto& x = *static_cast<curl_exchange*>(userdata);
    const size_t n = size * count;
    try {
        std::string_view line(data, n);
        if (line.size() >= 5 && line.substr(0, 5) == "HTTP/") {
            // A new header block (after a 100 Continue, say): only the last block describes the
            // answer, so forget the previous one's headers.
            x.response.headers.clear();
            x.response.headers.reserve(8);  // one allocation for a usual block
            x.header_bytes = 0;
            x.in_headers = true;
            x.block_status = 0;
            const auto sp = line.find(' ');
            if (sp != std::string_view::npos)
                for (std::size_t i = sp + 1; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i)
                    x.block_status = x.block_status * 10 + (line[i] - '0');
            return n;
        }
        if (!x.in_headers) return n;  // chunked trailers: not part of the answer's headers
        x.header_bytes += n;
        if (x.header_bytes > x.max_header_bytes) {
            x.headers_too_large = true;
            return 0;  // anything but n aborts the transfer
        }
        line = trim(line);
        if (line.empty()) {  // end of the block
            x.in_headers = false;
            return n;
        }
        if ((data[0] == ' ' || data[0] == '\t') && !x.response.headers.empty()) {
            // obsolete line folding: continues the previous header's value
            auto& v = x.response.headers.back().value;
            v += ' ';
            v.append(line.data(), line.size());
            return n;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) return n;  // not a header; ignore rather than fail
        const auto name = trim(line.substr(0, colon));
        const auto value = trim(line.substr(colon + 1));
        if (iequals(name, "Content-Length") && !x.head && x.block_status >= 200 && x.block_status != 204 &&
            x.block_status != 304) {
            // Refuse a body announced larger than the cap before a byte of it is read.
            std::uint64_t length = 0;
            bool overflow = false;
            for (const char c : value) {
                if (c < '0' || c > '9') break;
                if (length > (UINT64_MAX - 9) / 10) {
                    overflow = true;
                    break;
                }
                length = length * 10 + static_cast<std::uint64_t>(c - '0');
            }
            if (overflow || length > static_cast<std::uint64_t>(x.max_body)) {
                x.content_length_too_large = true;
                x.body_too_large = true;
                return 0;
            }
            // At most 1 MiB up front: a server that announces a large body and sends nothing
            // should not cost that memory before a byte arrives.
            x.response.body.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(length, std::uint64_t(1) << 20)));
        }
        x.response.headers.push_back(http_header{std::string(name), std::string(value)});
        return n;
    } catch (...) {
        x.out_of_memory = true;
        return 0;
    }
}

FOREWARN_INLINE size_t curl_exchange::on_body(char* data, size_t size, size_t count, void* userdata) {
    auto& x = *static_cast<curl_exchange*>(userdata);
    const size_t n = size * count;
    if (n > x.max_body - x.response.body.size()) {  // body.size() <= max_body always holds
        x.body_too_large = true;
        return 0;  // CURLE_WRITE_ERROR: stop reading now, memory stays at most max_body
    }
    try {
        x.response.body.append(data, n);
    } catch (...) {
        x.out_of_memory = true;
        return 0;
    }
    return n;
}

FOREWARN_INLINE int curl_exchange::on_progress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    const auto& x = *static_cast<curl_exchange*>(userdata);
    return x.cancelled->load(std::memory_order_acquire) ? 1 : 0;
}

FOREWARN_INLINE bool same_headers(const std::vector<http_header>& a, const std::vector<http_header>& b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
    return true;
}

FOREWARN_INLINE bool curl_slist_owner::append(const std::string& line) noexcept {
    curl_slist* next = curl_slist_append(list, line.c_str());
    if (next == nullptr) return false;
    list = next;
    return true;
}

}  // namespace detail

FOREWARN_INLINE FOREWARN_COLD curl_transport::curl_transport() : curl_transport(curl_transport_options{}) {}

FOREWARN_INLINE FOREWARN_COLD curl_transport::curl_transport(curl_transport_options options)
    : state_(std::make_unique<state>(std::move(options))) {}

FOREWARN_INLINE FOREWARN_COLD curl_transport::curl_transport(const curl_transport& other)
    : state_(std::make_unique<state>(other.state_ ? other.state_->options : curl_transport_options{})) {}

FOREWARN_INLINE FOREWARN_COLD curl_transport& curl_transport::operator=(const curl_transport& other) {
    if (this != &other)
        state_ = std::make_unique<state>(other.state_ ? other.state_->options : curl_transport_options{});
    return *this;
}

FOREWARN_INLINE curl_transport::curl_transport(curl_transport&&) noexcept = default;
FOREWARN_INLINE curl_transport& curl_transport::operator=(curl_transport&&) noexcept = default;
FOREWARN_INLINE curl_transport::~curl_transport() = default;

FOREWARN_INLINE result<http_response> curl_transport::send(const http_request& request) {
    if (!state_) return error(errc::invalid_argument, "curl_transport used after being moved from");
    try {
        return state_->send(request);
    } catch (const std::exception& e) {  // std::bad_alloc building a header list, say
        return error(errc::transport, std::string("curl_transport: ") + e.what());
    } catch (...) {
        return error(errc::transport, "curl_transport: unexpected exception");
    }
}

FOREWARN_INLINE void curl_transport::cancel() noexcept {
    if (!state_) return;
    state_->cancelled.store(true, std::memory_order_release);
    // Wakes curl_multi_poll in send(). A wake-up sent before send() reaches the poll is kept
    // by libcurl and ends the next poll at once, so no ordering of the two threads loses it.
    if (state_->multi != nullptr) curl_multi_wakeup(state_->multi);
}

FOREWARN_INLINE bool curl_transport::cancelled() const noexcept {
    return state_ && state_->cancelled.load(std::memory_order_acquire);
}

FOREWARN_INLINE void curl_transport::reset() noexcept {
    if (state_) state_->cancelled.store(false, std::memory_order_release);
}

FOREWARN_INLINE auto curl_transport::connections_opened() const noexcept -> std::size_t {
    return state_ ? state_->connections.load(std::memory_order_relaxed) : 0;
}

FOREWARN_INLINE const curl_transport_options& curl_transport::options() const noexcept {
    static const curl_transport_options defaults{};
    return state_ ? state_->options : defaults;
}

FOREWARN_INLINE FOREWARN_COLD curl_transport::state::state(curl_transport_options o)
    : options(std::move(o)) {
    init = detail::curl_global_once();
    if (init != CURLE_OK) return;
    easy = curl_easy_init();
    // The multi handle owns the connection cache, so the connection survives between
    // sends, and it gives cancel() a poll to wake.
    multi = curl_multi_init();
    if (easy != nullptr) setup = configure_once();
}

FOREWARN_INLINE FOREWARN_COLD curl_transport::state::~state() {
    if (easy != nullptr) curl_easy_cleanup(easy);  // never attached to multi here
    if (multi != nullptr) curl_multi_cleanup(multi);
}

FOREWARN_INLINE result<http_response> curl_transport::state::send(const http_request& request) {
    using std::chrono::milliseconds;
    if (is_cancelled()) return error(errc::cancelled, "request cancelled");
    if (init != CURLE_OK)
        return error(errc::transport, std::string("curl_global_init failed: ") + curl_easy_strerror(init));
    if (easy == nullptr || multi == nullptr) return error(errc::transport, "could not create libcurl handles");
    if (setup != CURLE_OK) return error(errc::transport, message(setup, "could not configure libcurl"));

    // The header list is built again only when the headers differ from the last request's: a
    // poller asks the same ones every time.
    const bool with_body =
        request.method == http_method::post || request.method == http_method::put || request.method == http_method::patch;
    const bool same = listed_valid && detail::same_headers(listed, request.headers);
    // The request is checked unless its URL and headers are the last good request's (the
    // timeouts, cheap to check, always are).
    if (!same || request.url != checked_url || request.timeout.count() <= 0 || request.connect_timeout.count() <= 0) {
        checked_url.clear();
        if (auto bad = check_request(request)) return std::move(*bad);
        checked_url = request.url;
    }
    if (!same || listed_body != with_body) {
        listed_valid = false;
        detail::curl_slist_owner fresh;
        bool has_user_agent = false;
        bool has_content_type = false;
        bool ok = true;  // false once libcurl could not take a line (out of memory)
        for (const auto& h : request.headers) {
            has_user_agent = has_user_agent || detail::iequals(h.name, "User-Agent");
            has_content_type = has_content_type || detail::iequals(h.name, "Content-Type");
            // "Name;" is libcurl's spelling of a header sent with an empty value.
            ok = ok && fresh.append(detail::trim(h.value).empty() ? detail::cat({h.name, ";"}) : detail::cat({h.name, ": ", h.value}));
        }
        // forewarn's User-Agent goes in the list, built once, rather than through
        // CURLOPT_USERAGENT, which libcurl formats again for every request: 2,700 instructions
        // less a poll (docs/benchmarks.md, "The cost of one poll").
        if (!has_user_agent && !options.user_agent.empty()) ok = ok && fresh.append(detail::cat({"User-Agent: ", options.user_agent}));
        if (with_body) {
            // libcurl would wait up to a second for a 100 Continue on large bodies, and would
            // label the body form-urlencoded; the metadata services want neither.
            ok = ok && fresh.append("Expect:");
            if (!has_content_type) ok = ok && fresh.append("Content-Type:");
        }
        if (!ok) return error(errc::transport, "out of memory building the header list");
        std::swap(header_list.list, fresh.list);
        listed = request.headers;
        listed_body = with_body;
        listed_user_agent = has_user_agent;
        listed_valid = true;
    }

    detail::curl_exchange x;
    x.cancelled = &cancelled;
    x.max_body = request.max_body;
    x.max_header_bytes = options.max_header_bytes;
    x.head = request.method == http_method::head;

    // The shared options were set once (configure_once); configure() sets every option a request
    // owns, so nothing leaks from the previous one. The connection cache lives in the multi handle.
    error_text[0] = '\0';
    CURLcode rc = configure(request, x);
    if (rc != CURLE_OK) {
        if (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_URL_MALFORMAT || rc == CURLE_BAD_FUNCTION_ARGUMENT)
            return error(errc::invalid_argument, message(rc, "bad request option"));
        return error(errc::transport, message(rc, "could not configure libcurl"));
    }

    const auto started = std::chrono::steady_clock::now();
    if (curl_multi_add_handle(multi, easy) != CURLM_OK)
        return error(errc::transport, "curl_multi_add_handle failed");
    struct detach {
        CURLM* multi;
        CURL* easy;
        ~detach() { curl_multi_remove_handle(multi, easy); }
    } detach_guard{multi, easy};

    bool done = false;
    CURLcode outcome = CURLE_OK;
    while (!done) {
        int running = 0;
        CURLMcode mc = curl_multi_perform(multi, &running);
        if (mc != CURLM_OK) return error(errc::transport, std::string("curl_multi_perform: ") + curl_multi_strerror(mc));
        int queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) {
                done = true;
                outcome = msg->data.result;
            }
        }
        if (done) break;
        if (is_cancelled()) break;
        // Sleeps until a socket is ready, libcurl's own next timeout, cancel()'s wake-up, or
        // a second at most (a safety net: the loop re-checks everything anyway).
        mc = curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
        if (mc != CURLM_OK) return error(errc::transport, std::string("curl_multi_poll: ") + curl_multi_strerror(mc));
        if (is_cancelled()) break;
    }

    long connects = 0;
    if (curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects > 0)
        connections.fetch_add(static_cast<std::size_t>(connects), std::memory_order_relaxed);

    // Checked even after a completed exchange: a stop() that raced with the answer still
    // wins, which keeps the rule "after cancel(), sends return cancelled" without exceptions.
    if (is_cancelled()) return error(errc::cancelled, "request cancelled");
    if (x.out_of_memory) return error(errc::transport, "out of memory reading the response");

    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    x.response.status = static_cast<int>(status);

    if (x.body_too_large) {
        std::string why = x.content_length_too_large
                              ? "response Content-Length is above the cap of "
                              : "response body passed the cap of ";
        return error(errc::body_too_large, detail::cat({why, detail::num(request.max_body), " bytes"}), x.response.status);
    }
    if (x.headers_too_large)
        return error(errc::transport,
                     detail::cat({"response headers passed ", detail::num(options.max_header_bytes), " bytes"}));
    if (outcome == CURLE_OK) return std::move(x.response);

    if (outcome == CURLE_OPERATION_TIMEDOUT) {
        const auto elapsed =
            std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started).count();
        const bool connecting = connected_known() && !x.connected;
        std::string what = connecting ? detail::cat({"connect to ", detail::url_authority(request.url), " timed out after ",
                                                     detail::num(elapsed), " ms (connect_timeout ",
                                                     detail::num(request.connect_timeout.count()), " ms)"})
                                      : detail::cat({"request timed out after ", detail::num(elapsed), " ms (total timeout ",
                                                     detail::num(request.timeout.count()), " ms)"});
        error e(errc::timeout, message(outcome, what), x.response.status);
        if (connecting) e.network = network_failure::connect_timeout;
        return e;
    }
    if (outcome == CURLE_ABORTED_BY_CALLBACK) return error(errc::cancelled, "request cancelled");
    // The scheme was checked above, so CURLE_UNSUPPORTED_PROTOCOL here is the server's doing
    // (an HTTP/0.9 answer, say) and stays a transport error.
    if (outcome == CURLE_URL_MALFORMAT) return error(errc::invalid_argument, message(outcome, "bad URL"));
    error e(errc::transport, message(outcome, detail::cat({"request to ", detail::url_authority(request.url), " failed"})),
            x.response.status);
    long os_error = 0;
    curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_error);
    e.network = detail::curl_network_failure(outcome, os_error);
    return e;
}

namespace detail {

// Which connection failure a libcurl code is, with the system's errno of the failed call.
FOREWARN_INLINE FOREWARN_COLD network_failure curl_network_failure(CURLcode rc, long os_error) noexcept {
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return network_failure::name_not_resolved;
    case CURLE_COULDNT_CONNECT:
        if (os_error == ECONNREFUSED) return network_failure::refused;
        if (os_error == ENETUNREACH || os_error == EHOSTUNREACH) return network_failure::unreachable;
        if (os_error == ETIMEDOUT) return network_failure::connect_timeout;
        return network_failure::none;  // EACCES, EPERM (a local firewall), ...: not told apart
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: return network_failure::reset;
    default: return network_failure::none;
    }
}

}  // namespace detail

FOREWARN_INLINE FOREWARN_COLD auto curl_transport::state::message(CURLcode rc, const std::string& what) const -> std::string {
    std::string detail = error_text[0] != '\0' ? std::string(error_text) : std::string(curl_easy_strerror(rc));
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\r')) detail.pop_back();
    return forewarn::detail::cat({what, ": ", detail});
}

FOREWARN_INLINE FOREWARN_COLD CURLcode curl_transport::state::configure_once() {
    CURLcode rc = CURLE_OK;
    auto set = [&rc](CURLcode r) {
        if (rc == CURLE_OK) rc = r;
    };
    set(curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_text));
#if LIBCURL_VERSION_NUM >= 0x075500
    set(curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https"));
    set(curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"));
#else
    set(curl_easy_setopt(easy, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS)));
    set(curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS)));
#endif
    // The metadata services are link-local and must be reached directly: an empty proxy
    // overrides http_proxy/HTTPS_PROXY/ALL_PROXY, and NOPROXY "*" covers anything left. A cloud's
    // public API may be reachable only through the proxy the environment names: libcurl then reads
    // https_proxy/HTTPS_PROXY, http_proxy, ALL_PROXY and NO_PROXY itself.
    if (!options.proxy_from_environment) {
        set(curl_easy_setopt(easy, CURLOPT_PROXY, ""));
        set(curl_easy_setopt(easy, CURLOPT_NOPROXY, "*"));
    }
    set(curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L));
    set(curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 0L));
    set(curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L));  // no SIGALRM in a multithreaded service
    set(curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1)));
    // No Accept-Encoding is sent and nothing is decoded: the body is the bytes on the wire.
    set(curl_easy_setopt(easy, CURLOPT_HTTP_CONTENT_DECODING, 0L));
    set(curl_easy_setopt(easy, CURLOPT_HTTP_TRANSFER_DECODING, 1L));
    set(curl_easy_setopt(easy, CURLOPT_VERBOSE, options.verbose ? 1L : 0L));
    if (!options.ca_file.empty()) set(curl_easy_setopt(easy, CURLOPT_CAINFO, options.ca_file.c_str()));
    if (!options.client_cert.empty()) set(curl_easy_setopt(easy, CURLOPT_SSLCERT, options.client_cert.c_str()));
    if (!options.client_key.empty()) set(curl_easy_setopt(easy, CURLOPT_SSLKEY, options.client_key.c_str()));
    set(curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &detail::curl_exchange::on_header));
    set(curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &detail::curl_exchange::on_body));
    set(curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &detail::curl_exchange::on_progress));
    set(curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L));
#if LIBCURL_VERSION_NUM >= 0x075000
    set(curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, &detail::curl_exchange::on_connected));
#endif
    return rc;
}

FOREWARN_INLINE CURLcode curl_transport::state::configure(const http_request& request, detail::curl_exchange& x) {
    // Everything set here is set on every request, so nothing of the last one carries over
    // (a PUT's CUSTOMREQUEST, a HEAD's NOBODY, a caller's own User-Agent).
    CURLcode rc = CURLE_OK;
    auto set = [&rc](CURLcode r) {
        if (rc == CURLE_OK) rc = r;
    };
    set(curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str()));
    set(curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, detail::curl_millis(request.timeout)));
    set(curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, detail::curl_millis(request.connect_timeout)));
    // The request's own User-Agent line is in the header list. Through a proxy libcurl also sends
    // CURLOPT_USERAGENT in an https request's CONNECT, which the list does not reach; libcurl skips
    // its own line for the request itself when the list has one.
    if (options.proxy_from_environment) {
        const bool own_agent = !listed_user_agent && !options.user_agent.empty();
        set(curl_easy_setopt(easy, CURLOPT_USERAGENT, own_agent ? options.user_agent.c_str() : nullptr));
    }
    // PUT and PATCH go as a POST of the body in memory under their own name (below); libcurl's own
    // PUT would read the body from a callback.
    const bool renamed = request.method == http_method::put || request.method == http_method::patch;
    set(curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, renamed ? to_string(request.method).data() : nullptr));  // a literal: ends in NUL
    if (request.method == http_method::head) {
        set(curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L));
        set(curl_easy_setopt(easy, CURLOPT_NOBODY, 1L));  // HTTPGET and POST set it back to 0
    } else if (request.method != http_method::get) {
        set(curl_easy_setopt(easy, CURLOPT_POST, 1L));
        set(curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size())));
        set(curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data()));
    } else {
        set(curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L));
    }
    set(curl_easy_setopt(easy, CURLOPT_HTTPHEADER, header_list.list));
    set(curl_easy_setopt(easy, CURLOPT_HEADERDATA, static_cast<void*>(&x)));
    set(curl_easy_setopt(easy, CURLOPT_WRITEDATA, static_cast<void*>(&x)));
    set(curl_easy_setopt(easy, CURLOPT_XFERINFODATA, static_cast<void*>(&x)));
#if LIBCURL_VERSION_NUM >= 0x075000
    set(curl_easy_setopt(easy, CURLOPT_PREREQDATA, static_cast<void*>(&x)));
#endif
    return rc;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
