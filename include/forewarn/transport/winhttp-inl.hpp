// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/transport/winhttp.hpp> (spdlog's -inl files). Header-only: included
// at the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp).

#include <forewarn/transport/winhttp.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/platform/windows.hpp>

#include <winhttp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// One request's state. WinHTTP's callbacks reach it through a heap-held shared_ptr (the request
/// handle's context) that only HANDLE_CLOSING, the last callback of a handle, releases: a
/// callback that arrives after send() gave up (cancel, time-out) or after the transport is gone
/// still finds it alive.
struct winhttp_exchange {
    std::mutex mutex;
    std::condition_variable changed;
    // The last completion, under `mutex`.
    bool signalled = false;
    DWORD status = 0;      // the WINHTTP_CALLBACK_STATUS_* that completed
    DWORD length = 0;      // bytes available (DATA_AVAILABLE), read (READ_COMPLETE)
    DWORD failure = 0;     // REQUEST_ERROR's error code
    bool cancelled = false;  // raised by cancel()
    std::atomic<bool> connected{false};
    std::atomic<std::size_t> connections{0};
    std::string request_body;  // read by WinHTTP until SENDREQUEST_COMPLETE
    std::vector<char> buffer = std::vector<char>(16 * 1024);  // filled by WinHttpReadData

    void complete(DWORD what, DWORD len, DWORD err) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            signalled = true;
            status = what;
            length = len;
            failure = err;
        }
        changed.notify_all();
    }
    void cancel() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            cancelled = true;
        }
        changed.notify_all();
    }
};

inline void CALLBACK winhttp_callback(HINTERNET, DWORD_PTR context, DWORD status, LPVOID info, DWORD info_length) {
    if (context == 0) return;  // the session's own notifications
    auto* keep = reinterpret_cast<std::shared_ptr<winhttp_exchange>*>(context);
    auto& x = **keep;
    switch (status) {
    case WINHTTP_CALLBACK_STATUS_CONNECTED_TO_SERVER:
        x.connected.store(true);
        x.connections.fetch_add(1);
        break;
    case WINHTTP_CALLBACK_STATUS_REQUEST_SENT:
        // The request is on the wire: a connection is up, new or reused (a reused one has no
        // CONNECTED_TO_SERVER; and SENDREQUEST_COMPLETE may come only with the answer).
        x.connected.store(true);
        break;
    case WINHTTP_CALLBACK_STATUS_SENDREQUEST_COMPLETE:
        x.connected.store(true);
        x.complete(status, 0, 0);
        break;
    case WINHTTP_CALLBACK_STATUS_HEADERS_AVAILABLE: x.complete(status, 0, 0); break;
    case WINHTTP_CALLBACK_STATUS_DATA_AVAILABLE:
        x.complete(status, info != nullptr ? *static_cast<DWORD*>(info) : 0, 0);
        break;
    case WINHTTP_CALLBACK_STATUS_READ_COMPLETE: x.complete(status, info_length, 0); break;
    case WINHTTP_CALLBACK_STATUS_REQUEST_ERROR: {
        const auto* r = static_cast<const WINHTTP_ASYNC_RESULT*>(info);
        x.complete(status, 0, r != nullptr ? r->dwError : ERROR_WINHTTP_INTERNAL_ERROR);
        break;
    }
    case WINHTTP_CALLBACK_STATUS_HANDLE_CLOSING: delete keep; break;
    default: break;
    }
}

/// Closes a WinHTTP handle on every way out.
struct winhttp_handle {
    HINTERNET h = nullptr;
    winhttp_handle() = default;
    explicit winhttp_handle(HINTERNET handle) : h(handle) {}
    winhttp_handle(const winhttp_handle&) = delete;
    winhttp_handle& operator=(const winhttp_handle&) = delete;
    ~winhttp_handle() {
        if (h != nullptr) ::WinHttpCloseHandle(h);
    }
};

}  // namespace detail

