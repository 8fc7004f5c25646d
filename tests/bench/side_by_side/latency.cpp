// SPDX-License-Identifier: MIT
// Notification latency: the time from a state change in forewarn-emulator (the moment the control
// request that makes it is sent) to the poller's handler call, many times; and how long stop() takes.
//
//   forewarn-bench-latency azure BASE CYCLES   Azure poller at 1 Hz: add an event (on_prepare), then
//                                              cancel it (on_recover); a random 0..1 s pause first, so
//                                              that each change lands at a random point of the interval
//   forewarn-bench-latency gce BASE CYCLES     GCE poller on hanging GETs: maintenance-event to
//                                              MIGRATE_ON_HOST_MAINTENANCE (on_prepare) and back to NONE
//                                              (on_recover)
//   forewarn-bench-latency stop BASE COUNT     stop() of a GCE poller in the middle of its hanging GET,
//                                              and of an Azure poller in the middle of its 1 s wait
//   forewarn-bench-latency aws-complete BASE N AWS poller with a lifecycle hook: a scale-in announced,
//                                              then ready() to the emulated Auto Scaling receiving the
//                                              CompleteLifecycleAction (signed, over HTTP)
//
// BASE is the emulator's address (http://127.0.0.1:PORT), which must not rate-limit (the harness
// starts it with "rate_limit": 0). Prints one JSON object of samples in milliseconds per series.

#include "common.hpp"

#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
namespace fw = forewarn;

std::string base;  // the emulator

/// Sends a control request; exits on failure (the benchmark cannot go on without it).
std::string control(const std::string& route, const std::string& body) {
    static fw::curl_transport t;
    fw::http_request r;
    r.method = fw::http_method::post;
    r.url = base + "/emulator/v1/" + route;
    r.headers.push_back({"Content-Type", "application/json"});
    r.body = body;
    auto a = t.send(r);
    if (!a || a->status != 200) {
        std::fprintf(stderr, "latency: control %s failed: %s\n", route.c_str(),
                     a ? a->body.c_str() : a.error().describe().c_str());
        std::exit(1);
    }
    return a->body;
}

/// What the handlers saw: the time of each call, by kind.
struct observed {
    std::mutex m;
    std::condition_variable cv;
    int prepares = 0, recovers = 0, errors = 0;
    clock_type::time_point last;

    fw::poller_handlers handlers() {
        fw::poller_handlers h;
        h.on_prepare = [this](const fw::change&, fw::approval_handle) { note(prepares); };
        h.on_started = [this](const fw::change&) { note(prepares); };
        h.on_recover = [this](const fw::change&) { note(recovers); };
        h.on_error = [this](const fw::error& e) {
            std::lock_guard<std::mutex> lock(m);
            if (errors++ < 3) std::fprintf(stderr, "latency: poller error: %s\n", e.describe().c_str());
        };
        return h;
    }
    void note(int& counter) {
        const auto now = clock_type::now();
        {
            std::lock_guard<std::mutex> lock(m);
            ++counter;
            last = now;
        }
        cv.notify_all();
    }
    /// Waits until `counter` passes `before`; the latency since `t0` in ms, or -1 after 10 s.
    double wait(int& counter, int before, clock_type::time_point t0) {
        std::unique_lock<std::mutex> lock(m);
        if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return counter > before; })) return -1;
        return std::chrono::duration<double, std::milli>(last - t0).count();
    }
};

void print_series(const char* name, const std::vector<double>& v, bool last) {
    std::printf("\"%s\":[", name);
    for (std::size_t i = 0; i < v.size(); ++i) std::printf("%s%.3f", i ? "," : "", v[i]);
    std::printf("]%s", last ? "" : ",");
}

std::mt19937 rng(12345);

void pause_ms(int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::this_thread::sleep_for(std::chrono::milliseconds(d(rng)));
}

int run_azure(long cycles) {
    observed o;
    fw::azure::client_options opt;
    opt.endpoint = base;
    opt.self_name = "vm0";  // no approval wanted: the handlers never say ready
    opt.poll_interval = std::chrono::milliseconds(1000);
    fw::poller<fw::azure::scheduled_events_client> p(fw::azure::scheduled_events_client(opt), o.handlers());
    if (!p.start()) return 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the first poll is done
    std::vector<double> prepare, recover;
    for (long i = 0; i < cycles; ++i) {
        pause_ms(0, 999);
        int before = o.prepares;
        auto t0 = clock_type::now();
        const std::string answer = control("azure/events", R"({"EventType":"Freeze","notice":"1h"})");
        prepare.push_back(o.wait(o.prepares, before, t0));
        const auto q = answer.find("\"EventId\":\"");
        const std::string id = answer.substr(q + 11, answer.find('"', q + 11) - (q + 11));
        pause_ms(0, 999);
        before = o.recovers;
        t0 = clock_type::now();
        control("azure/events/" + id + "/cancel", "{}");
        recover.push_back(o.wait(o.recovers, before, t0));
    }
    p.stop();
    std::printf("{\"mode\":\"azure\",\"interval_ms\":1000,");
    print_series("prepare_ms", prepare, false);
    print_series("recover_ms", recover, true);
    std::printf(",\"errors\":%d}\n", o.errors);
    return 0;
}

fw::gce::client_options gce_options(std::chrono::seconds watch_timeout = std::chrono::seconds(5)) {
    fw::gce::client_options opt;
    opt.watch_timeout = watch_timeout;
    opt.endpoint = base;
    // The per-host token bucket (5 requests/s) would make back-to-back changes wait for tokens:
    // that is politeness, not notification latency. Changes on a real VM are minutes apart.
    opt.rate_limit = false;
    return opt;
}

