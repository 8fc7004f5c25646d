// SPDX-License-Identifier: MIT
#pragma once

// A public API's lane beside a metadata client: its own transport, made from the client's by
// public_api_transport (the environment's proxy, the system's CAs: never the metadata service's
// settings), and its own backoff sleep, cancelled and reset with the client. A client's calls to
// the cloud's public API (an approval, a heartbeat) go through one.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

template <class Transport>
struct public_api_lane {
    public_api_lane(const Transport& metadata, const forewarn::clock& c)
        : transport(public_api_transport<Transport>::from(metadata)), sleep(c) {}

    result<http_response> send(const http_request& r) { return transport.send(r); }
    /// The call in flight and its backoff return errc::cancelled; sticky until reset().
    void cancel() noexcept {
        sleep.interrupt();
        transport.cancel();
    }
    void reset() noexcept {
        sleep.reset();
        transport.reset();
    }

    Transport transport;
    interruptible_sleep sleep;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
