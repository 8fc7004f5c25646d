// SPDX-License-Identifier: MIT
// One idea: ride out a GCE live migration. instance/maintenance-event turns
// MIGRATE_ON_HOST_MAINTENANCE about 60 s before the VM is moved and back to NONE when it is done;
// the poller holds hanging GETs on it (and on instance/preempted), so the notice arrives at once
// without polling. Pause latency-sensitive work on prepare, resume on recover. A live migration
// cannot be approved (on GCE only an upcoming window that can be rescheduled can: docs/gce.md).
//
//   forewarn-gce-live-migration --endpoint http://127.0.0.1:8080 --once

#include <forewarn/transport/curl.hpp>
#include <forewarn/gce/metadata_client.hpp>
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
}  // namespace

int main(int argc, char** argv) {
    forewarn::gce::client_options client_options;
    bool once = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--endpoint" && i + 1 < argc) client_options.endpoint = argv[++i];
        else if (arg == "--once") once = true;  // exit after the first migration ends
        else {
            std::fprintf(stderr, "usage: %s [--endpoint URL] [--once]\n", argv[0]);
            return 2;
        }
    }

    std::atomic<bool> done{false};
    forewarn::poller_handlers h;
    h.on_prepare = [](const forewarn::change& c, forewarn::approval_handle) {
        if (c.event.type == forewarn::event_type::live_migrate)
            std::printf("live migration within about 60 s: pausing latency-sensitive work\n");
        else if (c.event.type == forewarn::event_type::host_terminate)
            std::printf("host maintenance will stop this VM: shut down cleanly now\n");
        else
            std::printf("maintenance notice %s\n", c.event.raw_type.c_str());
        std::fflush(stdout);
    };
    h.on_started = [](const forewarn::change& c) {
        if (c.event.type == forewarn::event_type::preempted) std::printf("preempted: about 30 s left, saving state\n");
        std::fflush(stdout);
    };
    h.on_recover = [&](const forewarn::change& c) {
        std::printf("%s over: resuming\n", c.event.raw_type.c_str());
        std::fflush(stdout);
        done = true;
    };
    h.on_error = [](const forewarn::error& e) { std::fprintf(stderr, "error: %s\n", e.describe().c_str()); };

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    forewarn::poller<forewarn::gce::metadata_client> poller(forewarn::gce::metadata_client(client_options), h);
    poller.start();
    while (!g_signalled && !(once && done)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    poller.stop();  // returns at once, even in the middle of a hanging GET
    return 0;
}