int run_gce(long cycles) {
    observed o;
    control("gce", R"({"instance/maintenance-event":"NONE"})");
    // When one key changes, the poller cuts the other key's hanging GET short; the emulator cannot
    // see that the client went away and keeps the thread that served it until timeout_sec ends.
    // A short timeout_sec gives those threads back before the emulator's pool (64) runs dry; it
    // does not change how soon a change is seen.
    fw::poller<fw::gce::metadata_client> p(fw::gce::metadata_client(gce_options()), o.handlers());
    if (!p.start()) return 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // fetched; the hanging GETs are out
    std::vector<double> prepare, recover;
    for (long i = 0; i < cycles; ++i) {
        pause_ms(50, 150);
        int before = o.prepares;
        auto t0 = clock_type::now();
        control("gce", R"({"instance/maintenance-event":"MIGRATE_ON_HOST_MAINTENANCE"})");
        prepare.push_back(o.wait(o.prepares, before, t0));
        pause_ms(50, 150);
        before = o.recovers;
        t0 = clock_type::now();
        control("gce", R"({"instance/maintenance-event":"NONE"})");
        recover.push_back(o.wait(o.recovers, before, t0));
    }
    p.stop();
    std::printf("{\"mode\":\"gce\",");
    print_series("prepare_ms", prepare, false);
    print_series("recover_ms", recover, true);
    std::printf(",\"errors\":%d}\n", o.errors);
    return 0;
}

template <class Poller>
double time_stop(Poller& p) {
    const auto t0 = clock_type::now();
    p.stop();
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

int run_stop(long count) {
    control("gce", R"({"instance/maintenance-event":"NONE"})");
    std::vector<double> gce, azure;
    for (long i = 0; i < count; ++i) {
        fw::poller<fw::gce::metadata_client> p(fw::gce::metadata_client(gce_options(std::chrono::seconds(60))));
        if (!p.start()) return 1;
        pause_ms(300, 500);  // well inside the 60 s hanging GET
        gce.push_back(time_stop(p));
    }
    for (long i = 0; i < count; ++i) {
        fw::azure::client_options opt;
        opt.endpoint = base;
        opt.self_name = "vm0";
        fw::poller<fw::azure::scheduled_events_client> p(fw::azure::scheduled_events_client(opt), {});
        if (!p.start()) return 1;
        pause_ms(300, 500);  // inside the 1 s wait after the first poll
        azure.push_back(time_stop(p));
    }
    std::printf("{\"mode\":\"stop\",");
    print_series("gce_hanging_get_ms", gce, false);
    print_series("azure_interval_ms", azure, true);
    std::printf("}\n");
    return 0;
}

/// How many CompleteLifecycleAction calls the emulated Auto Scaling has answered 200.
int completions() {
    static fw::curl_transport t;
    fw::http_request r;
    r.url = base + "/emulator/v1/state";
    auto a = t.send(r);
    if (!a || a->status != 200) return -1;
    int n = 0;
    for (std::size_t at = 0; (at = a->body.find("\"action\":\"CompleteLifecycleAction\"", at)) != std::string::npos; ++at) {
        const auto status = a->body.find("\"status\":", at);
        if (status != std::string::npos && a->body.compare(status + 9, 3, "200") == 0) ++n;
    }
    return n;
}

int run_aws_complete(long cycles) {
    control("aws/autoscaling", R"({"group":"bench-asg","hook":"bench-hook","tags":true})");
    control("aws/lifecycle", R"({"state":"InService"})");
    std::mutex m;
    std::condition_variable cv;
    std::vector<fw::approval_handle> handles;
    fw::poller_handlers h;
    h.on_prepare = [&](const fw::change&, fw::approval_handle a) {
        {
            std::lock_guard<std::mutex> lock(m);
            handles.push_back(a);
        }
        cv.notify_all();
    };
    int errors = 0;
    h.on_error = [&](const fw::error& e) {
        if (errors++ < 3) std::fprintf(stderr, "latency: poller error: %s\n", e.describe().c_str());
    };
    fw::aws::client_options opt;
    opt.endpoint = base;
    opt.poll_interval = std::chrono::milliseconds(1000);
    opt.rate_limit = false;
    opt.lifecycle_hook = "bench-hook";
    opt.autoscaling_endpoint = base + "/autoscaling/";
    fw::poller<fw::aws::instance_metadata_client> p(fw::aws::instance_metadata_client(opt), h);
    if (!p.start()) return 1;
    std::vector<double> complete;
    for (long i = 0; i < cycles; ++i) {
        const auto before = handles.size();
        control("aws/lifecycle", R"({"state":"Terminated"})");
        {
            std::unique_lock<std::mutex> lock(m);
            if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return handles.size() > before; })) return 1;
        }
        pause_ms(0, 999);  // ready at a random point of the poll interval
        const int done = completions();
        const auto t0 = clock_type::now();
        handles.back().ready();
        double ms = -1;
        while (clock_type::now() - t0 < std::chrono::seconds(10)) {
            if (completions() > done) {
                ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        complete.push_back(ms);
        control("aws/lifecycle", R"({"state":"InService"})");  // over: the next scale-in is a new one
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // its recover
    }
    p.stop();
    std::printf("{\"mode\":\"aws-complete\",");
    print_series("ready_to_complete_ms", complete, true);
    std::printf(",\"errors\":%d}\n", errors);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage = "azure|gce|stop|aws-complete BASE COUNT";
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        return 2;
    }
    const std::string mode = argv[1];
    base = argv[2];
    const long n = bench::count_arg(argc, argv, 3, usage);
    if (mode == "azure") return run_azure(n);
    if (mode == "gce") return run_gce(n);
    if (mode == "stop") return run_stop(n);
    if (mode == "aws-complete") return run_aws_complete(n);
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    return 2;
}