FOREWARN_INLINE winhttp_transport::winhttp_transport() : winhttp_transport(winhttp_transport_options{}) {}

FOREWARN_INLINE winhttp_transport::winhttp_transport(winhttp_transport_options options)
    : state_(std::make_unique<state>(std::move(options))) {}

FOREWARN_INLINE winhttp_transport::winhttp_transport(const winhttp_transport& other)
    : state_(std::make_unique<state>(other.options())) {}

FOREWARN_INLINE winhttp_transport& winhttp_transport::operator=(const winhttp_transport& other) {
    if (this != &other) state_ = std::make_unique<state>(other.options());
    return *this;
}

FOREWARN_INLINE winhttp_transport::winhttp_transport(winhttp_transport&&) noexcept = default;
FOREWARN_INLINE winhttp_transport& winhttp_transport::operator=(winhttp_transport&&) noexcept = default;
FOREWARN_INLINE winhttp_transport::~winhttp_transport() = default;

FOREWARN_INLINE result<http_response> winhttp_transport::send(const http_request& request) {
    if (!state_) return error(errc::invalid_argument, "winhttp_transport used after being moved from");
    try {
        return state_->send(request);
    } catch (const std::exception& e) {
        return error(errc::transport, std::string("winhttp_transport: ") + e.what());
    } catch (...) {
        return error(errc::transport, "winhttp_transport: unexpected exception");
    }
}

FOREWARN_INLINE void winhttp_transport::cancel() noexcept {
    if (!state_) return;
    state_->cancelled.store(true, std::memory_order_release);
    // Raised after the flag: a send() that registers its exchange later sees the flag first.
    try {
        std::lock_guard<std::mutex> lock(state_->mutex);
        if (state_->current) state_->current->cancel();
    } catch (...) {
        // A lock that cannot be taken (a system error): the send in flight ends at its deadline.
    }
}

FOREWARN_INLINE void winhttp_transport::reset() noexcept {
    if (state_) state_->cancelled.store(false, std::memory_order_release);
}

FOREWARN_INLINE auto winhttp_transport::connections_opened() const noexcept -> std::size_t {
    return state_ ? state_->connections.load(std::memory_order_relaxed) : 0;
}

FOREWARN_INLINE const winhttp_transport_options& winhttp_transport::options() const noexcept {
    static const winhttp_transport_options defaults{};
    return state_ ? state_->options : defaults;
}

FOREWARN_INLINE winhttp_transport::state::state(winhttp_transport_options o) : options(std::move(o)) {
    const auto agent = platform::to_wide(options.user_agent);
    session = ::WinHttpOpen(agent.c_str(), WINHTTP_ACCESS_TYPE_NO_PROXY, WINHTTP_NO_PROXY_NAME,
                            WINHTTP_NO_PROXY_BYPASS, WINHTTP_FLAG_ASYNC);
    if (session == nullptr) {
        open_error = ::GetLastError();
        return;
    }
    // Inherited by every connection and request handle made from this session.
    if (::WinHttpSetStatusCallback(session, &detail::winhttp_callback, WINHTTP_CALLBACK_FLAG_ALL_NOTIFICATIONS, 0) ==
        WINHTTP_INVALID_STATUS_CALLBACK) {
        open_error = ::GetLastError();
        ::WinHttpCloseHandle(session);
        session = nullptr;
    }
}

FOREWARN_INLINE winhttp_transport::state::~state() {
    if (session != nullptr) ::WinHttpCloseHandle(session);
}

