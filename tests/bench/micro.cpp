// SPDX-License-Identifier: MIT
// Micro-benchmarks (Google Benchmark): the CPU work forewarn does per poll, without the network.
//
//   parse_document/N        Azure GET body of N events -> document
//   diff_same_content/N     two documents with the same N events, other incarnation (full compare)
//   diff_all_new/N          empty -> N events (N prepare changes: the output's cost)
//   parse_and_diff/N        one Azure poll's CPU work: parse, then diff with the last document, one event changed
//   write_start_requests/N  the approval body for N EventIds
//   gce_*                   GCE value parsing, and a whole GCE snapshot over an in-process transport
//   azure_client_fetch, poller_poll_once  a whole poll over an in-process transport (no socket)
//   aws_parse_scheduled/N   AWS scheduled-events list of N events -> events
//   aws_client_fetch        a whole AWS round (token cached: three GETs) over an in-process transport
//
// Each size family reports BigO (Complexity(oN)): cost must grow linearly with the event count.
// run-all.sh runs this with --benchmark_repetitions and reports medians.

#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/parse.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace fw = forewarn;

// One event as Azure sends it (the seeds' live-migration sample), with a distinct EventId.
std::string azure_event_json(std::size_t i, std::string_view status) {
    char id[64];
    std::snprintf(id, sizeof id, "C7061BAC-AFDC-4513-B24B-%012zX", i);
    std::string s = "{\"EventId\":\"";
    s += id;
    s += "\",\"EventStatus\":\"";
    s += status;
    s += "\",\"EventType\":\"Freeze\",\"ResourceType\":\"VirtualMachine\",\"Resources\":[\"WestNO_";
    s += std::to_string(i % 100);
    s += "\"],\"NotBefore\":\"Mon, 19 Sep 2016 18:29:47 GMT\",\"Description\":\"Virtual machine is being paused "
         "because of a memory-preserving Live Migration operation.\",\"EventSource\":\"Platform\","
         "\"DurationInSeconds\":5}";
    return s;
}

// A Scheduled Events document of n events; event `started` (if < n) is Started, the rest Scheduled.
std::string azure_document_json(std::size_t n, long incarnation, std::size_t started = std::size_t(-1)) {
    std::string s = "{\"DocumentIncarnation\":" + std::to_string(incarnation) + ",\"Events\":[";
    for (std::size_t i = 0; i < n; ++i) {
        if (i) s += ',';
        s += azure_event_json(i, i == started ? "Started" : "Scheduled");
    }
    s += "]}";
    return s;
}

fw::document parsed(const std::string& body) {
    auto d = fw::azure::parse_document(body);
    if (!d) {
        std::fprintf(stderr, "bench: document does not parse: %s\n", d.error().describe().c_str());
        std::abort();
    }
    return std::move(*d);
}

void sizes(benchmark::internal::Benchmark* b) {
    for (long n = 1; n <= 10000; n *= 10) b->Arg(n);
    b->Complexity(benchmark::oN);
}

void parse_document(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::string body = azure_document_json(n, 7);
    for (auto _ : state) {
        auto d = fw::azure::parse_document(body);
        benchmark::DoNotOptimize(d);
    }
    state.SetComplexityN(state.range(0));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(body.size()));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(parse_document)->Apply(sizes);

