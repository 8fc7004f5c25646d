// SPDX-License-Identifier: MIT
#pragma once

// What every cloud's client options hold: each cloud's `client_options` derives from
// `client_options_base` and adds its own intervals, timeouts and settings.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/log.hpp>
#include <forewarn/transport/retry.hpp>

#include <chrono>
#include <cstddef>
#include <string>

FOREWARN_BEGIN_NAMESPACE

/// The options every client takes (each cloud's client_options derives from it). Plain members:
/// set what you need.
struct client_options_base {
    /// The service's base URL, such as "http://169.254.169.254". Empty: the cloud's variables
    /// (its facts' endpoint_variables, in order), else its own address; each cloud's
    /// client_options says which.
    std::string endpoint;
    /// The TCP connect timeout of every request (a cloud's client_options may default it lower).
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};
    std::size_t max_body = std::size_t(1) << 20;  ///< a longer answer fails with errc::body_too_large
    /// Backoff, attempts and budget. Which statuses are retried is the cloud's rule (its
    /// client_options says).
    retry_options retry;
    /// Share the process-wide per-host rate limiter (5 requests in any second, the metadata
    /// services' limit).
    bool rate_limit = true;
    /// This VM's name as the events name it (a name in their Resources, the instance's name or its
    /// id, as the cloud's client_options says). Empty: identity() asks the metadata. The one place
    /// a VM's name is set.
    std::string self_name;
    /// The time line every wait of this client (and of a poller over it) runs on.
    forewarn::clock clock;
    /// Where this client (and a poller over it) logs: each request at debug (never a token),
    /// retries at info.
    forewarn::logger log;
};

FOREWARN_END_NAMESPACE
