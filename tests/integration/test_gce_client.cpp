// SPDX-License-Identifier: MIT
// gce::metadata_client (curl_transport) against an in-process metadata server on 127.0.0.1 that
// implements the real hanging GET: wait_for_change, last_etag, timeout_sec, 404 while waiting.
#include <forewarn/curl_transport.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/gce/metadata_client.hpp>

#include "catch.hpp"

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using forewarn::cloud;
using forewarn::document;
using forewarn::errc;
using forewarn::event_type;
using forewarn::result;
namespace gce = forewarn::gce;
using steady = std::chrono::steady_clock;

namespace {

// A small GCE metadata server: keys with values and ETags, hanging GETs as the seed describes.
class fake_metadata_server {
public:
    fake_metadata_server() {
        set("instance/maintenance-event", "NONE");
        set("instance/preempted", "FALSE");
        set("instance/name", "vm-loop");
        set("instance/id", "42");
        // Without TCP_NODELAY httplib's header and body writes meet the client's delayed ACK
        // (40 ms and more on Linux), which is the server's artefact, not the client's latency.
        server_.set_tcp_nodelay(true);
        server_.Get(R"(/computeMetadata/v1/(.*))", [this](const httplib::Request& req, httplib::Response& res) {
            handle(req, res);
        });
        port_ = server_.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
    }
    ~fake_metadata_server() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        cv_.notify_all();
        server_.stop();
        thread_.join();
    }
    fake_metadata_server(const fake_metadata_server&) = delete;
    fake_metadata_server& operator=(const fake_metadata_server&) = delete;

    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

    /// Sets a key and gives it a new ETag; wakes the watches on it.
    void set(const std::string& key, const std::string& value) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            keys_[key] = {value, "etag-" + std::to_string(++version_)};
        }
        cv_.notify_all();
    }
    void erase(const std::string& key) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            keys_.erase(key);
            ++version_;
        }
        cv_.notify_all();
    }
    /// The next `n` hanging GETs wait `hold`, then answer 503.
    void fail_next_watches(int n, std::chrono::milliseconds hold) {
        std::lock_guard<std::mutex> lock(mutex_);
        fail_watches_ = n;
        fail_hold_ = hold;
    }
    /// Answers as something that is not the metadata server (no Metadata-Flavor header).
    void impersonate(bool on) {
        std::lock_guard<std::mutex> lock(mutex_);
        impostor_ = on;
    }
    /// Waits until `n` hanging GETs are held at once; false after 10 s.
    bool wait_hanging(int n) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, 10s, [&] { return hanging_ >= n; });
    }
    /// Request targets received so far ("/computeMetadata/v1/...?...").
    std::vector<std::string> log() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return log_;
    }
    int count(const std::string& part) const {
        int n = 0;
        for (const auto& l : log())
            if (l.find(part) != std::string::npos) ++n;
        return n;
    }

