// SPDX-License-Identifier: MIT
// A service that is its own load balancer's target, with the library alone (no forewarn-watch):
// it serves its requests on / and answers the balancer's health check on /readyz from
// ready_for_traffic(), so that the balancer takes the VM out as soon as a maintenance event for it
// is announced. Its approval waits for two things, as forewarn-watch's --lb-drain does:
// approval_options::unready_for (the time the balancer needs to see /readyz fail and stop sending:
// its check interval times its fall count, and a little more), and the service's own ready(),
// given once the requests already in flight have finished. Then the platform may reboot the VM
// and no request is lost. tests/bench/zero_loss.py runs it behind haproxy as its "library" arm.
//
//   forewarn-balanced-service --listen 127.0.0.1:8081 --endpoint http://127.0.0.1:8080
//       --self WestNO_0 --lb-drain 3 [--name TEXT] [--interval MS]     (one command line)
//
// Azure's Scheduled Events here; the same shape holds for every cloud's client.

#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/readiness.hpp>
#include <forewarn/transport/curl.hpp>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

volatile std::sig_atomic_t g_signalled = 0;
extern "C" void on_signal(int) { g_signalled = 1; }

using steady = std::chrono::steady_clock;

/// The requests this service is serving, and when the last one began.
struct in_flight {
    std::atomic<int> count{0};
    std::atomic<steady::rep> last_began{0};

    struct scope {
        in_flight& f;
        explicit scope(in_flight& f_) : f(f_) {
            ++f.count;
            f.last_began = steady::now().time_since_epoch().count();
        }
        ~scope() { --f.count; }
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;
    };

    /// None in flight, and none begun for `quiet`: the balancer has stopped sending.
    bool drained(std::chrono::milliseconds quiet) const {
        const auto since = steady::now() - steady::time_point(steady::duration(last_began.load()));
        return count.load() == 0 && since >= quiet;
    }
};

/// A whole number from lo to hi, and nothing else.
bool parse_int(const char* text, long lo, long hi, int& out) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < lo || v > hi) return false;
    out = static_cast<int>(v);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    forewarn::azure::client_options client_options;
    forewarn::poller_options options;
    options.approval.scope = forewarn::approval_scope::own;  // only events that name this VM
    std::string listen = "127.0.0.1:8081";
    std::string name = "forewarn-balanced-service";
    int lb_drain = 3;
    int interval_ms = 1000;
    auto usage = [&] {
        std::fprintf(stderr,
                     "usage: %s [--listen HOST:PORT] [--endpoint URL] [--self NAME] [--lb-drain SECONDS] [--name TEXT] "
                     "[--interval MS]\n",
                     argv[0]);
        return 2;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (i + 1 >= argc) return usage();
        const char* value = argv[++i];
        if (arg == "--listen") listen = value;
        else if (arg == "--endpoint") client_options.endpoint = value;
        else if (arg == "--self") client_options.self_name = value;
        else if (arg == "--name") name = value;
        else if (arg == "--lb-drain" && parse_int(value, 0, 3600, lb_drain)) continue;
        else if (arg == "--interval" && parse_int(value, 100, 3600000, interval_ms)) continue;
        else return usage();
    }
    const auto colon = listen.rfind(':');
    int port = 0;
    if (colon == std::string::npos || !parse_int(listen.c_str() + colon + 1, 1, 65535, port)) return usage();
    const std::string host = listen.substr(0, colon);
    client_options.poll_interval = std::chrono::milliseconds(interval_ms);
    // The balancer's time to take this VM out: the approval waits until /readyz has said 503 this long.
    options.approval.unready_for = std::chrono::seconds(lb_drain);

    in_flight flight;
    std::mutex drains_mutex;
    std::vector<std::thread> drains;  // joined before exit
    std::atomic<bool> stopping{false};

    forewarn::poller_handlers h;
    h.on_prepare = [&](const forewarn::change& c, forewarn::approval_handle ready) {
        std::printf("%s %s announced: /readyz says 503, approving once the balancer has stopped sending and "
                    "the requests in flight are done\n",
                    std::string(forewarn::to_string(c.event.type)).c_str(), c.event.id.c_str());
        std::fflush(stdout);
        // Never block the poller's thread: it keeps polling, and counts the balancer's time.
        std::lock_guard<std::mutex> lock(drains_mutex);
        drains.emplace_back([&flight, &stopping, ready, id = c.event.id] {
            while (!stopping && !flight.drained(std::chrono::milliseconds(500)))
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (stopping) return;  // not ready: the event starts at its NotBefore
            std::printf("%s: no request in flight: ready\n", id.c_str());
            std::fflush(stdout);
            ready.ready();
        });
    };
    h.on_approved = [](const std::vector<std::string>& ids) {
        for (const auto& id : ids) std::printf("%s approved\n", id.c_str());
        std::fflush(stdout);
    };
    h.on_started = [](const forewarn::change& c) {
        std::printf("%s started\n", c.event.id.c_str());
        std::fflush(stdout);
    };
    h.on_recover = [](const forewarn::change& c) {
        std::printf("%s %s: /readyz says 200 again\n", c.event.id.c_str(), std::string(forewarn::to_string(c.reason)).c_str());
        std::fflush(stdout);
    };
    h.on_error = [](const forewarn::error& e) { std::fprintf(stderr, "error: %s\n", e.describe().c_str()); };

    forewarn::poller<forewarn::azure::scheduled_events_client> poller(
        forewarn::azure::scheduled_events_client(client_options), h, options);

    httplib::Server server;
    server.Get("/", [&](const httplib::Request&, httplib::Response& res) {
        in_flight::scope s(flight);
        res.set_content(name, "text/plain");
    });
    // The balancer's health check: the same answer the poller's hold counts.
    server.Get("/readyz", [&](const httplib::Request&, httplib::Response& res) {
        const auto r = forewarn::ready_for_traffic(poller.last_document(), poller.self(), std::chrono::system_clock::now(),
                                                   options.approval.readiness);
        res.status = r.ready ? 200 : 503;
        res.set_content(r.why + "\n", "text/plain");
    });
    if (!server.bind_to_port(host.c_str(), port)) {
        std::fprintf(stderr, "cannot listen on %s\n", listen.c_str());
        return 1;
    }

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    poller.start();
    std::thread serving([&] { server.listen_after_bind(); });
    std::printf("serving on http://%s, /readyz for the balancer, approvals held %d s after it turns 503\n",
                listen.c_str(), lb_drain);
    std::fflush(stdout);
    while (!g_signalled) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stopping = true;
    server.stop();
    serving.join();
    poller.stop();
    std::lock_guard<std::mutex> lock(drains_mutex);
    for (auto& t : drains) t.join();
    return 0;
}
