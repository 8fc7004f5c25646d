// SPDX-License-Identifier: MIT
// Fault-injection soak: forewarn-emulator plays 54 Azure events over four VMs (own events the
// poller approves, other VMs' events that start at NotBefore, hardware failures that appear
// Started, events Azure cancels) while about 30% of Azure requests meet a fault (410, 429, 500,
// 503, a stall past the request timeout, an empty 200, truncated and malformed JSON, a connection
// closed mid-body), on top of IMDS's own 5 requests/s limit. An in-process poller over
// curl_transport must deliver every prepare, started and recover exactly once, in order per
// event, with the right recover reason and no spurious recover; its memory must stay flat.
//
// Hidden from the ordinary runs (about 90 s of real time): `integration "[soak]"`; CI runs it
// once (see docs/reliability.md). Figures are printed on one "soak:" line.
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/poller.hpp>

#include "catch.hpp"
#include "emulator_process.hpp"

#include <httplib.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace test_soak {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::change;
using forewarn::change_kind;
using forewarn::recover_reason;
using forewarn_test::emulator_process;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FOREWARN_SOAK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FOREWARN_SOAK_SANITIZED 1
#endif
#endif
#ifndef FOREWARN_SOAK_SANITIZED
#define FOREWARN_SOAK_SANITIZED 0
#endif

namespace {

/// Resident set size of this process, in KiB (/proc/self/statm).
long rss_kib() {
    std::ifstream in("/proc/self/statm");
    long pages_total = 0, pages_resident = 0;
    in >> pages_total >> pages_resident;
    return pages_resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

enum class plan { own, other_vm, hardware_failure, cancelled };

struct planned_event {
    std::string id;
    plan what = plan::own;
};

// The deliveries each kind of event must produce, in this order.
std::vector<std::string> expected_for(plan p) {
    switch (p) {
    case plan::own:
    case plan::other_vm: return {"prepare", "started", "recover:completed"};
    case plan::hardware_failure: return {"started", "recover:completed"};
    case plan::cancelled: return {"prepare", "recover:cancelled"};
    }
    return {};
}

constexpr int event_count = 54;
constexpr double spacing_s = 1.2;  // between two announcements

// The scenario: event i at 2 s + i * spacing, notice 10 s, impact 8 s (real time: speed 1).
std::string scenario_json(std::vector<planned_event>& events) {
    static const char* const types[] = {"Freeze", "Reboot", "Redeploy", "Preempt", "Terminate"};
    std::string steps;
    auto add = [&](const std::string& s) {
        if (!steps.empty()) steps += ",\n";
        steps += s;
    };
    for (int i = 0; i < event_count; ++i) {
        char id[64];
        std::snprintf(id, sizeof id, "50AC0000-0000-4000-8000-%012d", i);
        const double at = 2.0 + i * spacing_s;
        const std::string at_s = std::to_string(static_cast<int>(at * 1000)) + "ms";
        planned_event e{id, plan::own};
        const char* type = types[i % 5];
        switch (i % 6) {
        case 0:
        case 4:  // this VM's (vm0) events, alone or with another VM: the poller approves them
            e.what = plan::own;
            add(std::string(R"({"at": ")") + at_s + R"(", "azure_event": {"EventId": ")" + id + R"(", "EventType": ")" +
                type + R"(", "Resources": [)" + (i % 6 == 0 ? R"("vm0")" : R"("vm1", "vm0")") +
                R"(], "notice": "10s", "impact": "8s"}})");
            break;
        case 1:
        case 5:  // other VMs' events: nobody approves them, they start at NotBefore
            e.what = plan::other_vm;
            add(std::string(R"({"at": ")") + at_s + R"(", "azure_event": {"EventId": ")" + id + R"(", "EventType": ")" +
                type + R"(", "Resources": [)" + (i % 6 == 1 ? R"("vm1")" : R"("vm2", "vm3")") +
                R"(], "notice": "10s", "impact": "8s"}})");
            break;
        case 2:
            e.what = plan::hardware_failure;
            add(std::string(R"({"at": ")") + at_s + R"(", "hardware_failure": {"EventId": ")" + id +
                R"(", "Resources": ["vm2"], "impact": "8s"}})");
            break;
        case 3:  // Azure withdraws it 5 s into its 10 s notice
            e.what = plan::cancelled;
            add(std::string(R"({"at": ")") + at_s + R"(", "azure_event": {"EventId": ")" + id + R"(", "EventType": ")" +
                type + R"(", "Resources": ["vm3"], "notice": "10s", "impact": "8s"}})");
            add(std::string(R"({"at": ")") + std::to_string(static_cast<int>((at + 5) * 1000)) + R"(ms", "cancel": ")" +
                id + R"("})");
            break;
        }
        events.push_back(e);
    }
    // Nine faults drawn one after another, each for ~3.9% of Azure requests: 1 - 0.961^9 ~ 30%.
    const char* faults[] = {
        R"({"kind": "status", "status": 410})", R"({"kind": "status", "status": 429})",
        R"({"kind": "status", "status": 500})", R"({"kind": "status", "status": 503})",
        R"({"kind": "stall", "duration": "3s"})",  // past the client's 1 s timeout
        R"({"kind": "empty_body"})", R"({"kind": "truncated_json"})", R"({"kind": "malformed_json"})",
        R"({"kind": "close_mid_body"})"};
    for (const char* f : faults) {
        std::string spec(f);
        spec.insert(spec.size() - 1, R"(, "service": "azure", "fraction": 0.039)");
        add(R"({"at": "0s", "fault": )" + spec + "}");
    }
    return R"({"name": "soak", "speed": 1, "seed": 20261121, "rate_limit": 5,
  "vms": [{"name": "vm0"}, {"name": "vm1"}, {"name": "vm2"}, {"name": "vm3"}],
  "steps": [
)" + steps + "\n]}\n";
}

