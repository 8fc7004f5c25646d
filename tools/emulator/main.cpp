// SPDX-License-Identifier: MIT
// forewarn-emulator: forewarn::testing::scenario over HTTP (cpp-httplib). Every protocol rule is
// the engine's; this program only carries bytes, sleeps the engine's delays (real time / speed),
// and closes connections where a fault says so. POSIX only.
//
//   forewarn-emulator --listen 127.0.0.1:0 [--scenario FILE] [--speed X]
//
// The first stdout line is "listening on http://HOST:PORT" (the port really bound); then one line
// per request and per state change. SIGINT/SIGTERM stop it cleanly. docs/emulator.md has the rest.

#include <forewarn/testing/scenario.hpp>

#include <httplib.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace {

/// A header's name is Content-Type, in any case (names compare case-insensitively).
bool is_content_type(const std::string& name) {
    static constexpr char want[] = "content-type";
    if (name.size() != sizeof want - 1) return false;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(name[i])) != want[i]) return false;
    return true;
}

namespace testing = forewarn::testing;

void usage(std::FILE* out) {
    std::fputs("usage: forewarn-emulator [--listen HOST:PORT] [--scenario FILE] [--speed X] [--rate-limit N]\n"
               "                         [--quiet] [--exit-with-parent] [--version]\n"
               "  --listen HOST:PORT   address to serve (default 127.0.0.1:0, port 0: any free port)\n"
               "  --scenario FILE      a scenario file (docs/emulator.md); default: every service, nothing scheduled\n"
               "  --speed X            scenario seconds per real second (default: the scenario's, else 1)\n"
               "  --rate-limit N       Azure requests per second before 429 (default: the scenario's, else 5; 0: off)\n"
               "  --quiet              print only the \"listening on\" line\n"
               "  --exit-with-parent   stop when the process that started it goes away (tests)\n"
               "  --version            print \"forewarn-emulator VERSION\" and exit\n"
               "Services: Azure (/metadata/), GCE (/computeMetadata/v1/), AWS (/latest/), Alibaba (/alibaba/latest/),\n"
               "Tencent (/tencent/latest/). The first stdout line is \"listening on http://HOST:PORT\".\n"
               "Control API: /emulator/v1/.\n",
               out);
}

std::mutex out_mutex;