private:
    struct entry {
        std::string value, etag;
    };

    void handle(const httplib::Request& req, httplib::Response& res) {
        std::unique_lock<std::mutex> lock(mutex_);
        std::string target = req.path;
        if (!req.params.empty()) {
            target += '?';
            bool first = true;
            for (const auto& p : req.params) {
                if (!first) target += '&';
                first = false;
                target += p.first + '=' + p.second;
            }
        }
        log_.push_back(target);
        if (impostor_) {
            res.set_header("ETag", "impostor");
            res.set_content("NONE", "text/plain");
            return;
        }
        res.set_header("Metadata-Flavor", "Google");
        if (req.get_header_value("Metadata-Flavor") != "Google" || req.has_header("X-Forwarded-For")) {
            res.status = 403;
            return;
        }
        const std::string key = req.matches[1];
        if (key.empty()) {  // the root directory: what detect_cloud probes
            res.set_content("instance/\nproject/\n", "application/text");
            return;
        }
        const bool waiting = req.get_param_value("wait_for_change") == "true";
        if (waiting && fail_watches_ > 0) {
            --fail_watches_;
            const auto hold = fail_hold_;
            cv_.wait_for(lock, hold, [&] { return stopping_; });
            res.status = 503;
            return;
        }
        auto it = keys_.find(key);
        if (it == keys_.end()) {
            res.status = 404;
            return;
        }
        if (waiting) {
            const std::string start_etag = it->second.etag;
            const std::string last = req.get_param_value("last_etag");
            const std::string timeout_param = req.get_param_value("timeout_sec");
            const auto timeout = std::chrono::seconds(timeout_param.empty() ? 3600 : std::stol(timeout_param));
            if (last.empty() || last == start_etag) {
                ++hanging_;
                cv_.notify_all();
                cv_.wait_for(lock, timeout, [&] {
                    auto now = keys_.find(key);
                    return stopping_ || now == keys_.end() || now->second.etag != start_etag;
                });
                --hanging_;
                it = keys_.find(key);
                if (it == keys_.end()) {
                    res.status = 404;
                    return;
                }
            }
        }
        res.set_header("ETag", it->second.etag);
        res.set_content(it->second.value, "application/text");
    }

    httplib::Server server_;
    int port_ = 0;
    std::thread thread_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::map<std::string, entry> keys_;
    std::vector<std::string> log_;
    unsigned version_ = 0;
    int hanging_ = 0;
    int fail_watches_ = 0;
    std::chrono::milliseconds fail_hold_{0};
    bool impostor_ = false;
    bool stopping_ = false;
};

gce::client_options options_for(const fake_metadata_server& s) {
    gce::client_options o;
    o.endpoint = s.url();
    o.rate_limit = false;
    o.retry.initial_backoff = 5ms;
    o.retry.max_backoff = 20ms;
    o.watch_margin = 2s;
    return o;
}

double ms_since(steady::time_point t) {
    return std::chrono::duration<double, std::milli>(steady::now() - t).count();
}

}  // namespace

TEST_CASE("loopback: get and fetch over HTTP, flavor header both ways", "[gce][loopback]") {
    fake_metadata_server s;
    gce::metadata_client c(options_for(s));
    auto name = c.get("instance/name");
    REQUIRE(name);
    CHECK(name->value == "vm-loop");
    CHECK_FALSE(name->etag.empty());
    auto doc = c.fetch();
    REQUIRE(doc);
    CHECK(doc->origin == cloud::gce);
    CHECK(doc->events.empty());
    auto id = c.identity();
    REQUIRE(id);
    CHECK(id->name == "vm-loop");
    CHECK(id->id == "42");
    auto gone = c.get("instance/nothing-here");
    REQUIRE_FALSE(gone);
    CHECK(gone.error().code == errc::not_found);
}

TEST_CASE("loopback: a change between two watches is not lost (last_etag)", "[gce][loopback]") {
    fake_metadata_server s;
    gce::metadata_client c(options_for(s));
    auto first = c.fetch();
    REQUIRE(first);
    // The change lands while no watch is held.
    s.set("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE");
    const auto start = steady::now();
    auto next = c.wait_for_change(*first, 30s);
    REQUIRE(next);
    CHECK(ms_since(start) < 10000);  // answered at once, not after timeout_sec
    REQUIRE(next->events.size() == 1);
    CHECK(next->events[0].type == event_type::live_migrate);
    CHECK(next->incarnation != first->incarnation);

    // Same with watch() on one key.
    auto v = c.get("instance/preempted");
    REQUIRE(v);
    s.set("instance/preempted", "TRUE");
    auto w = c.watch("instance/preempted", v->etag, 30s);
    REQUIRE(w);
    CHECK(w->value == "TRUE");
    CHECK(w->etag != v->etag);
}

