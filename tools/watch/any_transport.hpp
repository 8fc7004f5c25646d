// SPDX-License-Identifier: MIT
// A transport of any type behind one value, the seam of the agent's own senders: the webhook and
// the Kubernetes API client take one, so that their tests hand them
// forewarn::testing::fake_transport where the agent hands them libcurl's (or WinHTTP's). Copies
// share the transport. Beside it, the retry policy both senders retry through.
#pragma once

#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>
#include <forewarn/transport/retry.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <utility>

namespace watch {

class any_transport {
public:
    template <class Transport>
    static any_transport of(Transport t) {
        static_assert(forewarn::is_transport_v<Transport>, "any_transport::of takes a forewarn transport");
        auto held = std::make_shared<Transport>(std::move(t));
        any_transport out;
        out.send_ = [held](const forewarn::http_request& r) { return held->send(r); };
        out.cancel_ = [held] { held->cancel(); };
        return out;
    }

    forewarn::result<forewarn::http_response> send(const forewarn::http_request& r) const { return send_(r); }
    /// The request in flight returns errc::cancelled; sticky, as the transport's own cancel().
    void cancel() const { cancel_(); }

private:
    std::function<forewarn::result<forewarn::http_response>(const forewarn::http_request&)> send_;
    std::function<void()> cancel_;
};

/// The agent's senders' retries (the library's retry_policy, any HTTP service's rules: 429, 5xx, a
/// failed connection, a timeout): `attempts` tries, the pause from `first` doubled up to `most`,
/// without jitter (the log says each pause), and without a budget or a time limit across calls
/// (each call gets its attempts; the caller's own deadline bounds it).
forewarn::retry_policy sender_retries(int attempts, std::chrono::milliseconds first, std::chrono::milliseconds most);

}  // namespace watch
