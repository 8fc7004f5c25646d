// SPDX-License-Identifier: MIT
// forewarn-watch's metrics and health (metrics.hpp): the counters' exposition in Prometheus' text
// format, and the /metrics and /healthz server's thread.
#include "metrics.hpp"

#include "prometheus_text.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

namespace watch {

void metrics::poll_failed(std::string_view kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++failures_[std::string(kind)];
}

void metrics::change(std::string_view kind, std::string_view type) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++changes_[{std::string(kind), std::string(type)}];
}

void metrics::would_approve(std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    would_approve_ += static_cast<long long>(n);
}

void metrics::fleet_slot(std::string_view group, std::string_view state) {
    std::lock_guard<std::mutex> lock(mutex_);
    slot_group_ = std::string(group);
    slot_state_ = std::string(state);
    slot_since_ = std::chrono::system_clock::now();
}

void metrics::webhook(std::string_view result, int retries) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++webhooks_[std::string(result)];
    webhook_retries_ += retries;
}

void metrics::hook_ran(std::string_view hook, std::string_view result, std::chrono::milliseconds took) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++hook_runs_[{std::string(hook), std::string(result)}];
    auto& d = hook_seconds_[std::string(hook)];
    d.first += static_cast<double>(took.count()) / 1000.0;
    ++d.second;
}

void metrics::pause(std::string_view type, const forewarn::observed_pause& seen, std::optional<std::chrono::seconds> announced) {
    std::lock_guard<std::mutex> lock(mutex_);
    observed_[std::string(type)].add(std::chrono::duration<double>(seen.longest).count());
    if (announced && announced->count() >= 0) announced_[std::string(type)].add(static_cast<double>(announced->count()));
}

bool metrics::healthy(const forewarn::poller_health& h, std::chrono::seconds max_age) const {
    const auto now = std::chrono::system_clock::now();
    const auto since = h.last_success ? *h.last_success : started_;
    return now - since <= max_age;
}

