// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/transport/curl_stream.hpp> (spdlog's -inl files). Header-only:
// included at the end of that header. Compiled mode: compiled once into libforewarn
// (src/forewarn.cpp) and empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0.

#include <forewarn/transport/curl_handles.hpp>
#include <forewarn/transport/curl_stream.hpp>

#include <algorithm>
#include <chrono>
#include <string_view>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// One streamed exchange: curl_exchange reads the header blocks (and a non-2xx body), this cuts a
/// 2xx body into messages. `head` comes first: libcurl's header and progress callbacks get it.
struct curl_stream_exchange {
    curl_exchange head;
    const stream_sink* sink = nullptr;
    std::size_t max_message = 0;
    std::string partial;         // the message being read, before its '\n'
    std::size_t delivered = 0;   // messages handed to the sink
    bool message_too_long = false;
    bool stopped = false;        // the sink returned false
    bool sink_threw = false;

    bool streaming() const noexcept { return head.block_status >= 200 && head.block_status <= 299; }

    // Hands one message to the sink (its line end dropped, an empty one skipped); false: stop.
    bool deliver(std::string_view message) {
        if (!message.empty() && message.back() == '\r') message.remove_suffix(1);
        if (message.empty()) return true;
        ++delivered;
        if ((*sink)(message)) return true;
        stopped = true;
        return false;
    }

    // CURLOPT_WRITEFUNCTION for a stream.
    static size_t on_body(char* data, size_t size, size_t count, void* userdata) {
        auto& s = *static_cast<curl_stream_exchange*>(userdata);
        if (!s.streaming()) return curl_exchange::on_body(data, size, count, &s.head);
        const size_t n = size * count;
        try {
            std::string_view in(data, n);
            while (!in.empty()) {
                const auto nl = in.find('\n');
                const auto piece = in.substr(0, nl);
                if (piece.size() > s.max_message - s.partial.size()) {  // partial.size() <= max_message holds
                    s.message_too_long = true;
                    return 0;
                }
                if (nl == std::string_view::npos) {
                    s.partial.append(piece.data(), piece.size());
                    break;
                }
                bool go_on;
                if (s.partial.empty()) {
                    go_on = s.deliver(piece);
                } else {
                    s.partial.append(piece.data(), piece.size());
                    go_on = s.deliver(s.partial);
                    s.partial.clear();
                }
                if (!go_on) return 0;
                in.remove_prefix(nl + 1);
            }
        } catch (...) {
            s.sink_threw = true;
            return 0;
        }
        return n;
    }
};

}  // namespace detail

struct curl_stream_transport::state {
    curl_transport_options options;
    CURLcode init = CURLE_OK;
    // Made by the first send_stream(), on its thread: a client that may stream but never does
    // (most etcd clients) costs no handles. cancel() reads `multi` from another thread.
    CURL* easy = nullptr;
    std::atomic<CURLM*> multi{nullptr};
    std::atomic<bool> cancelled{false};
    char error_text[CURL_ERROR_SIZE] = {};

    explicit state(curl_transport_options o) : options(std::move(o)) {}
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    ~state() {
        if (easy != nullptr) curl_easy_cleanup(easy);
        if (CURLM* m = multi.load()) curl_multi_cleanup(m);
    }

    bool is_cancelled() const noexcept { return cancelled.load(std::memory_order_acquire); }

    std::string message(CURLcode rc, const std::string& what) const {
        std::string text = error_text[0] != '\0' ? std::string(error_text) : std::string(curl_easy_strerror(rc));
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        return what + ": " + text;
    }

    result<http_response> send_stream(const http_request& request, const stream_sink& sink);
};

FOREWARN_INLINE curl_stream_transport::curl_stream_transport() : curl_stream_transport(curl_transport_options{}) {}
FOREWARN_INLINE curl_stream_transport::curl_stream_transport(curl_transport_options options)
    : state_(std::make_unique<state>(std::move(options))) {}
FOREWARN_INLINE curl_stream_transport::curl_stream_transport(const curl_stream_transport& other)
    : state_(std::make_unique<state>(other.options())) {}
FOREWARN_INLINE curl_stream_transport& curl_stream_transport::operator=(const curl_stream_transport& other) {
    if (this != &other) state_ = std::make_unique<state>(other.options());
    return *this;
}
FOREWARN_INLINE curl_stream_transport::curl_stream_transport(curl_stream_transport&&) noexcept = default;
FOREWARN_INLINE curl_stream_transport& curl_stream_transport::operator=(curl_stream_transport&&) noexcept = default;
FOREWARN_INLINE curl_stream_transport::~curl_stream_transport() = default;

FOREWARN_INLINE const curl_transport_options& curl_stream_transport::options() const noexcept {
    static const curl_transport_options defaults{};
    return state_ ? state_->options : defaults;
}

