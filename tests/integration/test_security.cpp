// SPDX-License-Identifier: MIT
// Hostile environments and servers, end to end through forewarn's two clients over curl_transport
// (test_curl_transport.cpp covers the transport alone; this file adds what only the clients, the
// emulator's request log or a memory measurement can show): proxy variables with a trap behind
// them, redirects to another port, 100 MiB answers with bounded memory, 10^6-deep nesting over
// HTTP, a trickling server under the clients' retries, the identifying headers on every request
// (retries and hanging GETs included) read from forewarn-emulator's log, and approvals of ids
// with quotes, backslashes and control characters.
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/gce/metadata_client.hpp>

#include "catch.hpp"
#include "emulator_process.hpp"
#include "loopback.hpp"

#include <httplib.h>

#include <sys/resource.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FOREWARN_SECURITY_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FOREWARN_SECURITY_SANITIZED 1
#endif
#endif
#ifndef FOREWARN_SECURITY_SANITIZED
#define FOREWARN_SECURITY_SANITIZED 0
#endif

namespace test_security {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::errc;
using forewarn_test::emulator_process;
using forewarn_test::loopback_server;
using forewarn_test::raw_listener;
using forewarn_test::raw_server;
using forewarn_test::scoped_env;
using forewarn_test::signal_count;

namespace {

using clock_type = std::chrono::steady_clock;

long long millis_since(clock_type::time_point start) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count());
}

/// The peak resident set size of this process so far, in KiB (Linux: ru_maxrss is in KiB).
long peak_rss_kib() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

forewarn::azure::client_options azure_options(const std::string& endpoint) {
    forewarn::azure::client_options o;
    o.endpoint = endpoint;
    o.rate_limit = false;
    o.first_call_timeout = 5s;
    o.poll_timeout = 5s;
    o.retry.max_attempts = 3;
    o.retry.initial_backoff = 10ms;
    o.retry.max_backoff = 20ms;
    return o;
}

forewarn::gce::client_options gce_options(const std::string& endpoint) {
    forewarn::gce::client_options o;
    o.endpoint = endpoint;
    o.rate_limit = false;
    o.request_timeout = 5s;
    o.watch_timeout = 10s;
    o.retry.max_attempts = 3;
    o.retry.initial_backoff = 10ms;
    o.retry.max_backoff = 20ms;
    return o;
}

std::string why(const forewarn::error& e) { return e.describe(); }

rapidjson::Document json(const std::string& text) {
    auto d = forewarn::detail::parse_json(text);
    INFO(text.substr(0, 300));
    REQUIRE(d.has_value());
    return std::move(*d);
}

std::string str(const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

}  // namespace

