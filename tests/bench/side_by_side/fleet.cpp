// SPDX-License-Identifier: MIT
// The fleet budget on a real three-member etcd cluster on this machine (Debian's etcd-server):
//   1. from ready (the poller's admit()) to the slot granted, with a free slot: one member, K = 1;
//   2. at rest: etcd requests per member per minute and etcd's CPU, N members, nothing pending;
//   3. a storm: `storm` members want a slot at once, K of them at a time, each holding it briefly:
//      how long until all were served, each member's wait (the worst against the mean), the most
//      holding at once (never above K), requests and watch messages per waiting member, etcd's CPU.
// Prints numbers; exits 1 when a member was not served or more than K held at once.
//
//   forewarn-bench-fleet [members=100] [k=10] [rest_seconds=60] [ttl=30] [storm=members] [watch=1]
//                        [hold_ms=200]
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

#include <sys/resource.h>

namespace {

using clock_type = std::chrono::steady_clock;
std::atomic<long> requests{0};

std::atomic<long> watches{0}, messages{0};

// curl_transport, counting what it sends (in all, and for the member it belongs to); a watch (a
// stream) is counted apart, with its messages.
class counting_transport {
public:
    counting_transport() = default;
    explicit counting_transport(std::shared_ptr<std::atomic<long>> own) : own_(std::move(own)) {}
    forewarn::result<forewarn::http_response> send(const forewarn::http_request& r) {
        ++requests;
        if (own_) ++*own_;
        return inner_.send(r);
    }
    forewarn::result<forewarn::http_response> send_stream(const forewarn::http_request& r, forewarn::stream_sink sink) {
        ++watches;
        return stream_.send_stream(r, [&](std::string_view m) {
            ++messages;
            return sink(m);
        });
    }
    void cancel() noexcept {
        inner_.cancel();
        stream_.cancel();
    }
    void reset() noexcept {
        inner_.reset();
        stream_.reset();
    }

private:
    std::shared_ptr<std::atomic<long>> own_;
    forewarn::curl_transport inner_;
    forewarn::curl_stream_transport stream_;
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
    std::shared_ptr<std::atomic<long>> sent = std::make_shared<std::atomic<long>>(0);  // this member's requests
    std::unique_ptr<budget_type> budget;
    std::mutex m;
    std::condition_variable cv;
    int wakes = 0;
    forewarn::event e;