struct delivery {
    std::string id;
    std::string what;  // prepare, started, recover:<reason>, updated
};

}  // namespace

TEST_CASE("soak: 54 events over 4 VMs, ~30% faulty answers: each change delivered exactly once, memory flat",
          "[.][soak]") {
    std::vector<planned_event> events;
    const std::string scenario = scenario_json(events);
    char dir_template[] = "/tmp/forewarn-soak-XXXXXX";
    REQUIRE(::mkdtemp(dir_template) != nullptr);
    const std::string path = std::string(dir_template) + "/soak.json";
    {
        std::ofstream out(path);
        out << scenario;
    }

    emulator_process emu({"--scenario", path, "--quiet"});
    const auto started_at = std::chrono::steady_clock::now();

    std::mutex mutex;
    std::vector<delivery> log;
    std::map<std::string, int> errors;  // by errc name
    std::size_t approvals = 0;
    auto record = [&](const change& c, std::string what) {
        std::lock_guard<std::mutex> lock(mutex);
        log.push_back({c.event.id, std::move(what)});
    };

    forewarn::poller_handlers h;
    h.on_prepare = [&](const change& c, forewarn::approval_handle ready) {
        record(c, "prepare");
        ready.ready();
    };
    h.on_started = [&](const change& c) { record(c, "started"); };
    h.on_recover = [&](const change& c) { record(c, "recover:" + std::string(forewarn::to_string(c.reason))); };
    h.on_updated = [&](const change& c) { record(c, "updated"); };
    h.on_error = [&](const forewarn::error& e) {
        std::lock_guard<std::mutex> lock(mutex);
        ++errors[std::string(forewarn::to_string(e.code))];
    };
    h.on_approved = [&](const std::vector<std::string>& ids) {
        std::lock_guard<std::mutex> lock(mutex);
        approvals += ids.size();
    };

    forewarn::azure::client_options co;
    co.endpoint = emu.base_url();
    co.self_name = "vm0";
    co.first_call_timeout = 1s;  // a stall must not cost the 150 s a real first call may take
    co.poll_timeout = 1s;
    co.connect_timeout = 1s;
    co.retry.max_attempts = 4;
    co.retry.initial_backoff = 50ms;
    co.retry.max_backoff = 400ms;
    co.poll_interval = 300ms;
    forewarn::poller<forewarn::azure::scheduled_events_client> poller(forewarn::azure::scheduled_events_client(co), h);
    REQUIRE(poller.start().has_value());

    std::set<std::string> final_ids;  // events whose last expected delivery arrived
    auto finished = [&]() {
        std::lock_guard<std::mutex> lock(mutex);
        std::size_t n = 0;
        for (const auto& d : log)
            if (d.what.rfind("recover:", 0) == 0) ++n;
        return n;
    };
    // Memory is measured once the poller is warm (first events through, every code path run).
    long rss_start = 0;
    const auto deadline = started_at + 150s;  // the scenario's own end is at ~84 s
    while (std::chrono::steady_clock::now() < deadline && finished() < events.size()) {
        if (rss_start == 0 && finished() >= 6) rss_start = rss_kib();
        std::this_thread::sleep_for(200ms);  // real time: the emulator's clock
    }
    const long rss_end = rss_kib();
    poller.stop();
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_at);

    // What the emulator saw.
    httplib::Client control("127.0.0.1", emu.port());
    control.set_read_timeout(20, 0);
    auto answer = control.Get("/emulator/v1/requests");
    REQUIRE(answer);
    auto requests = forewarn::detail::parse_json(answer->body);
    REQUIRE(requests.has_value());
    std::size_t azure = 0, faulted = 0;
    std::map<std::string, int> by_fault;
    for (const auto& r : (*requests)["requests"].GetArray()) {
        if (std::string(r["service"].GetString()) != "azure") continue;
        ++azure;
        const std::string fault = r["fault"].GetString();
        if (fault.empty()) continue;
        ++faulted;
        ++by_fault[fault];
    }

    std::map<std::string, std::vector<std::string>> per_event;
    for (const auto& d : log) per_event[d.id].push_back(d.what);
    std::size_t prepares = 0, starteds = 0, recovers = 0, updates = 0;
    for (const auto& d : log) {
        if (d.what == "prepare") ++prepares;
        else if (d.what == "started") ++starteds;
        else if (d.what == "updated") ++updates;
        else ++recovers;
    }
    std::string fault_text, error_text;
    for (const auto& [k, n] : by_fault) fault_text += " " + k + "=" + std::to_string(n);
    for (const auto& [k, n] : errors) error_text += " " + k + "=" + std::to_string(n);
    std::printf("soak: %d events, %lld s, azure requests %zu, faulted %zu (%.1f%%):%s; deliveries prepare %zu, started %zu, "
                "recover %zu, updated %zu; approved %zu; poll errors:%s; RSS start %ld KiB, end %ld KiB (%+ld KiB)%s\n",
                event_count, static_cast<long long>(elapsed.count()), azure, faulted,
                azure ? 100.0 * static_cast<double>(faulted) / static_cast<double>(azure) : 0.0, fault_text.c_str(),
                prepares, starteds, recovers, updates, approvals, error_text.c_str(), rss_start, rss_end,
                rss_end - rss_start, FOREWARN_SOAK_SANITIZED ? " (sanitizer build: RSS not asserted)" : "");
    std::fflush(stdout);

    // The faults really happened, at about the planned ratio, and of every kind.
    CHECK(azure >= 150);
    CHECK(static_cast<double>(faulted) >= 0.2 * static_cast<double>(azure));
    CHECK(static_cast<double>(faulted) <= 0.45 * static_cast<double>(azure));
    for (const char* kind : {"status 410", "status 429", "status 500", "status 503", "stall", "empty_body",
                             "truncated_json", "malformed_json", "close_mid_body"}) {
        INFO(kind);
        CHECK(by_fault.count(kind) == 1);
    }

    // Exactly once, in order, per event; nothing for an id the scenario does not have.
    for (const auto& e : events) {
        INFO(e.id);
        const auto it = per_event.find(e.id);
        REQUIRE(it != per_event.end());
        std::vector<std::string> got;
        for (const auto& w : it->second)
            if (w != "updated") got.push_back(w);
        CHECK(got == expected_for(e.what));
    }
    CHECK(per_event.size() == events.size());
    CHECK(recovers == events.size());

    // Flat memory: what a poller holds does not grow with the number of polls or faults.
    if (!FOREWARN_SOAK_SANITIZED) {
        REQUIRE(rss_start > 0);
        CHECK(rss_end - rss_start < 4096);
    }
    std::remove(path.c_str());
    ::rmdir(dir_template);
}

}  // namespace test_soak