TEST_CASE("security: proxy variables point at a trap - both clients go direct and identify themselves on every "
          "request, retries and hanging GETs included (emulator request log)",
          "[security][emulator]") {
    emulator_process emu({"--quiet"});
    httplib::Client control("127.0.0.1", emu.port());
    control.set_read_timeout(20, 0);
    // Every request of both services meets a fault first, so the log holds retries too.
    REQUIRE(control.Post("/emulator/v1/faults", R"({"kind": "status", "status": 503, "service": "azure", "count": 2})",
                         "application/json")->status == 200);
    REQUIRE(control.Post("/emulator/v1/faults", R"({"kind": "status", "status": 503, "service": "gce", "count": 2})",
                         "application/json")->status == 200);
    auto created = control.Post("/emulator/v1/azure/events", R"({"EventId": "SEC-1", "EventType": "Freeze", "Resources": ["vm0"]})",
                                "application/json");
    REQUIRE(created);
    REQUIRE(created->status == 200);

    raw_listener trap;
    REQUIRE(trap.ok());
    const std::string proxy = "http://127.0.0.1:" + std::to_string(trap.port());
    scoped_env e1("http_proxy", proxy.c_str());
    scoped_env e2("HTTP_PROXY", proxy.c_str());
    scoped_env e3("https_proxy", proxy.c_str());
    scoped_env e4("HTTPS_PROXY", proxy.c_str());
    scoped_env e5("all_proxy", proxy.c_str());
    scoped_env e6("ALL_PROXY", proxy.c_str());
    scoped_env e7("no_proxy", nullptr);
    scoped_env e8("NO_PROXY", nullptr);

    forewarn::azure::scheduled_events_client azure(azure_options(emu.base_url()));
    auto doc = azure.fetch();
    INFO((doc ? std::string("ok") : why(doc.error())));
    REQUIRE(doc.has_value());
    REQUIRE(doc->find("SEC-1"));
    REQUIRE(azure.approve({"SEC-1"}).has_value());
    auto who = azure.identity();
    INFO((who ? std::string("ok") : why(who.error())));
    REQUIRE(who.has_value());
    CHECK(who->name == "vm0");

    forewarn::gce::metadata_client gce(gce_options(emu.base_url()));
    auto snapshot = gce.fetch();
    INFO((snapshot ? std::string("ok") : why(snapshot.error())));
    REQUIRE(snapshot.has_value());
    // A hanging GET on both keys, released by a change made while it waits.
    std::thread changer([&] {
        std::this_thread::sleep_for(300ms);
        httplib::Client c("127.0.0.1", emu.port());
        c.Post("/emulator/v1/gce", R"({"instance/maintenance-event": "MIGRATE_ON_HOST_MAINTENANCE"})", "application/json");
    });
    auto changed = gce.next();  // after the first document: hanging GETs (watch_timeout 10 s)
    changer.join();
    INFO((changed ? std::string("ok") : why(changed.error())));
    REQUIRE(changed.has_value());
    CHECK(changed->find("maintenance-event:MIGRATE_ON_HOST_MAINTENANCE"));
    REQUIRE(gce.identity().has_value());

    const int knocked = trap.accept_within(200ms);
    CHECK(knocked < 0);  // nothing ever went to the proxy
    if (knocked >= 0) ::close(knocked);

    auto log = json(control.Get("/emulator/v1/requests")->body);
    int azure_requests = 0, gce_requests = 0, faulted = 0, hanging = 0;
    for (const auto& req : log["requests"].GetArray()) {
        const std::string service = str(req["service"]);
        if (service != "azure" && service != "gce") continue;
        INFO(service << " " << str(req["method"]) << " " << str(req["target"]));
        std::vector<std::string> metadata, flavor;
        bool forwarded = false;
        for (const auto& h : req["headers"].GetArray()) {
            if (forewarn::detail::iequals(str(h[0]), "Metadata")) metadata.push_back(str(h[1]));
            if (forewarn::detail::iequals(str(h[0]), "Metadata-Flavor")) flavor.push_back(str(h[1]));
            if (forewarn::detail::iequals(str(h[0]), "X-Forwarded-For")) forwarded = true;
        }
        CHECK_FALSE(forwarded);
        if (!str(req["fault"]).empty()) ++faulted;
        if (service == "azure") {
            ++azure_requests;
            CHECK(metadata == std::vector<std::string>{"true"});
            CHECK(flavor.empty());
        } else {
            ++gce_requests;
            CHECK(flavor == std::vector<std::string>{"Google"});
            CHECK(metadata.empty());
            if (str(req["target"]).find("wait_for_change=true") != std::string::npos) ++hanging;
        }
    }
    CHECK(azure_requests >= 5);  // 2 faulted + fetch, approve, identity
    CHECK(gce_requests >= 8);    // 2 faulted + fetch (2 keys), watch (2 keys), identity
    CHECK(faulted == 4);
    CHECK(hanging >= 1);
}

TEST_CASE("security: ids with quotes, backslashes and control characters are approved with a well-formed body",
          "[security][emulator][approve]") {
    emulator_process emu({"--quiet"});
    httplib::Client control("127.0.0.1", emu.port());
    control.set_read_timeout(20, 0);
    const std::vector<std::string> ids = {
        "q\"uote\"", "back\\slash\\", "ctl\x01\x1f\t\r\n", "mix\"\\\b\f\x7f/</script>", "\xC3\xA9v\xC3\xA9nement \xE2\x98\x83",
    };
    for (const auto& id : ids) {
        forewarn::detail::json_writer w;  // the control API takes JSON: write the id escaped
        w.begin_object();
        w.key("EventId");
        w.string(id);
        w.key("EventType");
        w.string("Reboot");
        w.key("Resources");
        w.begin_array();
        w.string("vm0");
        w.end_array();
        w.end_object();
        REQUIRE(w.complete());
        auto r = control.Post("/emulator/v1/azure/events", w.str(), "application/json");
        REQUIRE(r);
        INFO(r->body);
        REQUIRE(r->status == 200);
        CHECK(str(json(r->body)["EventId"]) == id);
    }

    forewarn::azure::scheduled_events_client azure(azure_options(emu.base_url()));
    auto doc = azure.fetch();
    INFO((doc ? std::string("ok") : why(doc.error())));
    REQUIRE(doc.has_value());
    for (const auto& id : ids) {
        INFO(id);
        REQUIRE(doc->find(id));
        CHECK(doc->find(id)->status == forewarn::event_status::scheduled);
    }
    auto approved = azure.approve(ids);
    INFO((approved ? std::string("ok") : why(approved.error())));
    REQUIRE(approved.has_value());

    // The emulator took every id for what it is (it answers 400 to an unknown id)...
    auto after = azure.fetch();
    REQUIRE(after.has_value());
    for (const auto& id : ids) {
        INFO(id);
        REQUIRE(after->find(id));
        CHECK(after->find(id)->status == forewarn::event_status::started);
    }
    // ...and the body on the wire is one JSON object that gives the ids back byte for byte.
    auto log = json(control.Get("/emulator/v1/requests")->body);
    int posts = 0;
    for (const auto& req : log["requests"].GetArray()) {
        if (str(req["service"]) != "azure" || str(req["method"]) != "POST") continue;
        ++posts;
        const std::string body = str(req["body"]);
        for (const char c : body) CHECK(static_cast<unsigned char>(c) >= 0x20);  // control characters escaped
        auto parsed = json(body);
        REQUIRE(parsed.IsObject());
        REQUIRE(parsed.MemberCount() == 1);
        const auto& list = parsed["StartRequests"];
        REQUIRE(list.Size() == ids.size());
        for (rapidjson::SizeType i = 0; i < list.Size(); ++i) CHECK(str(list[i]["EventId"]) == ids[i]);
    }
    CHECK(posts == 1);
}