    member(const std::string& endpoints, std::size_t k, std::chrono::seconds ttl, const std::string& name, bool watch) {
        forewarn::etcd::budget_options o;
        o.etcd.endpoints = forewarn::etcd::split_endpoints(endpoints);
        o.group = "bench";
        o.max_in_maintenance = k;
        o.lease_ttl = ttl;
        o.watch = watch;
        budget = std::make_unique<budget_type>(o, counting_transport(sent));
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

// CPU seconds (user + system) of this process so far: the members, their threads and libcurl.
double own_cpu() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Raises the open-files limit to its hard limit: each member holds a few connections to etcd.
void raise_open_files() {
    rlimit l{};
    if (::getrlimit(RLIMIT_NOFILE, &l) != 0) return;
    l.rlim_cur = l.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &l);
}

}  // namespace

int main(int argc, char** argv) {
    const long n = arg(argc, argv, "members", 100);
    const long k = arg(argc, argv, "k", 10);
    const long rest = arg(argc, argv, "rest_seconds", 60);
    const auto ttl = std::chrono::seconds(arg(argc, argv, "ttl", 30));
    const long storm = std::min(arg(argc, argv, "storm", n), n);
    const bool watch = arg(argc, argv, "watch", 1) != 0;
    const auto hold = std::chrono::milliseconds(arg(argc, argv, "hold_ms", 200));
    raise_open_files();
    forewarn_test::etcd_cluster etcd(3);
    const auto pids = etcd.pids();
    std::printf("fleet budget on a 3-member etcd cluster (etcd-server, loopback); %ld members, K = %ld, TTL %lld s, "
                "waiting members %s\n",
                n, k, static_cast<long long>(ttl.count()), watch ? "watch the queue" : "poll the queue every second");

    // 1. Ready to granted, free slot.
    {
        member one(etcd.endpoints(), 1, ttl, "solo", watch);
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
    const auto made = clock_type::now();
    for (long i = 0; i < n; ++i)
        members.push_back(
            std::make_unique<member>(etcd.endpoints(), static_cast<std::size_t>(k), ttl, "m" + std::to_string(i), watch));
    // Every member has its lease (a keepalive is due only TTL/3 later).
    while (std::any_of(members.begin(), members.end(), [](const auto& m) { return m->budget->lease_id() == 0; })) {
        if (clock_type::now() - made > std::chrono::minutes(5)) {
            std::puts("  members without a lease after 5 minutes");
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::printf("  %ld members started, each with its lease, in %.1f s\n", n,
                std::chrono::duration<double>(clock_type::now() - made).count());
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const long r0 = requests.load();
    const long w0 = watches.load();
    const double c0 = etcd_cpu(pids);
    std::this_thread::sleep_for(std::chrono::seconds(rest));
    const double per_second = static_cast<double>(requests.load() - r0) / static_cast<double>(rest);
    const double cpu_rest = (etcd_cpu(pids) - c0) / static_cast<double>(rest);
    std::printf("  at rest (%ld s): %.1f etcd requests a second for %ld members (%.2f per member per minute; TTL %lld s: a "
                "keepalive every TTL/3; at the default 900 s: %.3f), %ld watches; etcd CPU %.1f%% of one core for the 3 members\n",
                rest, per_second, n, per_second * 60.0 / static_cast<double>(n), static_cast<long long>(ttl.count()),
                per_second * 60.0 / static_cast<double>(n) * static_cast<double>(ttl.count()) / 900.0, watches.load() - w0,
                cpu_rest * 100.0);

    // 3. A storm: `storm` members want a slot at once; each holds it `hold`.
    std::atomic<int> holding{0}, most{0}, served{0};
    std::vector<double> waited(static_cast<std::size_t>(storm), -1.0);
    std::vector<double> released(static_cast<std::size_t>(storm), -1.0);
    long r1 = 0;  // the storm's members' requests (a resting member's keepalives are not the storm's)
    for (long i = 0; i < storm; ++i) r1 += members[static_cast<std::size_t>(i)]->sent->load();
    const long w1 = watches.load();
    const long m1 = messages.load();
    const double c1 = etcd_cpu(pids);
    const double o1 = own_cpu();
    const auto t0 = clock_type::now();
    std::vector<std::thread> threads;
    for (long i = 0; i < storm; ++i)
        threads.emplace_back([&, i, mp = members[static_cast<std::size_t>(i)].get()] {
            if (!mp->take(std::chrono::seconds(300))) return;
            waited[static_cast<std::size_t>(i)] = std::chrono::duration<double>(clock_type::now() - t0).count();
            const int now = ++holding;
            int prev = most.load();
            while (now > prev && !most.compare_exchange_weak(prev, now)) {
            }
            std::this_thread::sleep_for(hold);
            --holding;
            released[static_cast<std::size_t>(i)] = std::chrono::duration<double>(clock_type::now() - t0).count();
            mp->give_back();
            ++served;
        });
    for (auto& t : threads) t.join();
    const double secs = std::chrono::duration<double>(clock_type::now() - t0).count();
    long r2 = 0;
    for (long i = 0; i < storm; ++i) r2 += members[static_cast<std::size_t>(i)]->sent->load();
    const double storm_cpu = (etcd_cpu(pids) - c1) / secs * 100.0;
    const double members_cpu = (own_cpu() - o1) / secs * 100.0;
    double sum = 0, worst = 0;
    long counted = 0;
    for (const double w : waited)
        if (w >= 0) {
            sum += w;
            worst = std::max(worst, w);
            ++counted;
        }
    const double mean = counted > 0 ? sum / static_cast<double>(counted) : 0;
    const double floor_s = static_cast<double>(storm) / static_cast<double>(k) * std::chrono::duration<double>(hold).count();
    std::printf("  storm: %d of %ld members served in %.2f s (K = %ld, %lld ms each: %.1f s at best); most holding at once "
                "(as the members saw it): %d; wait for the slot: mean %.2f s, worst %.2f s (%.2fx the mean); "
                "%.1f requests per waiting member, %.1f watches and %.0f watch messages per waiting member; "
                "etcd CPU %.0f%% of one core, the members' %.0f%%\n",
                served.load(), storm, secs, k, static_cast<long long>(hold.count()), floor_s, most.load(), mean, worst,
                mean > 0 ? worst / mean : 0.0, static_cast<double>(r2 - r1) / static_cast<double>(storm),
                static_cast<double>(watches.load() - w1) / static_cast<double>(storm),
                static_cast<double>(messages.load() - m1) / static_cast<double>(storm), storm_cpu, members_cpu);
    // Where the time beyond the floor goes: the first grant (the queue's start), and each hand-over,
    // from a member giving its slot back to the next grant (the n-th grant after the first K pairs
    // with the n-th slot given back).
    std::vector<double> grants, gives;
    for (std::size_t i = 0; i < waited.size(); ++i)
        if (waited[i] >= 0 && released[i] >= 0) {
            grants.push_back(waited[i]);
            gives.push_back(released[i]);
        }
    std::sort(grants.begin(), grants.end());
    std::sort(gives.begin(), gives.end());
    std::vector<double> handover;
    for (std::size_t i = static_cast<std::size_t>(k); i < grants.size(); ++i)
        handover.push_back((grants[i] - gives[i - static_cast<std::size_t>(k)]) * 1000.0);
    if (!grants.empty())
        std::printf("  storm, where the time goes: first grant after %.0f ms, the K-th after %.0f ms; slot given back -> next "
                    "granted: median %.1f ms, p90 %.1f ms, max %.1f ms (%zu hand-overs)\n",
                    grants.front() * 1000.0, grants[std::min(grants.size(), static_cast<std::size_t>(k)) - 1] * 1000.0,
                    percentile(handover, 0.5), percentile(handover, 0.9), percentile(handover, 1.0), handover.size());
    for (auto& m : members) m->budget->stop();
    return served.load() == storm && most.load() <= k ? 0 : 1;
}