FOREWARN_INLINE void curl_stream_transport::cancel() noexcept {
    if (!state_) return;
    state_->cancelled.store(true, std::memory_order_release);
    // A wake-up sent before send_stream() polls is kept by libcurl; before the handle exists, the
    // flag alone stops it (checked after the handle is made).
    if (CURLM* m = state_->multi.load()) curl_multi_wakeup(m);
}

FOREWARN_INLINE void curl_stream_transport::reset() noexcept {
    if (state_) state_->cancelled.store(false, std::memory_order_release);
}

FOREWARN_INLINE result<http_response> curl_stream_transport::send_stream(const http_request& request, stream_sink on_message) {
    if (!state_) return error(errc::invalid_argument, "curl_stream_transport used after being moved from");
    try {
        return state_->send_stream(request, on_message);
    } catch (const std::exception& e) {
        return error(errc::transport, std::string("curl_stream_transport: ") + e.what());
    } catch (...) {
        return error(errc::transport, "curl_stream_transport: unexpected exception");
    }
}

FOREWARN_INLINE result<http_response> curl_stream_transport::state::send_stream(const http_request& request,
                                                                              const stream_sink& sink) {
    using std::chrono::milliseconds;
    if (auto bad = check_request(request)) return std::move(*bad);
    if (easy == nullptr) {
        init = detail::curl_global_once();
        if (init != CURLE_OK)
            return error(errc::transport, std::string("curl_global_init failed: ") + curl_easy_strerror(init));
        easy = curl_easy_init();
        if (multi.load() == nullptr) multi.store(curl_multi_init());
        if (easy == nullptr || multi.load() == nullptr) return error(errc::transport, "could not create libcurl handles");
    }
    if (is_cancelled()) return error(errc::cancelled, "request cancelled");
    CURLM* const m = multi.load();
    if (request.method == http_method::head) return error(errc::invalid_argument, "a HEAD request has no body to stream");

    detail::curl_slist_owner headers;
    bool has_user_agent = false, has_content_type = false;
    for (const auto& h : request.headers) {
        has_user_agent = has_user_agent || detail::iequals(h.name, "User-Agent");
        has_content_type = has_content_type || detail::iequals(h.name, "Content-Type");
        const bool ok = detail::trim(h.value).empty() ? headers.append(h.name + ";") : headers.append(h.name + ": " + h.value);
        if (!ok) return error(errc::transport, "out of memory building the header list");
    }
    const bool with_body = request.method != http_method::get;
    if (with_body && (!headers.append("Expect:") || (!has_content_type && !headers.append("Content-Type:"))))
        return error(errc::transport, "out of memory building the header list");

    detail::curl_stream_exchange x;
    x.head.cancelled = &cancelled;
    x.head.max_body = request.max_body;
    x.head.max_header_bytes = options.max_header_bytes;
    x.sink = &sink;
    x.max_message = request.max_body;

    // Every option, every time: a stream transport sends few requests, and nothing carries over.
    curl_easy_reset(easy);
    error_text[0] = '\0';
    CURLcode rc = CURLE_OK;
    auto set = [&rc](CURLcode r) {
        if (rc == CURLE_OK) rc = r;
    };
    set(curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_text));
#if LIBCURL_VERSION_NUM >= 0x075500
    set(curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https"));
#else
    set(curl_easy_setopt(easy, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS)));
