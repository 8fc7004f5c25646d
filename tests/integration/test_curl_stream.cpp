// SPDX-License-Identifier: MIT
// curl_stream_transport (transport/stream.hpp) against raw servers on 127.0.0.1 that write a
// chunked body a piece at a time, as etcd's gateway writes a watch: each message must reach the
// caller when its line is whole, not when the body ends.
#include <forewarn/transport/stream.hpp>

#include "catch.hpp"
#include "loopback.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace test_curl_stream {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::curl_stream_transport;
using forewarn::errc;
using forewarn::http_method;
using forewarn::http_request;
using forewarn_test::raw_server;
using forewarn_test::send_all;
using forewarn_test::signal_count;

static_assert(forewarn::is_stream_transport_v<curl_stream_transport>);
static_assert(!forewarn::is_stream_transport_v<forewarn::curl_transport>);
static_assert(std::is_same_v<forewarn::stream_transport_of<forewarn::curl_transport>::type, curl_stream_transport>);
static_assert(forewarn::can_stream_v<forewarn::curl_transport>);

namespace {

http_request stream_request(const std::string& url, std::chrono::milliseconds idle = 10s) {
    http_request r;
    r.method = http_method::post;
    r.url = url;
    r.body = R"({"create_request":{}})";
    r.headers.push_back({"Content-Type", "application/json"});
    r.timeout = idle;
    r.connect_timeout = 2s;
    return r;
}

// One chunk of a chunked body.
std::string chunk(const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + data + "\r\n";
}

const std::string chunked_head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

// The messages a sink received, in order, readable from the test's thread.
struct received {
    std::mutex mutex;
    std::vector<std::string> messages;
    signal_count count;
    bool add(std::string_view m) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            messages.emplace_back(m);
        }
        count.add();
        return true;
    }
    std::vector<std::string> all() {
        std::lock_guard<std::mutex> lock(mutex);
        return messages;
    }
};

std::string why(const forewarn::result<forewarn::http_response>& r) { return r ? std::string("ok") : r.error().describe(); }

}  // namespace

TEST_CASE("curl_stream_transport hands over each line as it arrives, split or joined across chunks", "[curl_stream]") {
    // The server sends the second half of a message only once the client has had the first whole
    // message: a transport that waited for the body's end would never see the rest.
    received got;
    std::atomic<bool> first_was_early{false};
    raw_server server([&](int fd, const std::string&, const std::atomic<bool>&) {
        send_all(fd, chunked_head);
        send_all(fd, chunk("{\"n\":1}\n{\"n\""));  // one whole message and the start of the next
        first_was_early = got.count.wait_for_at_least(1, 10s);
        send_all(fd, chunk(":2}\r\n\n{\"n\":3}\n{\"n\":4}"));  // CRLF dropped, an empty line skipped
        send_all(fd, chunk("\n{\"last\":true}"));  // the last line has no '\n': whole at the body's end
        send_all(fd, "0\r\n\r\n");
    });
    REQUIRE(server.port() > 0);
    curl_stream_transport t;
    auto r = t.send_stream(stream_request(server.url("/v3/watch")), [&](std::string_view m) { return got.add(m); });
    INFO(why(r));
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body.empty());
    REQUIRE(r->header("Content-Type"));
    CHECK(*r->header("Content-Type") == "application/json");
    CHECK(first_was_early);
    CHECK(got.all() == std::vector<std::string>{"{\"n\":1}", "{\"n\":2}", "{\"n\":3}", "{\"n\":4}", "{\"last\":true}"});
}

TEST_CASE("curl_stream_transport: the handler says enough, and the stream ends with success", "[curl_stream]") {
    std::atomic<bool> closed_by_client{false};
    raw_server server([&](int fd, const std::string&, const std::atomic<bool>& stopping) {
        send_all(fd, chunked_head);
        for (int i = 0; i < 200 && !stopping; ++i) {  // a stream with no end of its own, 10 s at most
            if (!send_all(fd, chunk("{\"i\":" + std::to_string(i) + "}\n"))) {
                closed_by_client = true;
                return;
            }
            std::this_thread::sleep_for(50ms);
        }
    });
    REQUIRE(server.port() > 0);
    curl_stream_transport t;
    std::vector<std::string> seen;
    auto r = t.send_stream(stream_request(server.url("/")), [&](std::string_view m) {
        seen.emplace_back(m);
        return seen.size() < 3;
    });
    INFO(why(r));
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(seen == std::vector<std::string>{"{\"i\":0}", "{\"i\":1}", "{\"i\":2}"});
}

TEST_CASE("curl_stream_transport: a connection cut in the middle of a message is an error, the part never delivered",
          "[curl_stream]") {
    raw_server server([&](int fd, const std::string&, const std::atomic<bool>&) {
        send_all(fd, chunked_head);
        send_all(fd, chunk("{\"whole\":1}\n{\"cut\":"));
        ::shutdown(fd, SHUT_RDWR);  // no last chunk: the body never ends
    });
    REQUIRE(server.port() > 0);
    curl_stream_transport t;
    std::vector<std::string> seen;
    auto r = t.send_stream(stream_request(server.url("/")), [&](std::string_view m) {
        seen.emplace_back(m);
        return true;
    });
    REQUIRE_FALSE(r);
    INFO(r.error().describe());
    CHECK(r.error().code == errc::transport);
    CHECK(r.error().message.find("in the middle of a message") != std::string::npos);
    CHECK(seen == std::vector<std::string>{"{\"whole\":1}"});
}

