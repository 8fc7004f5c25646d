// SPDX-License-Identifier: MIT
// Idle cost: a poller left alone for SECONDS against an endpoint where nothing happens. Reports the
// process's CPU seconds, context switches (each voluntary one is a wake-up after a sleep), and RSS.
//
//   forewarn-bench-idle azure|gce|aws BASE SECONDS
//
// Azure polls once a second (the default interval); GCE holds hanging GETs (timeout_sec 60);
// AWS polls every 5 s (its default: what AWS advises for the Spot notice).

#include "common.hpp"

#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace {

std::atomic<long> errors{0};

forewarn::poller_handlers handlers() {
    forewarn::poller_handlers h;
    h.on_error = [](const forewarn::error& e) {
        if (errors++ < 3) std::fprintf(stderr, "idle: poller error: %s\n", e.describe().c_str());
    };
    return h;
}

template <class Poller>
int run(Poller& p, const char* mode, long seconds) {
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    const double cpu0 = bench::cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    if (!p.start()) return 1;
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    const long rss_running = bench::proc_status_kb("VmRSS");
    const long threads = bench::proc_status_kb("Threads");
    // RSS counts the pages of shared libraries this process touched (libcurl, OpenSSL, libstdc++):
    // shared with every other process that maps them. RssAnon is what the process alone holds.
    const long anon = bench::proc_status_kb("RssAnon"), file = bench::proc_status_kb("RssFile");
    p.stop();
    const double wall = bench::since(t0), cpu = bench::cpu_seconds() - cpu0;
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    std::printf("{\"mode\":\"%s\",\"wall_s\":%.3f,\"cpu_s\":%.6f,\"voluntary_switches\":%ld,\"involuntary_switches\":%ld,"
                "\"rss_kb\":%ld,\"rss_anon_kb\":%ld,\"rss_file_kb\":%ld,\"peak_rss_kb\":%ld,\"threads\":%ld,\"errors\":%ld}\n",
                mode, wall, cpu, after.ru_nvcsw - before.ru_nvcsw, after.ru_nivcsw - before.ru_nivcsw, rss_running, anon, file,
                bench::proc_status_kb("VmHWM"), threads, errors.load());
    return errors.load() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage = "azure|gce|aws BASE SECONDS";
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        return 2;
    }
    const std::string mode = argv[1];
    const long seconds = bench::count_arg(argc, argv, 3, usage);
    if (mode == "azure") {
        forewarn::azure::client_options o;
        o.endpoint = argv[2];
        o.self_name = "vm0";
        forewarn::poller<forewarn::azure::scheduled_events_client> p(forewarn::azure::scheduled_events_client(o), handlers());
        return run(p, "azure", seconds);
    }
    if (mode == "gce") {
        forewarn::gce::client_options o;
        o.endpoint = argv[2];
        forewarn::poller<forewarn::gce::metadata_client> p(forewarn::gce::metadata_client(o), handlers());
        return run(p, "gce", seconds);
    }
    if (mode == "aws") {
        forewarn::aws::client_options o;
        o.endpoint = argv[2];
        o.self_name = "i-0123456789abcdef0";
        forewarn::poller<forewarn::aws::instance_metadata_client> p(forewarn::aws::instance_metadata_client(o), handlers());
        return run(p, "aws", seconds);
    }
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    return 2;
}