void print_line(const std::string& line) {
    std::lock_guard<std::mutex> lock(out_mutex);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

// Carries one request into the engine and its answer (with fault directives) back out.
void serve(testing::scenario& engine, const httplib::Request& req, httplib::Response& res) {
    forewarn::http_request request;
    if (req.method == "GET" || req.method == "HEAD") {
        request.method = forewarn::http_method::get;
    } else if (req.method == "POST") {
        request.method = forewarn::http_method::post;
    } else if (req.method == "PUT") {
        request.method = forewarn::http_method::put;
    } else if (req.method == "PATCH") {
        request.method = forewarn::http_method::patch;  // no service takes one; the log shows it
    } else if (req.method == "DELETE") {
        // the engine's request model has no DELETE; the control API reads it from here
        request.method = forewarn::http_method::post;
        request.headers.push_back({"X-Http-Method", "DELETE"});
    } else {
        res.status = 405;
        res.set_content("method not allowed\n", "text/plain");
        return;
    }
    request.url = req.target.empty() ? req.path : req.target;
    for (const auto& h : req.headers) {
        // httplib adds these for its own bookkeeping; they were not sent by the client
        if (h.first == "REMOTE_ADDR" || h.first == "REMOTE_PORT" || h.first == "LOCAL_ADDR" || h.first == "LOCAL_PORT")
            continue;
        request.headers.push_back({h.first, h.second});
    }
    request.body = req.body;
    request.timeout = std::chrono::milliseconds::max();  // the engine never times a request out here

    testing::emulated_response r = engine.handle(request);
    using action = testing::emulated_response::action;
    if (r.what == action::stall) {
        engine.pause(r.delay);
        // Nothing more can be said: headers go out and the connection closes before the body.
        res.status = 200;
        res.set_content_provider(
            1, "application/json", [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
        return;
    }
    if (r.delay.count() > 0 && !engine.pause(r.delay)) {
        res.status = 503;
        res.set_content("shutting down\n", "text/plain");
        return;
    }
    res.status = r.status == 0 ? 200 : r.status;
    std::string content_type = "text/plain";
    for (const auto& h : r.headers) {
        if (is_content_type(h.name)) content_type = h.value;
        else res.set_header(h.name.c_str(), h.value);
    }
    if (r.what == action::close_mid_body) {
        auto body = std::make_shared<std::string>(std::move(r.body));
        const std::size_t keep = r.close_after;
        res.set_content_provider(body->size(), content_type.c_str(),
                                 [body, keep](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                                     if (offset < keep) sink.write(body->data() + offset, keep - offset);
                                     return false;  // httplib closes the connection: the body is cut short
                                 });
        return;
    }
    res.set_content(r.body, content_type.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    std::string listen = "127.0.0.1:0";
    std::string scenario_path;
    double speed = 0;
    long rate_limit = -1;
    bool quiet = false, exit_with_parent = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "forewarn-emulator: %s needs a value\n", name);
                std::exit(2);
            }
            return argv[++i];
        };
        if (arg == "--listen") listen = value("--listen");
        else if (arg == "--scenario") scenario_path = value("--scenario");
        else if (arg == "--speed") {
            char* end = nullptr;
            const char* text = value("--speed");
            speed = std::strtod(text, &end);
            if (end == text || *end != '\0' || !(speed > 0) || speed > 1e6) {
                std::fprintf(stderr, "forewarn-emulator: --speed wants a number > 0, got \"%s\"\n", text);
                return 2;
            }
        } else if (arg == "--rate-limit") {
            char* end = nullptr;
            const char* text = value("--rate-limit");
            rate_limit = std::strtol(text, &end, 10);
            if (end == text || *end != '\0' || rate_limit < 0 || rate_limit > 1000000) {
                std::fprintf(stderr, "forewarn-emulator: --rate-limit wants an integer >= 0, got \"%s\"\n", text);
                return 2;
            }
        } else if (arg == "--quiet") quiet = true;
        else if (arg == "--exit-with-parent") exit_with_parent = true;
        else if (arg == "--help" || arg == "-h") {
            usage(stdout);
            return 0;
        } else if (arg == "--version") {
            std::fputs("forewarn-emulator " FOREWARN_VERSION_STRING "\n", stdout);
            return 0;
        } else {
            std::fprintf(stderr, "forewarn-emulator: unknown argument \"%s\"\n", arg.c_str());
            usage(stderr);
            return 2;
        }
    }
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        std::fprintf(stderr, "forewarn-emulator: --listen wants HOST:PORT, got \"%s\"\n", listen.c_str());
        return 2;
    }
    const std::string host = listen.substr(0, colon);
    char* port_end = nullptr;
    const long port_wanted = std::strtol(listen.c_str() + colon + 1, &port_end, 10);
    if (*port_end != '\0' || port_wanted < 0 || port_wanted > 65535) {
        std::fprintf(stderr, "forewarn-emulator: bad port in \"%s\"\n", listen.c_str());
        return 2;
    }

    testing::scenario_config config;
    if (!scenario_path.empty()) {
        auto loaded = testing::load_scenario(scenario_path);
        if (!loaded) {
            std::fprintf(stderr, "forewarn-emulator: %s\n", loaded.error().describe().c_str());
            return 2;
        }
        config = std::move(*loaded);
    }
    if (speed == 0) speed = config.speed;
    if (rate_limit >= 0) config.rate_limit = static_cast<unsigned>(rate_limit);

    // Signals are taken by one thread with sigwait: every other thread (httplib's pool included)
    // inherits this mask, so a handler never runs in the middle of the engine.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up mid-answer is not our death

    testing::scenario engine(config);
    if (!quiet) engine.set_logger(print_line);
    engine.use_real_time(speed);

    httplib::Server server;
    // hanging GETs hold a thread each; the default pool (8) would run dry with a few watchers
    server.new_task_queue = [] { return new httplib::ThreadPool(64); };
    // httplib writes the headers and the body separately; with Nagle on, the body of every answer
    // on a kept-alive connection waited for the client's delayed ACK (~40 ms per request).
    server.set_tcp_nodelay(true);
    // IMDS keeps a poller's connection open; httplib's default closes it after 5 requests, which
    // would make every client here pay a reconnect each fifth poll.
    server.set_keep_alive_max_count(100000);
    auto handler = [&engine](const httplib::Request& req, httplib::Response& res) { serve(engine, req, res); };
    // A request without Content-Length or Transfer-Encoding has an empty body (RFC 9112, 6.3): the
    // way AWS's own documentation asks for a token (`curl -X PUT .../latest/api/token -H ...`).
    // httplib would answer such a PUT or POST with a bare 400 before routing it, so it is served
    // here, ahead of httplib's body reading.
    server.set_pre_routing_handler([&engine](const httplib::Request& req, httplib::Response& res) {
        if ((req.method == "PUT" || req.method == "POST" || req.method == "DELETE") && !req.has_header("Content-Length") &&
            !req.has_header("Transfer-Encoding")) {
            serve(engine, req, res);
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    server.Get(".*", handler);
    server.Post(".*", handler);
    server.Put(".*", handler);
    server.Patch(".*", handler);
    server.Delete(".*", handler);

    int port = 0;
    if (port_wanted == 0) {
        port = server.bind_to_any_port(host.c_str());
    } else {
        port = server.bind_to_port(host.c_str(), static_cast<int>(port_wanted)) ? static_cast<int>(port_wanted) : -1;
    }
    if (port <= 0) {
        std::fprintf(stderr, "forewarn-emulator: cannot listen on %s\n", listen.c_str());
        return 1;
    }
    print_line("listening on http://" + host + ":" + std::to_string(port));
    if (!quiet) {
        print_line("scenario: " + (config.name.empty() ? std::string("(none: every service, nothing scheduled)") : config.name) +
                   ", speed " + std::to_string(speed) + ", VMs " + std::to_string(config.vms.size()));
    }

    std::atomic<bool> stopping{false};
    const pid_t parent = getppid();
    std::thread signals([&] {
        for (;;) {
            timespec wait{0, 200 * 1000 * 1000};
            const int sig = sigtimedwait(&stop_signals, nullptr, &wait);
            if (stopping.load()) return;
            if (sig == SIGINT || sig == SIGTERM) {
                print_line(std::string("stopping on ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
                break;
            }
            if (exit_with_parent && getppid() != parent) {
                print_line("stopping: the parent process is gone");
                break;
            }
        }
        stopping = true;
        engine.shutdown();
        server.stop();
    });
    // State changes are logged when they happen, not only when a request looks: this thread
    // sleeps until the next transition (or a change) and plays it, until shutdown().
    std::thread ticker([&] { engine.play(); });

    const bool ok = server.listen_after_bind();
    stopping = true;
    engine.shutdown();
    signals.join();
    ticker.join();
    print_line("stopped");
    return ok || stopping ? 0 : 1;
}
