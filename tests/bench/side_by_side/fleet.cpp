// SPDX-License-Identifier: MIT
// The fleet budget on a real three-member etcd cluster on this machine (Debian's etcd-server):
//   1. from ready (the poller's admit()) to the slot granted, with a free slot: one member, K = 1;
//   2. at rest: etcd requests per member per minute and etcd's CPU, N members, nothing pending;
//   3. a storm: N members want a slot at once, K of them at a time, each holding it briefly:
//      how long until all were served, the most holding at once (never above K), etcd's CPU.
// Prints numbers; asserts nothing.
//
//   forewarn-bench-fleet [members=100] [k=10] [rest_seconds=60] [ttl=30]
#include <forewarn/etcd/maintenance_budget.hpp>

#include "../../support/etcd_cluster.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
std::atomic<long> requests{0};

// curl_transport, counting what it sends.
class counting_transport {
public:
    counting_transport() = default;
    forewarn::result<forewarn::http_response> send(const forewarn::http_request& r) {
        ++requests;
        return inner_.send(r);
    }
    void cancel() noexcept { inner_.cancel(); }
    void reset() noexcept { inner_.reset(); }

private:
    forewarn::curl_transport inner_;
};
using budget_type = forewarn::etcd::basic_maintenance_budget<counting_transport>;

// CPU seconds (user + system) of the etcd processes so far.
double etcd_cpu(const std::vector<pid_t>& pids) {
    double total = 0;
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    for (const pid_t pid : pids) {
        if (pid <= 0) continue;
        std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto close = text.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(text.substr(close + 2));
        std::string field;
        for (int i = 3; i <= 15 && rest >> field; ++i)
            if (i == 14 || i == 15) total += std::stod(field) / tick;
    }
    return total;
}

struct member {
    std::unique_ptr<budget_type> budget;
    std::mutex m;
    std::condition_variable cv;
    int wakes = 0;
    forewarn::event e;

    member(const std::string& endpoints, std::size_t k, std::chrono::seconds ttl, const std::string& name) {
        forewarn::etcd::budget_options o;
        o.etcd.endpoints = forewarn::etcd::split_endpoints(endpoints);
        o.group = "bench";
        o.max_in_maintenance = k;
        o.lease_ttl = ttl;
        budget = std::make_unique<budget_type>(o);
        forewarn::coordinator_context ctx;
        ctx.self = name;
        ctx.wake = [this] {
            std::lock_guard<std::mutex> lock(m);
            ++wakes;
            cv.notify_all();
        };
        e.id = "E-" + name;
        e.type = forewarn::event_type::reboot;
        e.status = forewarn::event_status::scheduled;
        e.resources = {name};
        if (!budget->start(ctx)) std::abort();
    }
    // As the poller does: admit(), and again after each wake, until yes (bounded).
    bool take(std::chrono::seconds limit = std::chrono::seconds(120)) {
        budget->observe({forewarn::local_event{e, true, false}});
        const auto give_up = clock_type::now() + limit;
        for (;;) {
            int seen;
            {
                std::lock_guard<std::mutex> lock(m);
                seen = wakes;
            }
            auto r = budget->admit(e);
            if (r && *r) return true;
            std::unique_lock<std::mutex> lock(m);
            if (!cv.wait_until(lock, give_up, [&] { return wakes != seen; })) return false;
        }
    }
    void give_back() { budget->observe({}); }
};

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

long arg(int argc, char** argv, const char* name, long fallback) {
    const std::string prefix = std::string(name) + "=";
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]).rfind(prefix, 0) == 0) return std::atol(argv[i] + prefix.size());
    return fallback;
}

}  // namespace

int main(int argc, char** argv) {
    const long n = arg(argc, argv, "members", 100);
    const long k = arg(argc, argv, "k", 10);
    const long rest = arg(argc, argv, "rest_seconds", 60);
    const auto ttl = std::chrono::seconds(arg(argc, argv, "ttl", 30));
    forewarn_test::etcd_cluster etcd(3);
    const auto pids = etcd.pids();
    std::printf("fleet budget on a 3-member etcd cluster (etcd-server, loopback); %ld members, K = %ld, TTL %lld s\n", n,
                k, static_cast<long long>(ttl.count()));

    // 1. Ready to granted, free slot.
    {
        member one(etcd.endpoints(), 1, ttl, "solo");
        std::vector<double> ms;
        for (int i = 0; i < 30; ++i) {
            const auto t0 = clock_type::now();
            if (!one.take()) {
                std::puts("  no slot within 120 s");
                return 1;
            }
            ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
            one.give_back();
            while (one.budget->slot() != forewarn::slot_state::none) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        std::printf("  ready -> slot granted (free slot, 30 runs): median %.1f ms, p90 %.1f ms, max %.1f ms\n",
                    percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 1.0));
    }

    // 2. At rest.
    std::vector<std::unique_ptr<member>> members;
    for (long i = 0; i < n; ++i)
        members.push_back(std::make_unique<member>(etcd.endpoints(), static_cast<std::size_t>(k), ttl, "m" + std::to_string(i)));
    std::this_thread::sleep_for(std::chrono::seconds(3));  // every member has its lease and view
    const long r0 = requests.load();
    const double c0 = etcd_cpu(pids);
    std::this_thread::sleep_for(std::chrono::seconds(rest));
    const double per_min = static_cast<double>(requests.load() - r0) / static_cast<double>(n) * 60.0 / static_cast<double>(rest);
    const double cpu_rest = (etcd_cpu(pids) - c0) / static_cast<double>(rest);
    std::printf("  at rest (%ld s): %.2f etcd requests per member per minute (TTL %lld s: keepalive every TTL/3; "
                "at the default 900 s: %.2f); etcd CPU %.1f%% of one core for the 3 members\n",
                rest, per_min, static_cast<long long>(ttl.count()), per_min * static_cast<double>(ttl.count()) / 900.0,
                cpu_rest * 100.0);

    // 3. A storm: everyone wants a slot at once; each holds it 200 ms.
    std::atomic<int> holding{0}, most{0}, served{0};
    const long r1 = requests.load();
    const double c1 = etcd_cpu(pids);
    const auto t0 = clock_type::now();
    std::vector<std::thread> threads;
    for (auto& m : members)
        threads.emplace_back([&, mp = m.get()] {
            if (!mp->take(std::chrono::seconds(300))) return;
            const int now = ++holding;
            int prev = most.load();
            while (now > prev && !most.compare_exchange_weak(prev, now)) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            --holding;
            mp->give_back();
            ++served;
        });
    for (auto& t : threads) t.join();
    const double secs = std::chrono::duration<double>(clock_type::now() - t0).count();
    std::printf("  storm: %d of %ld members served in %.1f s (K = %ld, 200 ms each: %.1f s at best); most holding at once "
                "(as the members saw it): %d; %.1f requests per member; etcd CPU %.0f%% of one core\n",
                served.load(), n, secs, k, static_cast<double>(n) / static_cast<double>(k) * 0.2, most.load(),
                static_cast<double>(requests.load() - r1) / static_cast<double>(n), (etcd_cpu(pids) - c1) / secs * 100.0);
    for (auto& m : members) m->budget->stop();
    return 0;
}
