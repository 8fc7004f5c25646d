// SPDX-License-Identifier: MIT
#pragma once

// Streaming: the optional part of the transport concept (transport.hpp), a response delivered
// message by message as it arrives, for etcd's watch. Its own header, so that a program that never
// streams never parses it. The default transport's streaming counterpart (curl_stream_transport,
// not on Windows: there the fleet budget polls) comes with it.

#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <string_view>
#include <type_traits>
#include <utility>

FOREWARN_BEGIN_NAMESPACE

/// Receives one message of a stream: one line of the body, without its line end (empty lines are
/// skipped). Return false to end the stream: send_stream() then returns the response, no error.
/// It must not throw (a throw ends the stream with errc::handler_failed).
using stream_sink = detail::function_ref<bool(std::string_view)>;

/**
 * A stream transport sends a request whose answer is read as it arrives:
 *   result<http_response> t.send_stream(const http_request& r, stream_sink on_message);
 *   void t.cancel() noexcept;  void t.reset() noexcept;  // as for a transport
 *
 * A 2xx answer's body is cut at each '\n' and each line handed to `on_message` as soon as it is
 * whole; the response returned holds the status and headers and an empty body. The stream ends
 * when the server ends the body (a last line without '\n' is delivered too), when `on_message`
 * returns false, or with an error. Any other status: the body is read whole (at most r.max_body)
 * and returned as send() would, no message delivered.
 *
 * Two of the request's limits mean something else for a stream, which may rightly last hours:
 *   r.timeout   the longest silence: no byte for this long ends it with errc::timeout (no total
 *               timeout; a peer that vanished without a word is noticed this way, so ask the
 *               server for a heartbeat more frequent than this, as etcd's progress_notify is)
 *   r.max_body  the longest message: a longer line ends it with errc::body_too_large
 * A connection cut in the middle of a message ends it with errc::transport; the part of the
 * message already read is never delivered. cancel() ends it with errc::cancelled.
 */
template <class T, class = void>
struct is_stream_transport : std::false_type {};

template <class T>
struct is_stream_transport<T, std::void_t<decltype(std::declval<T&>().send_stream(std::declval<const http_request&>(),
                                                                                   std::declval<stream_sink>())),
                                          decltype(std::declval<T&>().cancel()), decltype(std::declval<T&>().reset())>>
    : std::bool_constant<std::is_same_v<decltype(std::declval<T&>().send_stream(std::declval<const http_request&>(),
                                                                                std::declval<stream_sink>())),
                                        result<http_response>> &&
                         noexcept(std::declval<T&>().cancel()) && noexcept(std::declval<T&>().reset())> {};

template <class T>
inline constexpr bool is_stream_transport_v = is_stream_transport<T>::value;

/**
 * The stream transport a client of `Transport` streams on, made from its transport `t` with
 * from(t): a separate object with its own connection and its own (sticky) cancel(), so that a
 * stream on one thread never cancels the client's other requests, and the reverse.
 *   - `Transport` itself when it is a stream transport (a copy of `t`);
 *   - curl_stream_transport for curl_transport (the same options);
 *   - none otherwise: `type` is void, and the caller falls back to asking again (polling).
 */
template <class Transport, class = void>
struct stream_transport_of {
    using type = void;
};

template <class Transport>
struct stream_transport_of<Transport, std::enable_if_t<is_stream_transport_v<Transport>>> {
    using type = Transport;
    static Transport from(const Transport& t) { return t; }
};

/// True when a client of `Transport` can stream (stream_transport_of names a type).
template <class Transport>
inline constexpr bool can_stream_v = !std::is_void_v<typename stream_transport_of<Transport>::type>;

namespace detail {
/// Stands in for a stream transport where `Transport` has none: nothing to cancel.
struct no_stream {
    void cancel() noexcept {}
    void reset() noexcept {}
};
template <class Transport>
using stream_or_none_t =
    std::conditional_t<can_stream_v<Transport>, typename stream_transport_of<Transport>::type, no_stream>;
/// The stream transport that goes with `t`, or a no_stream.
template <class Transport>
stream_or_none_t<Transport> make_stream_for(const Transport& t) {
    if constexpr (can_stream_v<Transport>)
        return stream_transport_of<Transport>::from(t);
    else
        return no_stream{};
}
}  // namespace detail

FOREWARN_END_NAMESPACE

#if !defined(_WIN32)
#include <forewarn/transport/curl_stream.hpp>
#endif