TEST_CASE("curl_stream_transport: silence past the idle limit ends it, messages keep it alive", "[curl_stream]") {
    // Six messages 50 ms apart keep a 1 s idle limit from firing although the stream lasts past
    // it in total; then the server says nothing and the limit ends the stream.
    signal_count sent_all;
    raw_server server([&](int fd, const std::string&, const std::atomic<bool>& stopping) {
        send_all(fd, chunked_head);
        for (int i = 0; i < 6; ++i) {
            send_all(fd, chunk("{\"tick\":" + std::to_string(i) + "}\n"));
            std::this_thread::sleep_for(250ms);
        }
        sent_all.add();
        for (int i = 0; i < 300 && !stopping; ++i) std::this_thread::sleep_for(20ms);  // silent, then gone
    });
    REQUIRE(server.port() > 0);
    curl_stream_transport t;
    int ticks = 0;
    const auto start = std::chrono::steady_clock::now();
    auto r = t.send_stream(stream_request(server.url("/"), 1s), [&](std::string_view) {
        ++ticks;
        return true;
    });
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(r);
    INFO(r.error().describe());
    CHECK(r.error().code == errc::timeout);
    CHECK(r.error().message.find("silent") != std::string::npos);
    CHECK(ticks == 6);
    CHECK(sent_all.get() == 1);  // the limit did not fire while the messages came
    CHECK(took >= 1500ms);       // longer than the idle limit in total
}

TEST_CASE("curl_stream_transport caps one message, not the stream", "[curl_stream]") {
    raw_server server([&](int fd, const std::string&, const std::atomic<bool>&) {
        send_all(fd, chunked_head);
        for (int i = 0; i < 20; ++i) send_all(fd, chunk(std::string(90, 'a') + "\n"));  // 20 x 91 bytes: past the cap in total
        send_all(fd, chunk(std::string(150, 'b')));  // one message past the cap, in two chunks
        send_all(fd, chunk(std::string(150, 'b') + "\n"));
        send_all(fd, "0\r\n\r\n");
    });
    REQUIRE(server.port() > 0);
    curl_stream_transport t;
    auto req = stream_request(server.url("/"));
    req.max_body = 200;
    int small = 0;
    auto r = t.send_stream(req, [&](std::string_view m) {
        small += m.size() == 90 ? 1 : 0;
        return true;
    });
    REQUIRE_FALSE(r);
    INFO(r.error().describe());
    CHECK(r.error().code == errc::body_too_large);
    CHECK(small == 20);
}

TEST_CASE("curl_stream_transport: an error status is read whole and returned, no message delivered", "[curl_stream]") {
    raw_server server([&](int fd, const std::string&, const std::atomic<bool>&) {
        const std::string body = "{\"error\":\"etcdserver: no leader\",\n\"code\":14}\n";
        send_all(fd, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    });
    REQUIRE(server.port() > 0);
    curl_stream_transport t;
    int messages = 0;
    auto r = t.send_stream(stream_request(server.url("/")), [&](std::string_view) {
        ++messages;
        return true;
    });
    INFO(why(r));
    REQUIRE(r);
    CHECK(r->status == 503);
    CHECK(r->body == "{\"error\":\"etcdserver: no leader\",\n\"code\":14}\n");
    CHECK(messages == 0);
}

TEST_CASE("curl_stream_transport: cancel() from another thread ends a silent stream at once, until reset()", "[curl_stream]") {
    signal_count streaming;
    raw_server server([&](int fd, const std::string&, const std::atomic<bool>& stopping) {
        send_all(fd, chunked_head);
        send_all(fd, chunk("{\"created\":true}\n"));
        streaming.add();
        for (int i = 0; i < 1000 && !stopping; ++i) std::this_thread::sleep_for(10ms);
    });
    REQUIRE(server.port() > 0);
    curl_stream_transport t;
    std::thread canceller([&] {
        if (streaming.wait_for_at_least(1, 10s)) t.cancel();
    });
    const auto start = std::chrono::steady_clock::now();
    auto r = t.send_stream(stream_request(server.url("/"), 60s), [](std::string_view) { return true; });
    canceller.join();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::cancelled);
    CHECK(std::chrono::steady_clock::now() - start < 10s);  // not the 60 s idle limit
    auto again = t.send_stream(stream_request(server.url("/")), [](std::string_view) { return true; });
    REQUIRE_FALSE(again);
    CHECK(again.error().code == errc::cancelled);  // sticky
    t.reset();
    CHECK(server.connections.get() == 1);  // the cancelled call sent nothing
}

TEST_CASE("curl_stream_transport refuses what every transport refuses, and a HEAD", "[curl_stream]") {
    curl_stream_transport t;
    auto bad = stream_request("ftp://127.0.0.1/");
    auto r = t.send_stream(bad, [](std::string_view) { return true; });
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_argument);
    auto head = stream_request("http://127.0.0.1:1/");
    head.method = http_method::head;
    auto h = t.send_stream(head, [](std::string_view) { return true; });
    REQUIRE_FALSE(h);
    CHECK(h.error().code == errc::invalid_argument);
    // Made from a curl_transport: its options (the user agent) carried over.
    forewarn::curl_transport_options o;
    o.user_agent = "agent/1";
    auto s = forewarn::stream_transport_of<forewarn::curl_transport>::from(forewarn::curl_transport(o));
    CHECK(s.options().user_agent == "agent/1");
}

}  // namespace test_curl_stream