std::string metrics::exposition(std::string_view cloud, const forewarn::poller_health& h, const forewarn::document& last,
                                bool ready, const std::optional<drain_stats>& drains) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string o;
    const std::string c = "cloud=\"" + prometheus_label(cloud) + "\"";
    auto line = [&](const std::string& name, const std::string& labels, double v) { prometheus_sample(o, name, labels, v); };
    o += "# HELP forewarn_polls_total Polls of the metadata service, by result.\n# TYPE forewarn_polls_total counter\n";
    line("forewarn_polls_total", c + ",result=\"ok\"", static_cast<double>(h.polls));
    line("forewarn_polls_total", c + ",result=\"error\"", static_cast<double>(h.failures));
    o += "# HELP forewarn_errors_total Errors reported (failed polls, approvals, hooks' journal, ...), by kind.\n"
         "# TYPE forewarn_errors_total counter\n";
    for (const auto& [kind, n] : failures_)
        line("forewarn_errors_total", c + ",kind=\"" + prometheus_label(kind) + "\"", static_cast<double>(n));
    o += "# HELP forewarn_changes_total Changes delivered, by kind and event type.\n# TYPE forewarn_changes_total counter\n";
    for (const auto& [k, n] : changes_)
        line("forewarn_changes_total", c + ",change=\"" + prometheus_label(k.first) + "\",type=\"" + prometheus_label(k.second) + "\"",
             static_cast<double>(n));
    o += "# HELP forewarn_events Events in the last document, by type and status.\n# TYPE forewarn_events gauge\n";
    std::map<std::pair<std::string, std::string>, long long> events;
    for (const auto& e : last.events)
        ++events[{std::string(forewarn::to_string(e.type)), std::string(forewarn::to_string(e.status))}];
    for (const auto& [k, n] : events)
        line("forewarn_events", c + ",type=\"" + prometheus_label(k.first) + "\",status=\"" + prometheus_label(k.second) + "\"",
             static_cast<double>(n));
    o += "# HELP forewarn_approvals_total Approval requests this agent sent and the service accepted.\n"
         "# TYPE forewarn_approvals_total counter\n";
    line("forewarn_approvals_total", c, static_cast<double>(h.approvals));
    o += "# HELP forewarn_awaiting_approval Events this agent wants approved and has not yet.\n"
         "# TYPE forewarn_awaiting_approval gauge\n";
    line("forewarn_awaiting_approval", c, static_cast<double>(h.awaiting_approval.size()));
    o += "# HELP forewarn_dry_run_would_approve_total Events a dry run would have approved.\n"
         "# TYPE forewarn_dry_run_would_approve_total counter\n";
    line("forewarn_dry_run_would_approve_total", c, static_cast<double>(would_approve_));
    o += "# HELP forewarn_hook_runs_total Hook runs, by hook and result.\n# TYPE forewarn_hook_runs_total counter\n";
    for (const auto& [k, n] : hook_runs_)
        line("forewarn_hook_runs_total", c + ",hook=\"" + prometheus_label(k.first) + "\",result=\"" + prometheus_label(k.second) + "\"",
             static_cast<double>(n));
    o += "# HELP forewarn_hook_duration_seconds Time hooks ran.\n# TYPE forewarn_hook_duration_seconds summary\n";
    for (const auto& [hook, d] : hook_seconds_) {
        line("forewarn_hook_duration_seconds_sum", c + ",hook=\"" + prometheus_label(hook) + "\"", d.first);
        line("forewarn_hook_duration_seconds_count", c + ",hook=\"" + prometheus_label(hook) + "\"", static_cast<double>(d.second));
    }
    o += "# HELP forewarn_webhook_deliveries_total Changes the webhook delivered (ok), gave up on (failed) or dropped "
         "(its queue full).\n# TYPE forewarn_webhook_deliveries_total counter\n";
    for (const auto& [result, n] : webhooks_)
        line("forewarn_webhook_deliveries_total", c + ",result=\"" + prometheus_label(result) + "\"", static_cast<double>(n));
    o += "# HELP forewarn_webhook_retries_total Webhook requests sent again after a failure.\n"
         "# TYPE forewarn_webhook_retries_total counter\n";
    line("forewarn_webhook_retries_total", c, static_cast<double>(webhook_retries_));
    auto histogram = [&](const std::string& name, const std::map<std::string, seconds_histogram>& by_type) {
        for (const auto& [type, hist] : by_type) {
            const std::string t = c + ",type=\"" + prometheus_label(type) + "\"";
            for (std::size_t i = 0; i < seconds_histogram::bounds.size(); ++i) {
                char le[32];
                std::snprintf(le, sizeof le, "%g", seconds_histogram::bounds[i]);
                line(name + "_bucket", t + ",le=\"" + le + "\"", static_cast<double>(hist.below[i]));
            }
            line(name + "_bucket", t + ",le=\"+Inf\"", static_cast<double>(hist.count));
            line(name + "_sum", t, hist.sum);
            line(name + "_count", t, static_cast<double>(hist.count));
        }
    };
    o += "# HELP forewarn_event_pause_observed_seconds The longest pause this VM lived through while an event of "
         "it was Started (its monotonic or wall clock), by event type.\n# TYPE forewarn_event_pause_observed_seconds histogram\n";
    histogram("forewarn_event_pause_observed_seconds", observed_);
    o += "# HELP forewarn_event_duration_announced_seconds The impact the service announced (DurationInSeconds) for the "
         "same events, when it said one.\n# TYPE forewarn_event_duration_announced_seconds histogram\n";
    histogram("forewarn_event_duration_announced_seconds", announced_);
    if (!slot_group_.empty()) {
        const std::string g = c + ",group=\"" + prometheus_label(slot_group_) + "\"";
        o += "# HELP forewarn_fleet_slot This VM's place in its fleet group's budget: 1 for its state now.\n"
             "# TYPE forewarn_fleet_slot gauge\n";
        for (const char* st : {"none", "waiting", "holding", "forced"})
            line("forewarn_fleet_slot", g + ",state=\"" + st + "\"", slot_state_ == st ? 1.0 : 0.0);
        o += "# HELP forewarn_fleet_slot_since_timestamp_seconds When the slot last changed state (Unix time).\n"
             "# TYPE forewarn_fleet_slot_since_timestamp_seconds gauge\n";
        line("forewarn_fleet_slot_since_timestamp_seconds", g, std::chrono::duration<double>(slot_since_.time_since_epoch()).count());
    }
    o += "# HELP forewarn_ready Whether this VM should take traffic (1) or not (0): what /readyz says.\n"
         "# TYPE forewarn_ready gauge\n";
    line("forewarn_ready", c, ready ? 1.0 : 0.0);
    o += "# HELP forewarn_last_successful_poll_timestamp_seconds When a poll last succeeded (Unix time; 0: never).\n"
         "# TYPE forewarn_last_successful_poll_timestamp_seconds gauge\n";
    line("forewarn_last_successful_poll_timestamp_seconds", c,
         h.last_success ? std::chrono::duration<double>(h.last_success->time_since_epoch()).count() : 0.0);
    if (drains) {
        const drain_stats& d = *drains;
        o += "# HELP forewarn_kubernetes_drains_total Drains of the node that ended, by outcome.\n"
             "# TYPE forewarn_kubernetes_drains_total counter\n";
        line("forewarn_kubernetes_drains_total", c + ",outcome=\"drained\"", static_cast<double>(d.drained));
        line("forewarn_kubernetes_drains_total", c + ",outcome=\"timed_out\"", static_cast<double>(d.timed_out));
        o += "# HELP forewarn_kubernetes_drain_duration_seconds Time the ended drains took.\n"
             "# TYPE forewarn_kubernetes_drain_duration_seconds summary\n";
        line("forewarn_kubernetes_drain_duration_seconds_sum", c, d.seconds);
        line("forewarn_kubernetes_drain_duration_seconds_count", c, static_cast<double>(d.drained + d.timed_out));
        o += "# HELP forewarn_kubernetes_evictions_refused_total Evictions a PodDisruptionBudget refused (each time).\n"
             "# TYPE forewarn_kubernetes_evictions_refused_total counter\n";
        line("forewarn_kubernetes_evictions_refused_total", c, static_cast<double>(d.refused));
        o += "# HELP forewarn_kubernetes_pods_left_total Pods still on the node when a drain reached its deadline.\n"
             "# TYPE forewarn_kubernetes_pods_left_total counter\n";
        line("forewarn_kubernetes_pods_left_total", c, static_cast<double>(d.pods_left));
    }
    return o;
}