TEST_CASE("security: a redirect to another port is never followed by either client", "[security]") {
    signal_count target_hits;
    loopback_server target([&](httplib::Server& s, loopback_server&) {
        s.Get(".*", [&](const httplib::Request&, httplib::Response& res) {
            target_hits.add();
            res.set_header("Metadata-Flavor", "Google");
            res.set_content(R"({"DocumentIncarnation":9,"Events":[]})", "application/json");
        });
    });
    REQUIRE(target.port() > 0);
    const std::string elsewhere = target.url("/elsewhere");
    loopback_server origin([&](httplib::Server& s, loopback_server&) {
        s.Get(".*", [&](const httplib::Request&, httplib::Response& res) {
            res.set_header("Metadata-Flavor", "Google");
            res.set_redirect(elsewhere, 302);
        });
    });
    REQUIRE(origin.port() > 0);
    const std::string base = "http://127.0.0.1:" + std::to_string(origin.port());

    forewarn::azure::scheduled_events_client azure(azure_options(base));
    auto doc = azure.fetch();
    REQUIRE_FALSE(doc.has_value());
    INFO(why(doc.error()));
    CHECK(doc.error().http_status == 302);
    forewarn::gce::metadata_client gce(gce_options(base));
    auto snapshot = gce.fetch();
    REQUIRE_FALSE(snapshot.has_value());
    INFO(why(snapshot.error()));
    CHECK(snapshot.error().http_status == 302);
    CHECK(target_hits.get() == 0);
}

TEST_CASE("security: a 100 MiB answer, chunked or with Content-Length, is refused with bounded memory", "[security][body_cap]") {
    static const std::string chunk(64 * 1024, '[');
    constexpr std::size_t hundred_mib = std::size_t(100) << 20;
    std::atomic<std::size_t> sent{0};
    loopback_server server([&](httplib::Server& s, loopback_server&) {
        s.Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
            res.set_header("Metadata-Flavor", "Google");
            res.set_header("ETag", "big");
            if (req.path.find("/chunked") == 0) {
                res.set_chunked_content_provider("application/json", [&](std::size_t offset, httplib::DataSink& sink) {
                    if (offset >= hundred_mib) {
                        sink.done();
                        return true;
                    }
                    if (!sink.write(chunk.data(), chunk.size())) return false;
                    sent += chunk.size();
                    return true;
                });
            } else {
                res.set_content_provider(hundred_mib, "application/json",
                                         [&](std::size_t, std::size_t length, httplib::DataSink& sink) {
                                             const auto n = std::min(length, chunk.size());
                                             if (!sink.write(chunk.data(), n)) return false;
                                             sent += n;
                                             return true;
                                         });
            }
        });
    });
    REQUIRE(server.port() > 0);
    const long peak_before = peak_rss_kib();

    for (const std::string mode : {"sized", "chunked"}) {
        INFO(mode);
        sent = 0;
        const std::string base = "http://127.0.0.1:" + std::to_string(server.port()) + (mode == "chunked" ? "/chunked" : "");
        const auto start = clock_type::now();
        forewarn::azure::scheduled_events_client azure(azure_options(base));
        auto doc = azure.fetch();
        REQUIRE_FALSE(doc.has_value());
        INFO(why(doc.error()));
        CHECK(doc.error().code == errc::body_too_large);
        forewarn::gce::metadata_client gce(gce_options(base));
        auto value = gce.get("instance/maintenance-event");
        REQUIRE_FALSE(value.has_value());
        INFO(why(value.error()));
        CHECK(value.error().code == errc::body_too_large);
        const auto elapsed = millis_since(start);
        for (int i = 0; i < 100; ++i) {  // let httplib notice the closed sockets before reading its counter
            const auto before = sent.load();
            std::this_thread::sleep_for(20ms);
            if (sent.load() == before) break;
        }
        std::printf("security: 100 MiB %s answers refused by both clients in %lld ms; server pushed %zu bytes\n",
                    mode.c_str(), elapsed, sent.load());
        // Two refusals (no retry of body_too_large): a few MiB of socket buffers at most, never the 100 MiB.
        CHECK(sent.load() < (std::size_t(32) << 20));
        CHECK(elapsed < 10000);
    }
    const long peak_after = peak_rss_kib();
    std::printf("security: peak RSS %ld KiB before the 100 MiB answers, %ld KiB after\n", peak_before, peak_after);
    // Far below the body: 40 MiB with a sanitizer's redzones and quarantine (ASan keeps up to
    // 256 MiB of freed memory mapped); 16 MiB without.
    CHECK(peak_after - peak_before < (FOREWARN_SECURITY_SANITIZED ? 40 : 16) * 1024);
}

