// SPDX-License-Identifier: MIT
#pragma once

// The Windows transport: WinHTTP, part of every Windows since XP, so that a program on a Windows
// VM needs no libcurl. <windows.h> and <winhttp.h> stay in the definitions (-inl), not here.

#include <forewarn/config.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#if !defined(_WIN32)
#error "forewarn::winhttp_transport is for Windows; elsewhere use forewarn::curl_transport"
#endif

FOREWARN_BEGIN_NAMESPACE

/// Settings of a winhttp_transport that do not change per request (those are in http_request).
struct winhttp_transport_options {
    std::string user_agent = "forewarn/" FOREWARN_VERSION_STRING;  ///< sent unless the request sets User-Agent
    std::size_t max_header_bytes = std::size_t(64) << 10;  ///< a longer response header block fails
};

namespace detail {
struct winhttp_exchange;  // one request's state, shared with WinHTTP's callbacks (-inl)
}

/**
 * The default transport on Windows: WinHTTP in asynchronous mode, one session (and its pool of
 * kept-alive connections) per transport, cancellable from any thread within milliseconds, also
 * in the middle of a hanging GET.
 *
 * It keeps curl_transport's contract to the letter: never a proxy (WINHTTP_ACCESS_TYPE_NO_PROXY,
 * whatever the system's proxy settings say), redirects never followed, only http and https, the
 * body capped at request.max_body while it is read, connect and total timeouts per request, no
 * X-Forwarded-For. cancel() does not rely on WinHTTP aborting the socket (closing a request
 * handle does not interrupt a pending receive promptly): the sending thread waits on the
 * transport's own signal, which cancel() raises at once; the request handle is then closed and
 * WinHTTP's late callbacks reach only state that lives until its last one (HANDLE_CLOSING), even
 * when the transport itself is gone. See docs/windows.md.
 */
class winhttp_transport {
public:
    winhttp_transport();
    explicit winhttp_transport(winhttp_transport_options options);
    /// A new transport with the same options and its own session; not cancelled.
    winhttp_transport(const winhttp_transport& other);
    winhttp_transport& operator=(const winhttp_transport& other);
    /// Moves the session; the moved-from transport fails every send with errc::invalid_argument.
    winhttp_transport(winhttp_transport&&) noexcept;
    winhttp_transport& operator=(winhttp_transport&&) noexcept;
    ~winhttp_transport();

    /// Sends one request and waits for the whole answer. Any HTTP status is a success.
    result<http_response> send(const http_request& request);
    /// Makes the in-flight send, and every later one until reset(), return errc::cancelled.
    /// Thread-safe: this is how a poller's stop() interrupts a hanging GET.
    void cancel() noexcept;
    /// Clears a cancel() so the transport can be used again.
    void reset() noexcept;
    /// Whether cancel() was called since the last reset().
    bool cancelled() const noexcept { return state_ && state_->cancelled.load(std::memory_order_acquire); }
    /// TCP connections opened so far: stays 1 while keep-alive works.
    std::size_t connections_opened() const noexcept;
    /// The options this transport was built with (copies get the same).
    const winhttp_transport_options& options() const noexcept;

private:
    struct state {
        winhttp_transport_options options;
        void* session = nullptr;  // HINTERNET
        unsigned long open_error = 0;  // GetLastError() of a failed WinHttpOpen
        std::atomic<bool> cancelled{false};
        std::atomic<std::size_t> connections{0};
        std::mutex mutex;  // guards `current`
        std::shared_ptr<detail::winhttp_exchange> current;  // the send in flight, for cancel()

        explicit state(winhttp_transport_options o);
        state(const state&) = delete;
        state& operator=(const state&) = delete;
        ~state();
        bool is_cancelled() const noexcept { return cancelled.load(std::memory_order_acquire); }
        result<http_response> send(const http_request& request);
    };
    std::unique_ptr<state> state_;
};

static_assert(is_transport_v<winhttp_transport>, "winhttp_transport must satisfy the transport contract");

FOREWARN_END_NAMESPACE

#define FOREWARN_WINHTTP_TRANSPORT_DEFINED
#include <forewarn/detail/extern_templates.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/transport/winhttp-inl.hpp>
#endif