void metrics::seconds_histogram::add(double v) {
    for (std::size_t i = 0; i < bounds.size(); ++i)
        if (v <= bounds[i]) ++below[i];
    ++count;
    sum += v;
}

std::string metrics_server::start(const std::string& host_port) {
    if (!net::start()) return "--metrics-listen " + host_port + ": cannot start the network (" + net::last_error() + ")";
    const auto colon = host_port.rfind(':');
    std::string host = host_port.substr(0, colon), port = host_port.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found); rc != 0)
        return "--metrics-listen " + host_port + ": " + gai_strerror(rc);
    std::string err = "--metrics-listen " + host_port + ": no address to listen on";
    for (addrinfo* a = found; a; a = a->ai_next) {
        const net::socket_t fd = net::open_socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd == net::no_socket) continue;
        net::reuse_address(fd);
        if (::bind(fd, a->ai_addr, static_cast<socklen_t>(a->ai_addrlen)) == 0 && ::listen(fd, 16) == 0) {
            listen_fd_ = fd;
            break;
        }
        err = "--metrics-listen " + host_port + ": " + net::last_error();
        net::close_socket(fd);
    }
    ::freeaddrinfo(found);
    if (listen_fd_ == net::no_socket) return err;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
        port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    if (auto e = waker_.open(); !e.empty()) return e;
    thread_ = std::thread([this] { serve(); });
    return {};
}

void metrics_server::stop() {
    if (thread_.joinable()) {
        waker_.wake();
        thread_.join();
    }
    if (listen_fd_ != net::no_socket) net::close_socket(listen_fd_);
    listen_fd_ = net::no_socket;
    waker_.close();
}

void metrics_server::serve() {
    for (;;) {
        net::pollfd_t fds[2] = {{listen_fd_, POLLIN, 0}, {waker_.socket(), POLLIN, 0}};
        if (net::poll(fds, 2, -1) < 0) {
            if (net::interrupted()) continue;
            return;
        }
        if (fds[1].revents) return;
        if (!(fds[0].revents & POLLIN)) continue;
        const net::socket_t c = net::accept_socket(listen_fd_);
        if (c == net::no_socket) continue;
        answer(c);
        net::close_socket(c);
    }
}

void metrics_server::answer(net::socket_t c) {
    std::string head;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    char buf[1024];
    while (head.find("\r\n\r\n") == std::string::npos && head.find("\n\n") == std::string::npos) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
        if (left <= 0 || head.size() > 8192) break;
        net::pollfd_t p{c, POLLIN, 0};
        if (net::poll(&p, 1, static_cast<int>(left)) <= 0) break;
        const auto n = ::recv(c, buf, static_cast<int>(sizeof buf), 0);
        if (n <= 0) break;
        head.append(buf, static_cast<std::size_t>(n));
    }
    int status = 400;
    std::string body = "bad request\n";
    const auto sp1 = head.find(' ');
    const auto sp2 = sp1 == std::string::npos ? std::string::npos : head.find(' ', sp1 + 1);
    if (head.size() <= 8192 && sp2 != std::string::npos) {
        const std::string method = head.substr(0, sp1);
        std::string path = head.substr(sp1 + 1, sp2 - sp1 - 1);
        if (const auto q = path.find('?'); q != std::string::npos) path.resize(q);
        if (method != "GET" && method != "HEAD") {
            status = 405;
            body = "only GET\n";
        } else {
            std::tie(status, body) = pages_(path);
            if (method == "HEAD") body.clear();
        }
    }
    const char* reason = status == 200 ? "OK" : status == 404 ? "Not Found" : status == 405 ? "Method Not Allowed"
                         : status == 503 ? "Service Unavailable" : "Bad Request";
    const std::string type = body.rfind("# HELP", 0) == 0 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8";
    std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + type +
                      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    std::size_t done = 0;
    while (done < out.size()) {
        const auto n = ::send(c, out.data() + done, static_cast<int>(out.size() - done), net::send_flags());
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace watch
