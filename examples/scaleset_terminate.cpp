// SPDX-License-Identifier: MIT
// One idea: a scale-set instance handles its own Terminate notification. Every instance of a
// placement group sees every Terminate event, so each must approve only the events whose Resources
// name itself (compute.name, "{scale set}_{instance id}", learnt from the instance metadata), and
// only once its work is saved; an unapproved Terminate holds back approved ones elsewhere until
// NotBefore. Other event types are left alone.
//
//   forewarn-scaleset-terminate --endpoint http://127.0.0.1:8080 --once

#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/poller.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>

namespace {
volatile std::sig_atomic_t g_signalled = 0;
extern "C" void on_signal(int) { g_signalled = 1; }

void checkpoint_and_deregister() {
    // Save in-flight work and leave the load balancer here.
}
}  // namespace

int main(int argc, char** argv) {
    forewarn::azure::client_options client_options;
    client_options.api_version = "2020-07-01";  // Terminate needs 2019-01-01 or later
    bool once = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--endpoint" && i + 1 < argc) client_options.endpoint = argv[++i];
        else if (arg == "--self" && i + 1 < argc) client_options.self_name = argv[++i];  // default: compute.name
        else if (arg == "--once") once = true;  // exit once our Terminate is approved
        else {
            std::fprintf(stderr, "usage: %s [--endpoint URL] [--self NAME] [--once]\n", argv[0]);
            return 2;
        }
    }

    forewarn::poller_options options;
    options.approval.scope = forewarn::approval_scope::own;  // the scale-set rule: our own events only
    std::atomic<bool> approved{false};
    forewarn::poller_handlers h;
    h.on_prepare = [](const forewarn::change& c, forewarn::approval_handle ready) {
        if (c.event.type != forewarn::event_type::terminate) return;  // not ours to hurry
        std::printf("Terminate %s for %zu instance(s), not before it is approved or NotBefore passes\n",
                    c.event.id.c_str(), c.event.resources.size());
        std::fflush(stdout);
        checkpoint_and_deregister();
        ready.ready();  // the policy still approves it only if Resources names this instance
    };
    h.on_approved = [&](const std::vector<std::string>& ids) {
        for (const auto& id : ids) std::printf("approved %s: this instance can be deleted now\n", id.c_str());
        std::fflush(stdout);
        approved = true;
    };
    h.on_error = [](const forewarn::error& e) { std::fprintf(stderr, "error: %s\n", e.describe().c_str()); };

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    forewarn::poller<forewarn::azure::scheduled_events_client> poller(
        forewarn::azure::scheduled_events_client(client_options), h, options);
    poller.start();
    while (!g_signalled && !(once && approved)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    poller.stop();
    return 0;
}
