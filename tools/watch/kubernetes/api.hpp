// SPDX-License-Identifier: MIT
#pragma once

// One API server's requests for forewarn-watch: over forewarn's libcurl transport (TLS verified
// against the connection's CA, the bearer token in `Authorization`, added here: headers are the
// client's business), retried with backoff on 429, 5xx and a failed connection (the library's
// retry_policy, a 429's Retry-After its wait), and sent again
// once with a fresh token after a 401. The token never reaches a log or an error. The transport
// is a seam (api_transport): a test gives forewarn::testing::fake_transport and drives the node's
// actions and the drain with no server.

#include "../any_transport.hpp"
#include "connection.hpp"

#include <forewarn/clock.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace watch::kubernetes {

// The room's words for forewarn's results, errors and methods, said once for every file that
// talks to the API server.
using forewarn::errc;
using forewarn::error;
using forewarn::http_method;
using forewarn::result;

/// The patch types of the API server (each write in node.cpp names its own).
inline constexpr std::string_view json_patch = "application/json-patch+json";
inline constexpr std::string_view merge_patch = "application/merge-patch+json";
inline constexpr std::string_view strategic_merge_patch = "application/strategic-merge-patch+json";
inline constexpr std::string_view json_body = "application/json";

struct api_options {
    std::chrono::milliseconds timeout{std::chrono::seconds(10)};  ///< one request, whole
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(3)};
    int attempts = 4;                                     ///< per call, on 429, 5xx or a failed connection
    std::chrono::milliseconds backoff{std::chrono::milliseconds(250)};  ///< doubled each time, at most 4 s
    std::size_t max_body = std::size_t(16) << 20;         ///< a node's pod list is the largest answer
    forewarn::clock clock;                                ///< every wait (tests give a manual one)
};

/// An answer: any status (the caller reads 404, 409, 429 as it must).
struct api_answer {
    int status = 0;
    std::string body;
    bool ok() const noexcept { return status >= 200 && status <= 299; }
};

/// What the API client sends through: any forewarn transport (any_transport.hpp), held shared.
/// The agent's is forewarn's libcurl transport made for the connection (curl_transport_for); a
/// test's a fake_transport it keeps a copy of.
using api_transport = any_transport;
/// forewarn's libcurl transport for `c`: its CA, its client certificate, forewarn's User-Agent.
api_transport curl_transport_for(const connection& c);

class api_client {
public:
    /// Over forewarn's libcurl transport made for `c`.
    explicit api_client(connection c, api_options o = {});
    /// Over `t` (a test's fake_transport, say).
    api_client(connection c, api_transport t, api_options o = {});

    /// One call: `path` from the server's root ("/api/v1/nodes/n1"), a body with its type (a
    /// patch type, or json_body). Transport failures left after the retries are the error.
    /// `answer_429`: a 429 is the answer, not retried (an eviction's: a PodDisruptionBudget
    /// forbids it now, and the drain decides when to ask again).
    forewarn::result<api_answer> call(forewarn::http_method method, const std::string& path, const std::string& body = {},
                                      std::string_view content_type = {}, bool answer_429 = false);

    /// A stop from any thread: the call under way and every later one end with errc::cancelled.
    void cancel() noexcept;
    const connection& where() const noexcept { return connection_; }
    /// Requests sent, retries included (the benchmarks' API requests per event).
    std::size_t requests() const noexcept { return requests_.load(); }

private:
    connection connection_;
    api_options options_;
    api_transport transport_;
    forewarn::interruptible_sleep sleep_;
    std::mutex m_;  // one call at a time on the transport
    std::atomic<std::size_t> requests_{0};
};

/// An answer that is not what the caller wanted, as an error: "PATCH node n1: 403 Forbidden:
/// <the Status object's message>". The status is in error::http_status.
forewarn::error answer_error(std::string_view what, const api_answer& a);

/// The `message` of a Kubernetes Status object (what the server says went wrong), or "".
std::string status_message(std::string_view body);

}  // namespace watch::kubernetes