TEST_CASE("security: 10^6-deep nesting over HTTP is refused without a stack overflow", "[security]") {
    const std::string arrays(1000000, '[');
    std::string objects;
    objects.reserve(5000000);
    for (int i = 0; i < 1000000; ++i) objects += "{\"a\":";
    loopback_server server([&](httplib::Server& s, loopback_server&) {
        s.Get(".*", [&](const httplib::Request& req, httplib::Response& res) {
            const bool obj = req.target.find("objects") != std::string::npos;
            res.set_content(obj ? objects : arrays, "application/json");
        });
    });
    REQUIRE(server.port() > 0);
    for (const std::string path : {"/arrays", "/objects"}) {
        INFO(path);
        auto o = azure_options("http://127.0.0.1:" + std::to_string(server.port()) + path);
        o.max_body = std::size_t(8) << 20;  // let the 5 MB of objects reach the parser
        forewarn::azure::scheduled_events_client azure(o);
        const auto start = clock_type::now();
        auto doc = azure.fetch();
        REQUIRE_FALSE(doc.has_value());
        INFO(why(doc.error()));
        CHECK(doc.error().code == errc::parse_error);
        CHECK(doc.error().message.find("nested deeper") != std::string::npos);
        auto who = azure.identity();  // the instance metadata goes through the same parser
        REQUIRE_FALSE(who.has_value());
        CHECK(who.error().code == errc::parse_error);
        CHECK(millis_since(start) < 10000);
    }
}

TEST_CASE("security: a server trickling one byte a second is cut off by the total timeout, retries included",
          "[security][timeout]") {
    raw_server trickle([](int fd, const std::string&, const std::atomic<bool>& stopping) {
        if (!forewarn_test::send_all(fd, "HTTP/1.1 200 OK\r\nMetadata-Flavor: Google\r\nETag: t\r\nContent-Length: 100\r\n\r\n"))
            return;
        for (int i = 0; i < 100 && !stopping; ++i) {
            if (!forewarn_test::send_all(fd, "x")) return;
            for (int j = 0; j < 20 && !stopping; ++j) std::this_thread::sleep_for(50ms);
        }
    });
    REQUIRE(trickle.port() > 0);
    const std::string base = "http://127.0.0.1:" + std::to_string(trickle.port());

    auto ao = azure_options(base);
    ao.first_call_timeout = 1s;
    forewarn::azure::scheduled_events_client azure(ao);
    auto start = clock_type::now();
    auto doc = azure.fetch();
    auto elapsed = millis_since(start);
    REQUIRE_FALSE(doc.has_value());
    INFO(why(doc.error()));
    CHECK(doc.error().code == errc::timeout);
    CHECK(elapsed >= 2900);   // three attempts of 1 s each...
    CHECK(elapsed < 12000);   // ...not the 100 s the server would take

    auto go = gce_options(base);
    go.request_timeout = 1s;
    forewarn::gce::metadata_client gce(go);
    start = clock_type::now();
    auto value = gce.get("instance/maintenance-event");
    elapsed = millis_since(start);
    REQUIRE_FALSE(value.has_value());
    INFO(why(value.error()));
    CHECK(value.error().code == errc::timeout);
    CHECK(elapsed < 12000);
}