TEST_CASE("loopback: wait_for_change returns when either key changes during the hanging GETs",
          "[gce][loopback]") {
    const std::string key = GENERATE(std::string("instance/maintenance-event"), std::string("instance/preempted"));
    const std::string value = key == "instance/preempted" ? "TRUE" : "TERMINATE_ON_HOST_MAINTENANCE";
    fake_metadata_server s;
    gce::metadata_client c(options_for(s));
    auto first = c.fetch();
    REQUIRE(first);
    std::optional<result<document>> got;
    steady::time_point changed_at, returned_at;
    std::thread waiter([&] {
        got = c.wait_for_change(*first, 30s);
        returned_at = steady::now();
    });
    REQUIRE(s.wait_hanging(2));  // both keys are watched at once
    changed_at = steady::now();
    s.set(key, value);
    waiter.join();
    REQUIRE(got);
    REQUIRE(*got);
    REQUIRE((*got)->events.size() == 1);
    CHECK((*got)->events[0].type ==
          (key == "instance/preempted" ? event_type::preempted : event_type::host_terminate));
    const double latency = std::chrono::duration<double, std::milli>(returned_at - changed_at).count();
    CHECK(latency < 5000);  // far below the 30 s timeout_sec; the figure itself is printed
    std::printf("gce loopback: change of %s reached the caller in %.2f ms\n", key.c_str(), latency);
    // One hanging GET per key and nothing else: the key that did not change keeps its value.
    CHECK(s.count("wait_for_change=true") == 2);
    CHECK(s.log().size() == 4);  // fetch (2) + the two watches

    // The next wait starts from the new ETags: nothing is reported twice.
    auto again = c.wait_for_change(**got, 1s);
    REQUIRE(again);
    CHECK(*again == **got);
}

TEST_CASE("loopback: a 503 mid-watch is retried with the same last_etag", "[gce][loopback]") {
    fake_metadata_server s;
    gce::metadata_client c(options_for(s));
    auto v = c.get("instance/maintenance-event");
    REQUIRE(v);
    s.fail_next_watches(1, 100ms);
    std::optional<result<gce::metadata_value>> got;
    std::thread waiter([&] { got = c.watch("instance/maintenance-event", v->etag, 30s); });
    REQUIRE(s.wait_hanging(1));  // the retry is hanging now
    s.set("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE");
    waiter.join();
    REQUIRE(got);
    REQUIRE(*got);
    CHECK((*got)->value == "MIGRATE_ON_HOST_MAINTENANCE");
    CHECK(s.count("wait_for_change=true") == 2);
    CHECK(s.count("last_etag=" + v->etag) == 2);
}

TEST_CASE("loopback: timeout_sec is honoured: the current value comes back after it", "[gce][loopback]") {
    fake_metadata_server s;
    gce::metadata_client c(options_for(s));
    auto first = c.fetch();
    REQUIRE(first);
    auto start = steady::now();
    auto same = c.wait_for_change(*first, 1s);
    const double waited = ms_since(start);
    REQUIRE(same);
    CHECK(*same == *first);
    CHECK(waited >= 900);    // the server held it for timeout_sec
    CHECK(waited < 10000);   // and the client did not wait for its own, longer timeout
    CHECK(s.count("timeout_sec=1") == 2);  // one request per key, no busy loop
    std::printf("gce loopback: wait_for_change(timeout_sec=1) with no change returned after %.0f ms\n", waited);

    auto v = c.get("instance/name");
    REQUIRE(v);
    start = steady::now();
    auto w = c.watch("instance/name", v->etag, 1s);
    REQUIRE(w);
    CHECK(w->etag == v->etag);
    CHECK(ms_since(start) >= 900);
}

