// SPDX-License-Identifier: MIT
// forewarn-watch's metrics and health: counters kept as the agent works, and a small HTTP/1.1
// server (--metrics-listen HOST:PORT) on a thread of its own that answers GET /metrics in
// Prometheus' text format and GET /healthz. It sleeps in poll() until a connection comes or it
// is stopped (a loopback socket wakes it): no periodic wake-up. Sockets through platform/sockets.hpp
// (POSIX or Winsock). One request per connection; a request head
// over 8 KiB, a method other than GET or an unknown path gets 400, 405 or 404, never a crash.
#pragma once

#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/poller/health.hpp>

#include "platform/sockets.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace watch {

/// What the node's drains did (--kubernetes): the Kubernetes room counts, metrics writes them.
struct drain_stats {
    std::size_t drained = 0;    ///< drains that ended with every evicted pod gone
    std::size_t timed_out = 0;  ///< drains that reached their deadline with pods left
    double seconds = 0;         ///< the ended drains' time, summed
    std::size_t refused = 0;    ///< evictions a PodDisruptionBudget refused
    std::size_t pods_left = 0;  ///< pods left at the deadlines
};

/// What forewarn-watch counts beside the poller's own health figures. Thread-safe.
class metrics {
public:
    void poll_failed(std::string_view kind);
    void change(std::string_view kind, std::string_view type);
    void would_approve(std::size_t n);
    void fleet_slot(std::string_view group, std::string_view state);
    void webhook(std::string_view result, int retries);
    void hook_ran(std::string_view hook, std::string_view result, std::chrono::milliseconds took);

    /// An event of this VM is over and its pause was measured: observed against announced.
    void pause(std::string_view type, const forewarn::observed_pause& seen, std::optional<std::chrono::seconds> announced);

    /// Healthy: a poll succeeded within `max_age`; before the first one, the agent's start
    /// counts as one, so a fresh agent has `max_age` to make it.
    bool healthy(const forewarn::poller_health& h, std::chrono::seconds max_age) const;

    /// The text exposition format (version 0.0.4): the poller's health, the last document's
    /// events, what forewarn-watch counted itself, and the node's drains when there is a node.
    std::string exposition(std::string_view cloud, const forewarn::poller_health& h, const forewarn::document& last,
                           bool ready, const std::optional<drain_stats>& drains = std::nullopt) const;

private:
    // A Prometheus histogram in seconds: cumulative counts per upper bound.
    struct seconds_histogram {
        static constexpr std::array<double, 12> bounds{0.1, 0.25, 0.5, 1, 2, 5, 9, 15, 30, 60, 300, 900};
        std::array<long long, bounds.size()> below{};
        long long count = 0;
        double sum = 0;
        void add(double v);
    };
    mutable std::mutex mutex_;
    std::map<std::string, seconds_histogram> observed_, announced_;
    std::map<std::string, long long> failures_;
    std::map<std::pair<std::string, std::string>, long long> changes_, hook_runs_;
    std::map<std::string, std::pair<double, long long>> hook_seconds_;
    long long would_approve_ = 0;
    std::map<std::string, long long> webhooks_;
    std::string slot_group_, slot_state_ = "none";
    std::chrono::system_clock::time_point slot_since_{};
    long long webhook_retries_ = 0;
    std::chrono::system_clock::time_point started_ = std::chrono::system_clock::now();
};

/// The /metrics and /healthz server.
class metrics_server {
public:
    using page_fn = std::function<std::pair<int, std::string>(std::string_view path)>;

    explicit metrics_server(page_fn pages) : pages_(std::move(pages)) {}
    metrics_server(const metrics_server&) = delete;
    metrics_server& operator=(const metrics_server&) = delete;
    ~metrics_server() { stop(); }

    /// Listens on HOST:PORT (port 0: any free one) and starts the thread; the error in words.
    std::string start(const std::string& host_port);
    int port() const { return port_; }
    void stop();

private:
    void serve();
    // One request, read for at most 2 s (a client that says nothing cannot hold the server).
    void answer(net::socket_t c);

    page_fn pages_;
    net::socket_t listen_fd_ = net::no_socket;
    net::waker waker_;
    int port_ = 0;
    std::thread thread_;
};

}  // namespace watch
