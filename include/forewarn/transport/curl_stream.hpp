// SPDX-License-Identifier: MIT
#pragma once

// curl_stream_transport: curl_transport's streaming counterpart (transport/stream.hpp), for etcd's
// watch. Included by <forewarn/transport/stream.hpp> where libcurl is the default transport.

#include <forewarn/config.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/transport/stream.hpp>

#include <atomic>
#include <memory>
#include <string>

FOREWARN_BEGIN_NAMESPACE

/**
 * Streams over libcurl (transport/stream.hpp has the contract): one connection per object, no
 * proxy unless the options say so, no redirects, http and https only, TCP keepalive on (a peer
 * that vanished on a real network is also noticed by the kernel), cancellable from any thread
 * within milliseconds. Made from a curl_transport's options by stream_transport_of.
 *
 * @code
 * forewarn::curl_stream_transport t;
 * forewarn::http_request req;
 * req.method = forewarn::http_method::post;
 * req.url = "http://127.0.0.1:2379/v3/watch";
 * req.body = R"({"create_request":{"key":"YQ=="}})";
 * req.timeout = std::chrono::minutes(1);  // the longest silence
 * auto r = t.send_stream(req, [](std::string_view line) { return line.find("DELETE") == line.npos; });
 * @endcode
 */
class curl_stream_transport {
public:
    curl_stream_transport();
    explicit curl_stream_transport(curl_transport_options options);
    /// A new transport with the same options and its own connection; not cancelled.
    curl_stream_transport(const curl_stream_transport& other);
    curl_stream_transport& operator=(const curl_stream_transport& other);
    curl_stream_transport(curl_stream_transport&&) noexcept;
    curl_stream_transport& operator=(curl_stream_transport&&) noexcept;
    ~curl_stream_transport();

    /// Sends `request` and hands each line of a 2xx answer to `on_message` as it arrives.
    result<http_response> send_stream(const http_request& request, stream_sink on_message);

    /// Ends the stream in progress, and every later one until reset(), with errc::cancelled.
    void cancel() noexcept;
    void reset() noexcept;

    const curl_transport_options& options() const noexcept;

private:
    struct state;
    std::unique_ptr<state> state_;
};

static_assert(is_stream_transport_v<curl_stream_transport>, "curl_stream_transport must satisfy the stream contract");

template <>
struct stream_transport_of<curl_transport, void> {
    using type = curl_stream_transport;
    static curl_stream_transport from(const curl_transport& t) { return curl_stream_transport(t.options()); }
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/transport/curl_stream-inl.hpp>
#endif
