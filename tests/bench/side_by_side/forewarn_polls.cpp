// SPDX-License-Identifier: MIT
// Alternative (a): forewarn's poller doing N polls of an Azure (or AWS) endpoint, as fast as it
// answers. It is the poller of a real program, driven through poll_once() so that the interval
// does not make the run last N seconds: each poll is the fetch (libcurl, kept-alive connection),
// the parse, the diff against the last document, the approval policy and the handlers. For AWS a
// poll is three GETs (scheduled events, Spot instance-action, rebalance) with the session token,
// fetched once by PUT and reused.
//
//   forewarn-bench-forewarn-polls URL N [azure|aws]    e.g. http://127.0.0.1:8080 1000
//
// Prints one line of JSON (polls, failures, the loop's CPU and wall seconds); the harness measures
// the whole process from outside (wait4) as well.

#include "common.hpp"

#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/poller.hpp>

#include <cstdio>
#include <string>

namespace {

struct counters {
    long changes = 0, errors = 0;
};

forewarn::poller_handlers handlers(counters& c) {
    forewarn::poller_handlers h;
    h.on_prepare = [&c](const forewarn::change&, forewarn::approval_handle) { ++c.changes; };
    h.on_started = [&c](const forewarn::change&) { ++c.changes; };
    h.on_recover = [&c](const forewarn::change&) { ++c.changes; };
    h.on_updated = [&c](const forewarn::change&) { ++c.changes; };
    h.on_error = [&c](const forewarn::error& e) {
        if (c.errors++ == 0) std::fprintf(stderr, "forewarn-polls: %s\n", e.describe().c_str());
    };
    return h;
}

template <class Client>
int run(Client client, long n) {
    counters c;
    forewarn::poller<Client> p(std::move(client), handlers(c));
    const double cpu0 = bench::cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) (void)p.poll_once();
    const double wall = bench::since(t0), cpu = bench::cpu_seconds() - cpu0;
    std::printf("{\"polls\":%ld,\"errors\":%ld,\"changes\":%ld,\"loop_cpu_s\":%.6f,\"loop_wall_s\":%.6f,\"rss_kb\":%ld,\"peak_rss_kb\":%ld}\n", n,
                c.errors, c.changes, cpu, wall, bench::proc_status_kb("VmRSS"), bench::proc_status_kb("VmHWM"));
    return c.errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage = "URL N [azure|aws]";
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        return 2;
    }
    const long n = bench::count_arg(argc, argv, 2, usage);
    const std::string cloud = argc > 3 ? argv[3] : "azure";
    if (cloud == "azure") {
        forewarn::azure::client_options o;
        o.endpoint = argv[1];
        o.rate_limit = false;  // the emulator's own limit is lifted too: this measures cost, not politeness
        o.self_name = "vm0";   // the identity is not what is measured
        return run(forewarn::azure::scheduled_events_client(o), n);
    }
    if (cloud == "aws") {
        forewarn::aws::client_options o;
        o.endpoint = argv[1];
        o.rate_limit = false;
        o.self_name = "i-0123456789abcdef0";
        return run(forewarn::aws::instance_metadata_client(o), n);
    }
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    return 2;
}
