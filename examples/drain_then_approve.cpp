// SPDX-License-Identifier: MIT
// One idea: approve a maintenance event only once the service is ready for it. The prepare handler
// keeps the approval handle, drains on another thread (here: waits --drain-seconds), then says
// ready(); the poller approves at once. Recovery puts the VM back in rotation.
//
//   forewarn-drain-then-approve --endpoint http://127.0.0.1:8080 --self WestNO_0 --drain-seconds 3 --once

#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/poller.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {
volatile std::sig_atomic_t g_signalled = 0;
extern "C" void on_signal(int) { g_signalled = 1; }
}  // namespace

int main(int argc, char** argv) {
    forewarn::azure::client_options client_options;
    forewarn::poller_options options;
    options.approval.scope = forewarn::approval_scope::own;  // only events that name this VM
    int drain_seconds = 5;
    bool once = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--endpoint" && i + 1 < argc) client_options.endpoint = argv[++i];
        else if (arg == "--self" && i + 1 < argc) client_options.self_name = argv[++i];
        else if (arg == "--drain-seconds" && i + 1 < argc) drain_seconds = std::atoi(argv[++i]);
        else if (arg == "--once") once = true;  // exit after the first recovery
        else {
            std::fprintf(stderr, "usage: %s [--endpoint URL] [--self NAME] [--drain-seconds N] [--once]\n", argv[0]);
            return 2;
        }
    }

    std::vector<std::thread> drains;  // joined before exit
    std::atomic<bool> recovered{false};
    forewarn::poller_handlers h;
    h.on_prepare = [&](const forewarn::change& c, forewarn::approval_handle ready) {
        std::printf("%s %s announced: draining for %d s before approving\n",
                    std::string(forewarn::to_string(c.event.type)).c_str(), c.event.id.c_str(), drain_seconds);
        std::fflush(stdout);
        // Never block the poller's thread: it must keep polling while we drain.
        drains.emplace_back([ready, drain_seconds, id = c.event.id] {
            std::this_thread::sleep_for(std::chrono::seconds(drain_seconds));  // take the VM out of rotation here
            std::printf("%s drained: ready\n", id.c_str());
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
    h.on_recover = [&](const forewarn::change& c) {
        std::printf("%s %s: back in rotation\n", c.event.id.c_str(), std::string(forewarn::to_string(c.reason)).c_str());
        std::fflush(stdout);
        recovered = true;
    };
    h.on_error = [](const forewarn::error& e) { std::fprintf(stderr, "error: %s\n", e.describe().c_str()); };

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    forewarn::poller<forewarn::azure::scheduled_events_client> poller(
        forewarn::azure::scheduled_events_client(client_options), h, options);
    poller.start();
    while (!g_signalled && !(once && recovered)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    poller.stop();
    for (auto& t : drains) t.join();
    return 0;
}