void diff_same_content(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const fw::document a = parsed(azure_document_json(n, 7));
    const fw::document b = parsed(azure_document_json(n, 8));
    for (auto _ : state) {
        auto changes = fw::diff(a, b);
        benchmark::DoNotOptimize(changes);
    }
    state.SetComplexityN(state.range(0));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(diff_same_content)->Apply(sizes);

void diff_all_new(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const fw::document a;
    const fw::document b = parsed(azure_document_json(n, 8));
    for (auto _ : state) {
        auto changes = fw::diff(a, b);
        benchmark::DoNotOptimize(changes);
    }
    state.SetComplexityN(state.range(0));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(diff_all_new)->Apply(sizes);

void parse_and_diff(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const fw::document last = parsed(azure_document_json(n, 7));
    const std::string body = azure_document_json(n, 8, n / 2);  // one event went Scheduled -> Started
    for (auto _ : state) {
        auto d = fw::azure::parse_document(body);
        auto changes = fw::diff(last, *d);
        benchmark::DoNotOptimize(changes);
    }
    state.SetComplexityN(state.range(0));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(parse_and_diff)->Apply(sizes);

void write_start_requests(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < n; ++i) ids.push_back("C7061BAC-AFDC-4513-B24B-" + std::to_string(100000000000 + i));
    for (auto _ : state) {
        auto body = fw::azure::write_start_requests(ids);
        benchmark::DoNotOptimize(body);
    }
    state.SetComplexityN(state.range(0));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(write_start_requests)->Apply(sizes);

void gce_maintenance_value(benchmark::State& state, const char* value) {
    const std::string body = value;
    for (auto _ : state) {
        auto e = fw::gce::maintenance_event_from(body);
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK_CAPTURE(gce_maintenance_value, none, "NONE");
BENCHMARK_CAPTURE(gce_maintenance_value, migrate, "MIGRATE_ON_HOST_MAINTENANCE");
BENCHMARK_CAPTURE(gce_maintenance_value, terminate, "TERMINATE_ON_HOST_MAINTENANCE");

void gce_preempted_value(benchmark::State& state, const char* value) {
    const std::string body = value;
    for (auto _ : state) {
        auto e = fw::gce::preempted_event_from(body);
        benchmark::DoNotOptimize(e);
    }
}
BENCHMARK_CAPTURE(gce_preempted_value, false, "FALSE");
BENCHMARK_CAPTURE(gce_preempted_value, true, "TRUE");

// A transport that answers every request at once from a fixed function: no socket, no log (the
// testing fake records every request, which would grow without bound here).
class constant_transport {
public:
    using answer_fn = fw::http_response (*)(const fw::http_request&);
    explicit constant_transport(answer_fn f = nullptr) : f_(f) {}
    fw::result<fw::http_response> send(const fw::http_request& r) { return f_(r); }
    void cancel() noexcept {}
    void reset() noexcept {}

private:
    answer_fn f_;
};

fw::http_response gce_answer(const fw::http_request& r) {
    fw::http_response a;
    a.status = 200;
    a.headers.push_back({"Metadata-Flavor", "Google"});
    a.headers.push_back({"Content-Type", "application/text"});
    if (r.url.find("maintenance-event") != std::string::npos) {
        a.headers.push_back({"ETag", "7e9a4f1b2c3d4e5f"});
        a.body = "NONE";
    } else if (r.url.find("upcoming-maintenance") != std::string::npos) {
        a.headers.push_back({"ETag", "5f4e3d2c1b0a9988"});
        a.body = "{}";
    } else {
        a.headers.push_back({"ETag", "0a1b2c3d4e5f6071"});
        a.body = "FALSE";
    }
    return a;
}

void gce_client_fetch(benchmark::State& state) {
    fw::gce::client_options o;
    o.endpoint = "http://127.0.0.1:1";
    o.rate_limit = false;
    fw::gce::basic_metadata_client<constant_transport> client(o, constant_transport(gce_answer));
    for (auto _ : state) {
        auto d = client.fetch();
        if (!d) state.SkipWithError(d.error().describe().c_str());
        benchmark::DoNotOptimize(d);
    }
}
BENCHMARK(gce_client_fetch);

const std::string& one_event_body() {
    static const std::string body = azure_document_json(1, 3);
    return body;
}

fw::http_response azure_answer(const fw::http_request&) {
    fw::http_response a;
    a.status = 200;
    a.headers.push_back({"Content-Type", "application/json; charset=utf-8"});
    a.body = one_event_body();
    return a;
}

fw::azure::client_options azure_options() {
    fw::azure::client_options o;
    o.endpoint = "http://127.0.0.1:1";
    o.rate_limit = false;
    o.self_name = "WestNO_0";
    return o;
}

void azure_client_fetch(benchmark::State& state) {
    fw::azure::basic_scheduled_events_client<constant_transport> client(azure_options(), constant_transport(azure_answer));
    for (auto _ : state) {
        auto d = client.fetch();
        if (!d) state.SkipWithError(d.error().describe().c_str());
        benchmark::DoNotOptimize(d);
    }
}
BENCHMARK(azure_client_fetch);

// What the poller adds to a fetch: diff, policy, handlers (none fire: the document does not change).
void poller_poll_once(benchmark::State& state) {
    using client = fw::azure::basic_scheduled_events_client<constant_transport>;
    fw::poller_handlers h;
    std::size_t prepared = 0;
    h.on_prepare = [&](const fw::change&, fw::approval_handle) { ++prepared; };
    fw::basic_poller<client> p(client(azure_options(), constant_transport(azure_answer)), h);
    for (auto _ : state) {
        auto r = p.poll_once();
        if (!r) state.SkipWithError(r.error().describe().c_str());
        benchmark::DoNotOptimize(r);
    }
    state.counters["prepared"] = static_cast<double>(prepared);
}
BENCHMARK(poller_poll_once);

std::string aws_scheduled_json(std::size_t n) {
    std::string s = "[";
    for (std::size_t i = 0; i < n; ++i) {
        if (i) s += ',';
        char id[64];
        std::snprintf(id, sizeof id, "instance-event-%017zx", i);
        s += "{\"NotBefore\":\"21 Jan 2019 09:00:43 GMT\",\"Code\":\"system-reboot\",\"Description\":\"scheduled reboot\","
             "\"EventId\":\"";
        s += id;
        s += "\",\"NotAfter\":\"21 Jan 2019 09:17:23 GMT\",\"State\":\"active\"}";
    }
    return s + "]";
}

void aws_parse_scheduled(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const std::string body = aws_scheduled_json(n);
    for (auto _ : state) {
        auto events = fw::aws::parse_scheduled_events(body);
        benchmark::DoNotOptimize(events);
    }
    state.SetComplexityN(state.range(0));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(body.size()));
}
BENCHMARK(aws_parse_scheduled)->Apply(sizes);

fw::http_response aws_answer(const fw::http_request& r) {
    fw::http_response a;
    a.status = 200;
    if (r.url.find("/api/token") != std::string::npos) {
        a.body = "AQAEAbenchToken0123456789==";
    } else if (r.url.find("/events/maintenance/scheduled") != std::string::npos) {
        static const std::string one = aws_scheduled_json(1);
        a.body = one;
    } else {
        a.status = 404;  // no Spot notice, no rebalance recommendation
    }
    return a;
}

void aws_client_fetch(benchmark::State& state) {
    fw::aws::client_options o;
    o.endpoint = "http://127.0.0.1:1";
    o.rate_limit = false;
    o.self_name = "i-0123456789abcdef0";
    fw::aws::basic_instance_metadata_client<constant_transport> client(o, constant_transport(aws_answer));
    for (auto _ : state) {
        auto d = client.fetch();
        if (!d) state.SkipWithError(d.error().describe().c_str());
        benchmark::DoNotOptimize(d);
    }
}
BENCHMARK(aws_client_fetch);

}  // namespace

BENCHMARK_MAIN();