FOREWARN_INLINE result<http_response> winhttp_transport::state::send(const http_request& request) {
    using std::chrono::milliseconds;
    using steady = std::chrono::steady_clock;
    if (is_cancelled()) return error(errc::cancelled, "request cancelled");
    if (auto bad = check_request(request)) return std::move(*bad);
    if (session == nullptr)
        return error(errc::transport, "WinHttpOpen failed: " + platform::system_message(open_error, L"winhttp.dll"));

    // The URL's parts. WinHttpCrackUrl takes the whole URL; the path keeps its query.
    const std::wstring url = platform::to_wide(request.url);
    URL_COMPONENTS parts{};
    parts.dwStructSize = sizeof(parts);
    parts.dwSchemeLength = static_cast<DWORD>(-1);
    parts.dwHostNameLength = static_cast<DWORD>(-1);
    parts.dwUrlPathLength = static_cast<DWORD>(-1);
    parts.dwExtraInfoLength = static_cast<DWORD>(-1);
    if (!::WinHttpCrackUrl(url.c_str(), static_cast<DWORD>(url.size()), 0, &parts) || parts.dwHostNameLength == 0)
        return error(errc::invalid_argument, "bad URL: " + request.url);
    const std::wstring host(parts.lpszHostName, parts.dwHostNameLength);
    std::wstring path(parts.lpszUrlPath, parts.dwUrlPathLength);
    if (parts.lpszExtraInfo != nullptr) path.append(parts.lpszExtraInfo, parts.dwExtraInfoLength);
    if (const auto fragment = path.find(L'#'); fragment != std::wstring::npos) path.resize(fragment);  // never sent
    if (path.empty()) path = L"/";
    const bool secure = parts.nScheme == INTERNET_SCHEME_HTTPS;
    const std::string authority(detail::url_authority(request.url));

    const auto started = steady::now();
    const auto total_deadline = started + request.timeout;
    const auto connect_deadline = started + (std::min)(request.connect_timeout, request.timeout);

    auto fail = [&](DWORD code, const std::string& what) -> error {
        if (code == ERROR_WINHTTP_TIMEOUT) return error(errc::timeout, what + ": " + platform::system_message(code, L"winhttp.dll"));
        if (code == ERROR_WINHTTP_HEADER_SIZE_OVERFLOW)
            return error(errc::transport, "response headers passed " + std::to_string(options.max_header_bytes) + " bytes");
        if (code == ERROR_WINHTTP_INVALID_URL || code == ERROR_WINHTTP_UNRECOGNIZED_SCHEME)
            return error(errc::invalid_argument, "bad URL: " + platform::system_message(code, L"winhttp.dll"));
        error e(errc::transport, what + ": " + platform::system_message(code, L"winhttp.dll"));
        // WinHTTP's own codes, or the socket's (Wine passes Winsock's through).
        const auto is = [code](long c) { return code == static_cast<DWORD>(c); };
        if (is(ERROR_WINHTTP_CANNOT_CONNECT) || is(WSAECONNREFUSED)) e.network = network_failure::refused;  // WinHTTP: or unreachable
        else if (is(ERROR_WINHTTP_NAME_NOT_RESOLVED) || is(WSAHOST_NOT_FOUND)) e.network = network_failure::name_not_resolved;
        else if (is(ERROR_WINHTTP_CONNECTION_ERROR) || is(WSAECONNRESET) || is(WSAECONNABORTED) ||
                 is(ERROR_WINHTTP_INVALID_SERVER_RESPONSE))  // Wine's word for a reset before any answer
            e.network = network_failure::reset;
        else if (is(WSAENETUNREACH) || is(WSAEHOSTUNREACH)) e.network = network_failure::unreachable;
        return e;
    };
    const std::string failed = "request to " + authority + " failed";

    detail::winhttp_handle connection(::WinHttpConnect(session, host.c_str(), parts.nPort, 0));
    if (connection.h == nullptr) return fail(::GetLastError(), failed);
    const std::wstring verb = platform::to_wide(to_string(request.method));
    detail::winhttp_handle req(::WinHttpOpenRequest(connection.h, verb.c_str(), path.c_str(), nullptr, WINHTTP_NO_REFERER,
                                                    WINHTTP_DEFAULT_ACCEPT_TYPES, secure ? WINHTTP_FLAG_SECURE : 0));
    if (req.h == nullptr) return fail(::GetLastError(), failed);

    auto x = std::make_shared<detail::winhttp_exchange>();
    DWORD_PTR context = 0;  // the handle's context, given again to WinHttpSendRequest
    {
        // The callbacks' reference, released by HANDLE_CLOSING. Until the context is set, the
        // handle's callbacks carry 0 and are ignored, so a failure here frees it at once.
        auto* keep = new std::shared_ptr<detail::winhttp_exchange>(x);
        context = reinterpret_cast<DWORD_PTR>(keep);
        if (!::WinHttpSetOption(req.h, WINHTTP_OPTION_CONTEXT_VALUE, &context, sizeof(context))) {
            const DWORD e = ::GetLastError();
            delete keep;
            return fail(e, "cannot set up the request to " + authority);
        }
    }
    // No redirects followed, and no cookie store (WinHTTP would send back what a server set).
    DWORD feature = WINHTTP_DISABLE_REDIRECTS | WINHTTP_DISABLE_COOKIES;
    DWORD policy = WINHTTP_OPTION_REDIRECT_POLICY_NEVER;
    DWORD header_cap = static_cast<DWORD>((std::min<std::size_t>)(options.max_header_bytes, 0x7fffffff));
    auto millis = [](milliseconds d) {
        return static_cast<int>((std::min<milliseconds::rep>)((std::max<milliseconds::rep>)(d.count(), 1), INT32_MAX));
    };
    // The deadlines are the transport's own (the waits below): WinHTTP's timeouts are set 5 s
    // beyond them, so that they only back ours up and a time-out is always told as one.
    // WinHttpSetTimeouts leaves the wait for the response headers at WinHTTP's 90 s: a hanging GET
    // or a service's slow first call waits longer than that, so it gets the total timeout too.
    const auto margin = std::chrono::seconds(5);
    DWORD receive_response = static_cast<DWORD>(millis(request.timeout + margin));
    if (!::WinHttpSetOption(req.h, WINHTTP_OPTION_DISABLE_FEATURE, &feature, sizeof(feature)) ||
        !::WinHttpSetOption(req.h, WINHTTP_OPTION_RECEIVE_RESPONSE_TIMEOUT, &receive_response, sizeof(receive_response)) ||
        !::WinHttpSetOption(req.h, WINHTTP_OPTION_REDIRECT_POLICY, &policy, sizeof(policy)) ||
        !::WinHttpSetOption(req.h, WINHTTP_OPTION_MAX_RESPONSE_HEADER_SIZE, &header_cap, sizeof(header_cap)) ||
        !::WinHttpSetTimeouts(req.h, millis(request.connect_timeout + margin), millis(request.connect_timeout + margin),
                              millis(request.timeout + margin), millis(request.timeout + margin)))
        return fail(::GetLastError(), "cannot set up the request to " + authority);

    // One header per call (REPLACE takes one at a time): each added as given, an empty value too,
    // except User-Agent, which replaces the session's.
    for (const auto& h : request.headers) {
        const std::wstring line = platform::to_wide(h.name + ": " + h.value);
        const DWORD how = detail::iequals(h.name, "User-Agent") && !detail::trim(h.value).empty()
                              ? WINHTTP_ADDREQ_FLAG_ADD | WINHTTP_ADDREQ_FLAG_REPLACE
                              : WINHTTP_ADDREQ_FLAG_ADD;
        if (!::WinHttpAddRequestHeaders(req.h, line.c_str(), static_cast<DWORD>(line.size()), how))
            return fail(::GetLastError(), "cannot set the header " + h.name + " of the request to " + authority);
    }
    x->request_body = request.body;

    // From here cancel() reaches this exchange; the flag is checked after registering, so a
    // cancel() just before is not lost.
    {
        std::lock_guard<std::mutex> lock(mutex);
        current = x;
    }
    struct unregister {
        state& s;
        ~unregister() {
            std::lock_guard<std::mutex> lock(s.mutex);
            s.current.reset();
        }
    } unregister_guard{*this};
    if (is_cancelled()) return error(errc::cancelled, "request cancelled");

    enum class outcome { done, error_reported, cancel_seen, timed_out };
    // Waits for the step started last: its completion, cancel() or the deadline.
    auto wait_step = [&]() -> outcome {
        std::unique_lock<std::mutex> lock(x->mutex);
        for (;;) {
            if (x->cancelled) return outcome::cancel_seen;
            if (x->signalled) {
                x->signalled = false;
                return x->status == WINHTTP_CALLBACK_STATUS_REQUEST_ERROR ? outcome::error_reported : outcome::done;
            }
            const auto deadline = x->connected.load() ? total_deadline : connect_deadline;
            if (steady::now() >= deadline) return outcome::timed_out;
            x->changed.wait_until(lock, deadline);
        }
    };
    auto timed_out = [&]() -> error {
        const auto elapsed = std::chrono::duration_cast<milliseconds>(steady::now() - started).count();
        if (!x->connected.load())
            return error(errc::timeout,
                         "connect to " + authority + " timed out after " + std::to_string(elapsed) + " ms (connect_timeout " +
                             std::to_string(request.connect_timeout.count()) + " ms)",
                         network_failure::connect_timeout);
        return error(errc::timeout, "request timed out after " + std::to_string(elapsed) + " ms (total timeout " +
                                        std::to_string(request.timeout.count()) + " ms)");
    };
    auto count_connections = [&] { connections.fetch_add(x->connections.exchange(0), std::memory_order_relaxed); };
    // One asynchronous step: `start()` begins it (false: it failed at once), then the wait.
    auto step = [&](auto&& start) -> std::optional<error> {
        if (!start()) return fail(::GetLastError(), failed);
        switch (wait_step()) {
        case outcome::done: return std::nullopt;
        case outcome::cancel_seen: return error(errc::cancelled, "request cancelled");
        case outcome::timed_out: return timed_out();
        case outcome::error_reported: break;
        }
        DWORD code = 0;
        {
            std::lock_guard<std::mutex> lock(x->mutex);
            code = x->failure;
        }
        if (code == ERROR_WINHTTP_TIMEOUT) return timed_out();
        // A failure that comes once a deadline has passed is that deadline (WinHTTP may report
        // its own time-out as a broken connection).
        if (steady::now() >= (x->connected.load() ? total_deadline : connect_deadline)) return timed_out();
        return fail(code, failed);
    };

    const auto body_size = static_cast<DWORD>(x->request_body.size());
    void* body = x->request_body.empty() ? WINHTTP_NO_REQUEST_DATA : x->request_body.data();
    if (auto e = step([&] {
            return ::WinHttpSendRequest(req.h, WINHTTP_NO_ADDITIONAL_HEADERS, 0, body, body_size, body_size, context) != FALSE;
        })) {
        count_connections();
        return std::move(*e);
    }
    if (auto e = step([&] { return ::WinHttpReceiveResponse(req.h, nullptr) != FALSE; })) {
        count_connections();
        return std::move(*e);
    }
    count_connections();
    if (is_cancelled()) return error(errc::cancelled, "request cancelled");

    http_response response;
    DWORD status = 0;
    DWORD status_size = sizeof(status);
    if (!::WinHttpQueryHeaders(req.h, WINHTTP_QUERY_STATUS_CODE | WINHTTP_QUERY_FLAG_NUMBER, WINHTTP_HEADER_NAME_BY_INDEX,
                               &status, &status_size, WINHTTP_NO_HEADER_INDEX))
        return fail(::GetLastError(), "no status from " + authority);
    response.status = static_cast<int>(status);
    DWORD raw_size = 0;
    ::WinHttpQueryHeaders(req.h, WINHTTP_QUERY_RAW_HEADERS_CRLF, WINHTTP_HEADER_NAME_BY_INDEX, WINHTTP_NO_OUTPUT_BUFFER,
                          &raw_size, WINHTTP_NO_HEADER_INDEX);
    if (raw_size > 0) {
        std::wstring raw(raw_size / sizeof(wchar_t) + 1, L'\0');
        if (!::WinHttpQueryHeaders(req.h, WINHTTP_QUERY_RAW_HEADERS_CRLF, WINHTTP_HEADER_NAME_BY_INDEX, raw.data(),
                                   &raw_size, WINHTTP_NO_HEADER_INDEX))
            return fail(::GetLastError(), "cannot read the response headers from " + authority);
        raw.resize(raw_size / sizeof(wchar_t));
        const std::string text = platform::to_utf8(raw);
        if (text.size() > options.max_header_bytes)
            return error(errc::transport, "response headers passed " + std::to_string(options.max_header_bytes) + " bytes");
        std::string_view rest(text);
        bool first = true;  // the status line
        while (!rest.empty()) {
            const auto end = rest.find("\r\n");
            const auto line = rest.substr(0, end);
            rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
            if (first) {
                first = false;
                continue;
            }
            const auto colon = line.find(':');
            if (colon == std::string_view::npos || colon == 0) continue;
            response.headers.push_back(
                {std::string(detail::trim(line.substr(0, colon))), std::string(detail::trim(line.substr(colon + 1)))});
        }
    }
    // Content-Length, when the server sent a valid one and the status may have a body (not 1xx,
    // 204 or 304: libcurl's rule; never the answer to a HEAD, which states the GET's length).
    std::optional<std::uint64_t> promised;
    const bool may_have_body = request.method != http_method::head && response.status >= 200 && response.status != 204 &&
                               response.status != 304;
    if (const auto* length = response.header("Content-Length"); length != nullptr && may_have_body) {
        std::uint64_t n = 0;
        bool digits = !length->empty();
        for (const char c : *length) {
            const auto d = static_cast<std::uint64_t>(c - '0');
            if (c < '0' || c > '9' || n > ((std::numeric_limits<std::uint64_t>::max)() - d) / 10) {
                digits = false;
                break;
            }
            n = n * 10 + d;
        }
        if (digits) promised = n;
        if (digits && n > request.max_body)
            return error(errc::body_too_large,
                         "response Content-Length is above the cap of " + std::to_string(request.max_body) + " bytes",
                         response.status);
    }

    for (;;) {
        if (auto e = step([&] { return ::WinHttpQueryDataAvailable(req.h, nullptr) != FALSE; })) return std::move(*e);
        DWORD available = 0;
        {
            std::lock_guard<std::mutex> lock(x->mutex);
            available = x->length;
        }
        if (available == 0) break;  // the end of the body
        const DWORD want = (std::min)(available, static_cast<DWORD>(x->buffer.size()));
        if (auto e = step([&] { return ::WinHttpReadData(req.h, x->buffer.data(), want, nullptr) != FALSE; }))
            return std::move(*e);
        DWORD got = 0;
        {
            std::lock_guard<std::mutex> lock(x->mutex);
            got = x->length;
        }
        if (got == 0) break;
        if (response.body.size() + got > request.max_body)
            return error(errc::body_too_large,
                         "response body passed the cap of " + std::to_string(request.max_body) + " bytes", response.status);
        response.body.append(x->buffer.data(), got);
    }
    if (is_cancelled()) return error(errc::cancelled, "request cancelled");
    // WinHTTP ends a body at a closed connection without saying so: a short body is the
    // server closing mid-body (libcurl's "transfer closed with N bytes remaining").
    if (promised && response.body.size() < *promised) {
        error e(errc::transport,
                "request to " + authority + " failed: the connection closed after " + std::to_string(response.body.size()) +
                    " of " + std::to_string(*promised) + " body bytes",
                response.status);
        e.network = network_failure::reset;
        return e;
    }
    return response;
}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