TEST_CASE("security: the AWS client over curl - the token only in its header - no proxy - no redirect - never logged",
          "[security][aws]") {
    // IMDSv2 on loopback: PUT /latest/api/token gives a token; the notice paths want it.
    const std::string token = "AQAEAIzToken0123456789abcdefghijklmnopqrstuvwxyzABCD==";
    std::mutex mutex;
    std::vector<std::string> seen;  // method, path and every header of every request
    raw_listener trap;
    REQUIRE(trap.ok());
    loopback_server imds([&](httplib::Server& s, loopback_server&) {
        auto record = [&](const httplib::Request& r) {
            std::string line = r.method + " " + r.path;
            for (const auto& h : r.headers) line += "\n" + h.first + ": " + h.second;
            std::lock_guard<std::mutex> lock(mutex);
            seen.push_back(line);
        };
        s.Put("/latest/api/token", [&, record](const httplib::Request& r, httplib::Response& res) {
            record(r);
            if (r.get_header_value("X-aws-ec2-metadata-token-ttl-seconds").empty()) {
                res.status = 400;
                return;
            }
            res.set_content(token, "text/plain");
        });
        s.Get(R"(/latest/.*)", [&, record](const httplib::Request& r, httplib::Response& res) {
            record(r);
            if (r.get_header_value("X-aws-ec2-metadata-token") != token) {
                res.status = 401;
                return;
            }
            if (r.path == "/latest/meta-data/instance-id") {
                res.set_content("i-0123456789abcdef0", "text/plain");
            } else if (r.path == "/latest/meta-data/events/maintenance/scheduled") {
                res.set_content(R"([{"Code":"system-reboot","EventId":"instance-event-1","State":"active",)"
                                R"("NotBefore":"21 Jan 2030 09:00:43 GMT"}])",
                                "text/plain");
            } else if (r.path == "/latest/meta-data/spot/instance-action") {
                res.status = 302;  // somewhere else: a client must not follow
                res.set_header("Location", trap.url("/stolen"));
            } else {
                res.status = 404;
            }
        });
    });
    REQUIRE(imds.port() > 0);

    const std::string proxy = trap.url("");
    scoped_env e1("http_proxy", proxy.c_str());
    scoped_env e2("HTTP_PROXY", proxy.c_str());
    scoped_env e3("all_proxy", proxy.c_str());
    scoped_env e4("ALL_PROXY", proxy.c_str());
    scoped_env e5("no_proxy", nullptr);
    scoped_env e6("NO_PROXY", nullptr);

    forewarn::aws::client_options o;
    o.endpoint = imds.url("");
    o.rate_limit = false;
    o.retry.initial_backoff = 1ms;
    o.retry.max_backoff = 2ms;
    std::vector<std::string> lines;
    o.log.level = forewarn::log_level::trace;
    o.log.sink = [&](const forewarn::log_record& r) { lines.push_back(std::string(r.message) + " " + std::string(r.url)); };
    forewarn::aws::instance_metadata_client client(o);
    auto doc = client.fetch();
    REQUIRE(doc.has_value());  // the other paths answered
    REQUIRE(doc->key_errors.size() == 1);  // the 302 is not followed: that path's error, not a notice
    INFO(doc->key_errors[0].describe());
    CHECK(doc->key_errors[0].http_status == 302);
    CHECK(doc->key_errors[0].url.find("/spot/instance-action") != std::string::npos);
    auto id = client.identity();
    REQUIRE(id.has_value());
    CHECK(id->name == "i-0123456789abcdef0");

    const int knocked = trap.accept_within(200ms);
    CHECK(knocked < 0);  // neither the proxy nor the redirect target was ever reached
    if (knocked >= 0) ::close(knocked);
    std::lock_guard<std::mutex> lock(mutex);
    REQUIRE(seen.size() >= 4);
    CHECK(seen[0].rfind("PUT /latest/api/token", 0) == 0);
    for (const auto& r : seen) {
        INFO(r);
        CHECK(r.find("X-Forwarded-For") == std::string::npos);
        if (r.rfind("GET", 0) == 0) CHECK(r.find("X-aws-ec2-metadata-token: " + token) != std::string::npos);
        CHECK(r.find("?") == std::string::npos);  // the token never travels in a URL
    }
    lines.push_back(doc.error().describe());
    for (const auto& l : lines) {
        INFO(l);
        CHECK(l.find(token) == std::string::npos);
    }
}

}  // namespace test_security