#endif
    if (!options.proxy_from_environment) {
        set(curl_easy_setopt(easy, CURLOPT_PROXY, ""));
        set(curl_easy_setopt(easy, CURLOPT_NOPROXY, "*"));
    }
    set(curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L));
    set(curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L));
    set(curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1)));
    set(curl_easy_setopt(easy, CURLOPT_HTTP_CONTENT_DECODING, 0L));
    set(curl_easy_setopt(easy, CURLOPT_VERBOSE, options.verbose ? 1L : 0L));
    if (!options.ca_file.empty()) set(curl_easy_setopt(easy, CURLOPT_CAINFO, options.ca_file.c_str()));
    if (!options.client_cert.empty()) set(curl_easy_setopt(easy, CURLOPT_SSLCERT, options.client_cert.c_str()));
    if (!options.client_key.empty()) set(curl_easy_setopt(easy, CURLOPT_SSLKEY, options.client_key.c_str()));
    set(curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L));
    set(curl_easy_setopt(easy, CURLOPT_TCP_KEEPIDLE, 30L));
    set(curl_easy_setopt(easy, CURLOPT_TCP_KEEPINTVL, 10L));
    set(curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str()));
    set(curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 0L));  // no total timeout: the silence is watched below
    set(curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, detail::curl_millis(request.connect_timeout)));
    if (!has_user_agent && !options.user_agent.empty()) set(curl_easy_setopt(easy, CURLOPT_USERAGENT, options.user_agent.c_str()));
    if (request.method == http_method::put || request.method == http_method::patch)
        set(curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, to_string(request.method).data()));
    if (with_body) {
        set(curl_easy_setopt(easy, CURLOPT_POST, 1L));
        set(curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size())));
        set(curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data()));
    }
    set(curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers.list));
    set(curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &detail::curl_exchange::on_header));
    set(curl_easy_setopt(easy, CURLOPT_HEADERDATA, static_cast<void*>(&x.head)));
    set(curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &detail::curl_stream_exchange::on_body));
    set(curl_easy_setopt(easy, CURLOPT_WRITEDATA, static_cast<void*>(&x)));
    set(curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &detail::curl_exchange::on_progress));
    set(curl_easy_setopt(easy, CURLOPT_XFERINFODATA, static_cast<void*>(&x.head)));
    set(curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L));
    if (rc != CURLE_OK) {
        if (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_URL_MALFORMAT || rc == CURLE_BAD_FUNCTION_ARGUMENT)
            return error(errc::invalid_argument, message(rc, "bad request option"));
        return error(errc::transport, message(rc, "could not configure libcurl"));
    }

    if (curl_multi_add_handle(m, easy) != CURLM_OK) return error(errc::transport, "curl_multi_add_handle failed");
    struct detach {
        CURLM* multi;
        CURL* easy;
        ~detach() { curl_multi_remove_handle(multi, easy); }
    } detach_guard{m, easy};

    // The silence: how long since a byte (of a header or the body) last arrived.
    const auto idle_limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(request.timeout);
    auto last_byte = std::chrono::steady_clock::now();
    curl_off_t seen_body = 0;
    long seen_header = 0;
    bool done = false, idle = false;
    CURLcode outcome = CURLE_OK;
    while (!done) {
        int running = 0;
        CURLMcode mc = curl_multi_perform(m, &running);
        if (mc != CURLM_OK) return error(errc::transport, std::string("curl_multi_perform: ") + curl_multi_strerror(mc));
        int queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(m, &queued)) {
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) {
                done = true;
                outcome = msg->data.result;
            }
        }
        if (done || is_cancelled()) break;
        curl_off_t body = 0;
        long header = 0;
        curl_easy_getinfo(easy, CURLINFO_SIZE_DOWNLOAD_T, &body);
        curl_easy_getinfo(easy, CURLINFO_HEADER_SIZE, &header);
        const auto now = std::chrono::steady_clock::now();
        if (body != seen_body || header != seen_header) {
            seen_body = body;
            seen_header = header;
            last_byte = now;
        }
        if (now - last_byte >= idle_limit) {
            idle = true;
            break;
        }
        const auto left = std::chrono::duration_cast<milliseconds>(idle_limit - (now - last_byte)) + milliseconds(1);
        mc = curl_multi_poll(m, nullptr, 0, static_cast<int>(std::min<milliseconds::rep>(left.count(), 1000)), nullptr);
        if (mc != CURLM_OK) return error(errc::transport, std::string("curl_multi_poll: ") + curl_multi_strerror(mc));
    }

    if (is_cancelled()) return error(errc::cancelled, "request cancelled");
    if (x.sink_threw) return error(errc::handler_failed, "the stream's message handler threw");
    if (x.head.out_of_memory) return error(errc::transport, "out of memory reading the stream");
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    x.head.response.status = static_cast<int>(status);
    if (x.stopped) return std::move(x.head.response);
    if (x.message_too_long)
        return error(errc::body_too_large, "a message of the stream passed the cap of " + std::to_string(request.max_body) + " bytes",
                     x.head.response.status);
    if (x.head.body_too_large)
        return error(errc::body_too_large, "response body passed the cap of " + std::to_string(request.max_body) + " bytes",
                     x.head.response.status);
    if (x.head.headers_too_large)
        return error(errc::transport, "response headers passed " + std::to_string(options.max_header_bytes) + " bytes");
    if (idle) {
        error e(errc::timeout, "the stream from " + std::string(detail::url_authority(request.url)) + " was silent for " +
                                   std::to_string(request.timeout.count()) + " ms (its idle limit)",
                x.head.response.status);
        if (status == 0) e.network = network_failure::connect_timeout;
        return e;
    }
    if (outcome == CURLE_OK) {
        // The server ended the body: a last message without its '\n' is whole all the same.
        if (x.streaming() && !x.partial.empty()) {
            try {
                x.deliver(x.partial);
            } catch (...) {
                return error(errc::handler_failed, "the stream's message handler threw");
            }
        }
        return std::move(x.head.response);
    }
    if (outcome == CURLE_OPERATION_TIMEDOUT) {
        error e(errc::timeout, message(outcome, "connect to " + std::string(detail::url_authority(request.url)) + " timed out"));
        e.network = network_failure::connect_timeout;
        return e;
    }
    if (outcome == CURLE_ABORTED_BY_CALLBACK) return error(errc::cancelled, "request cancelled");
    error e(errc::transport,
            message(outcome, "stream from " + std::string(detail::url_authority(request.url)) + " broke" +
                                 (x.partial.empty() ? std::string() : " in the middle of a message")),
            x.head.response.status);
    long os_error = 0;
    curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_error);
    e.network = detail::curl_network_failure(outcome, os_error);
    return e;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