TEST_CASE("loopback: cancel ends a hanging watch promptly; reset makes the client usable", "[gce][loopback]") {
    fake_metadata_server s;
    gce::metadata_client c(options_for(s));
    auto first = c.fetch();
    REQUIRE(first);
    SECTION("watch") {
        auto v = c.get("instance/maintenance-event");
        REQUIRE(v);
        std::optional<result<gce::metadata_value>> got;
        steady::time_point returned_at;
        std::thread waiter([&] {
            got = c.watch("instance/maintenance-event", v->etag, 30s);
            returned_at = steady::now();
        });
        REQUIRE(s.wait_hanging(1));
        const auto cancelled_at = steady::now();
        c.cancel();
        waiter.join();
        REQUIRE(got);
        REQUIRE_FALSE(*got);
        CHECK(got->error().code == errc::cancelled);
        const double ms = std::chrono::duration<double, std::milli>(returned_at - cancelled_at).count();
        CHECK(ms < 5000);
        std::printf("gce loopback: cancel() ended a hanging watch in %.2f ms\n", ms);
    }
    SECTION("wait_for_change") {
        std::optional<result<document>> got;
        steady::time_point returned_at;
        std::thread waiter([&] {
            got = c.wait_for_change(*first, 30s);
            returned_at = steady::now();
        });
        REQUIRE(s.wait_hanging(2));
        const auto cancelled_at = steady::now();
        c.cancel();
        waiter.join();
        REQUIRE(got);
        REQUIRE_FALSE(*got);
        CHECK(got->error().code == errc::cancelled);
        const double ms = std::chrono::duration<double, std::milli>(returned_at - cancelled_at).count();
        CHECK(ms < 5000);
        std::printf("gce loopback: cancel() ended wait_for_change (two hanging GETs) in %.2f ms\n", ms);
    }
    c.reset();
    REQUIRE(c.fetch());
}

TEST_CASE("loopback: 404 while waiting means the key is gone", "[gce][loopback]") {
    fake_metadata_server s;
    s.set("instance/attributes/flag", "on");
    gce::metadata_client c(options_for(s));
    auto v = c.get("instance/attributes/flag");
    REQUIRE(v);
    std::optional<result<gce::metadata_value>> got;
    std::thread waiter([&] { got = c.watch("instance/attributes/flag", v->etag, 30s); });
    REQUIRE(s.wait_hanging(1));
    s.erase("instance/attributes/flag");
    waiter.join();
    REQUIRE(got);
    REQUIRE_FALSE(*got);
    CHECK(got->error().code == errc::not_found);
}

TEST_CASE("loopback: the flavor check refuses an impostor", "[gce][loopback]") {
    fake_metadata_server s;
    s.impersonate(true);
    gce::metadata_client c(options_for(s));
    auto doc = c.fetch();
    REQUIRE_FALSE(doc);
    CHECK(doc.error().code == errc::not_metadata_server);
    CHECK(s.log().size() == 1);  // refused at once, not retried
}

TEST_CASE("loopback: detect_cloud finds the GCE server and stays within its timeout", "[detect][loopback]") {
    fake_metadata_server gce_server;
    forewarn::detect_options o;
    o.gce_endpoint = gce_server.url();
    o.azure_endpoint = gce_server.url();  // the GCE server does not pass for Azure
    auto d = forewarn::detect_cloud(o);
    REQUIRE(d);
    CHECK(d->found == cloud::gce);
    CHECK_FALSE(d->azure);

    // Off-cloud: a server that never answers. detect_cloud gives up after its timeout.
    httplib::Server silent;
    std::mutex m;
    std::condition_variable cv;
    bool stop = false;
    silent.Get(R"(.*)", [&](const httplib::Request&, httplib::Response&) {
        std::unique_lock<std::mutex> lock(m);
        cv.wait_for(lock, 20s, [&] { return stop; });
    });
    const int port = silent.bind_to_any_port("127.0.0.1");
    std::thread th([&] { silent.listen_after_bind(); });
    for (int i = 0; i < 5000 && !silent.is_running(); ++i) std::this_thread::sleep_for(1ms);
    o.gce_endpoint = o.azure_endpoint = "http://127.0.0.1:" + std::to_string(port);
    o.timeout = 300ms;
    const auto start = steady::now();
    auto none = forewarn::detect_cloud(o);
    const double took = ms_since(start);
    {
        std::lock_guard<std::mutex> lock(m);
        stop = true;
    }
    cv.notify_all();
    silent.stop();
    th.join();
    REQUIRE(none);
    CHECK(none->found == cloud::none);
    CHECK(none->gce_error.code == errc::timeout);
    CHECK(took < 5000);
    std::printf("gce loopback: detect_cloud(timeout=300 ms) against a silent server took %.0f ms\n", took);
}
