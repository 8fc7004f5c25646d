// SPDX-License-Identifier: MIT
// Loopback servers for transport tests: an in-process httplib::Server on 127.0.0.1:<ephemeral>,
// and raw POSIX listeners for what httplib will not do (hang in accept, trickle, cut a body short).
// POSIX-only, like every test that opens sockets.
#pragma once

#include <httplib.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace forewarn_test {

/// A latch that handlers wait on; released by the test or by the server's destructor.
class gate {
public:
    /// True if released before `d` passed.
    template <class Rep, class Period>
    bool wait_for(std::chrono::duration<Rep, Period> d) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, d, [this] { return open_; });
    }
    void release() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            open_ = true;
        }
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool open_ = false;
};

/// A counter a test thread can wait on (e.g. "the server has received the request").
class signal_count {
public:
    void add() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++count_;
        }
        cv_.notify_all();
    }
    int get() {
        std::lock_guard<std::mutex> lock(mutex_);
        return count_;
    }
    template <class Rep, class Period>
    bool wait_for_at_least(int n, std::chrono::duration<Rep, Period> d) {
        std::unique_lock<std::mutex> lock(mutex_);
        return cv_.wait_for(lock, d, [&] { return count_ >= n; });
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    int count_ = 0;
};

/// httplib::Server on 127.0.0.1, port chosen by the kernel, running on its own thread.
/// `hold` is released before stop() so that handlers parked on it let the server shut down.
class loopback_server {
public:
    explicit loopback_server(const std::function<void(httplib::Server&, loopback_server&)>& setup) {
        server_.set_keep_alive_max_count(1000);
        // httplib writes headers and body separately without TCP_NODELAY: on a kept-alive
        // connection Nagle then waits for the client's delayed ACK, ~40 ms per answer. Accepted
        // sockets inherit the option from the listener.
        server_.set_socket_options([](socket_t sock) {
            int yes = 1;
            ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
            ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        });
        setup(server_, *this);
        port_ = server_.bind_to_any_port("127.0.0.1");
        if (port_ > 0) {
            thread_ = std::thread([this] { server_.listen_after_bind(); });
            for (int i = 0; i < 500 && !server_.is_running(); ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    loopback_server(const loopback_server&) = delete;
    loopback_server& operator=(const loopback_server&) = delete;
    ~loopback_server() {
        hold.release();
        server_.stop();
        if (thread_.joinable()) thread_.join();
    }

    int port() const { return port_; }
    std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

    gate hold;

private:
    httplib::Server server_;
    std::thread thread_;
    int port_ = -1;
};

/// Writes all of `data`; false once the peer is gone.
inline bool send_all(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        const auto n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

/// Reads until the end of the request's header block (or `limit` passes); returns what it read.
inline std::string read_request_head(int fd, std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    std::string in;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buf[4096];
    while (in.find("\r\n\r\n") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        const auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
    }
    return in;
}

/// A listening TCP socket on 127.0.0.1 that accepts nothing unless asked to.
class raw_listener {
public:
    explicit raw_listener(int backlog = 16) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd_ < 0) return;
        int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, backlog) != 0) {
            ::close(fd_);
            fd_ = -1;
            return;
        }
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
    }
    raw_listener(const raw_listener&) = delete;
    raw_listener& operator=(const raw_listener&) = delete;
    ~raw_listener() { close(); }

    bool ok() const { return fd_ >= 0; }
    int port() const { return port_; }
    int fd() const { return fd_; }
    std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    /// Accepts one connection if one arrives within `wait`; -1 otherwise.
    int accept_within(std::chrono::milliseconds wait) const {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return -1;
        return ::accept(fd_, nullptr, nullptr);
    }

private:
    int fd_ = -1;
    int port_ = 0;
};

/// A raw HTTP server: accepts connections one after another on its own thread, reads each
/// request's head, then lets `script(fd, head)` write whatever bytes the test wants.
class raw_server {
public:
    using script_fn = std::function<void(int fd, const std::string& head, const std::atomic<bool>& stopping)>;

    explicit raw_server(script_fn script) : script_(std::move(script)) {
        if (!listener_.ok()) return;
        thread_ = std::thread([this] {
            while (!stopping_) {
                const int fd = listener_.accept_within(std::chrono::milliseconds(50));
                if (fd < 0) continue;
                connections.add();
                const std::string head = read_request_head(fd);
                script_(fd, head, stopping_);
                finish(fd);
            }
        });
    }
    raw_server(const raw_server&) = delete;
    raw_server& operator=(const raw_server&) = delete;
    ~raw_server() {
        stopping_ = true;
        if (thread_.joinable()) thread_.join();
    }

    int port() const { return listener_.port(); }
    std::string url(const std::string& path) const { return listener_.url(path); }

    signal_count connections;  ///< connections accepted so far

private:
    // Half-closes, then reads until the client hangs up: closing a socket with unread input (a
    // POST body, say) sends a reset that can destroy the answer before the client reads it.
    void finish(int fd) {
        ::shutdown(fd, SHUT_WR);
        char buf[4096];
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (!stopping_ && std::chrono::steady_clock::now() < deadline) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            if (::recv(fd, buf, sizeof buf, 0) <= 0) break;
        }
        ::close(fd);
    }

    raw_listener listener_;
    script_fn script_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

/// A port on 127.0.0.1 where nothing listens (bound, then closed).
inline int closed_port() {
    raw_listener l;
    const int port = l.port();
    l.close();
    return port;
}

/// Sets (or, given nullptr, unsets) an environment variable for the life of the object, then
/// restores the old value.
class scoped_env {
public:
    scoped_env(const char* name, const char* value) : name_(name) {
        if (const char* old = ::getenv(name)) {
            had_ = true;
            old_ = old;
        }
        if (value != nullptr)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;
    ~scoped_env() {
        if (had_)
            ::setenv(name_.c_str(), old_.c_str(), 1);
        else
            ::unsetenv(name_.c_str());
    }

private:
    std::string name_;
    std::string old_;
    bool had_ = false;
};

/// A listener that never accepts, its queue filled: the next connection's SYN is dropped, so a
/// connect there times out (as one to a metadata address that a firewall drops).
class full_backlog {
public:
    full_backlog() : listener_(0) {
        // The kernel queues backlog + 1 finished handshakes; a few more connections to be sure.
        for (int i = 0; i < 4 && listener_.ok(); ++i) {
            const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(static_cast<std::uint16_t>(listener_.port()));
            (void)::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
            fillers_.push_back(c);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the fillers' handshakes
    }
    full_backlog(const full_backlog&) = delete;
    full_backlog& operator=(const full_backlog&) = delete;
    ~full_backlog() {
        for (int c : fillers_) ::close(c);
    }
    bool ok() const { return listener_.ok(); }
    std::string url(const std::string& path) const { return listener_.url(path); }

private:
    raw_listener listener_;
    std::vector<int> fillers_;
};

/// A listener that takes each connection, reads what comes within a moment, and resets it
/// (SO_LINGER 0: an RST, not a FIN), as a middlebox that kills connections does.
class resetting_listener {
public:
    resetting_listener() {
        thread_ = std::thread([this] {
            while (!stopping_) {
                const int c = listener_.accept_within(std::chrono::milliseconds(50));
                if (c < 0) continue;
                pollfd q{c, POLLIN, 0};
                char buf[4096];
                if (::poll(&q, 1, 500) > 0) (void)::recv(c, buf, sizeof buf, 0);
                linger l{1, 0};
                ::setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
                ::close(c);
                resets.add();
            }
        });
    }
    resetting_listener(const resetting_listener&) = delete;
    resetting_listener& operator=(const resetting_listener&) = delete;
    ~resetting_listener() {
        stopping_ = true;
        thread_.join();
    }
    bool ok() const { return listener_.ok(); }
    std::string url(const std::string& path) const { return listener_.url(path); }

    signal_count resets;  ///< connections reset so far

private:
    raw_listener listener_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

/// A forwarding proxy to 127.0.0.1:`target_port` that adds X-Forwarded-For to every request, as
/// a transparent proxy or a sidecar does: what answers is the service behind it.
class forwarding_proxy {
public:
    explicit forwarding_proxy(int target_port)
        : server_([target_port, this](httplib::Server& s, loopback_server&) {
              auto forward = [target_port, this](const httplib::Request& req, httplib::Response& res) {
                  // One at a time: httplib's client shares regex state between threads (TSan).
                  std::lock_guard<std::mutex> one(mutex_);
                  httplib::Client c("127.0.0.1", target_port);
                  c.set_connection_timeout(5, 0);
                  c.set_read_timeout(30, 0);
                  httplib::Headers h;
                  for (const auto& kv : req.headers)
                      if (kv.first != "Host" && kv.first != "Content-Length" && kv.first.rfind("REMOTE_", 0) != 0 &&
                          kv.first.rfind("LOCAL_", 0) != 0)
                          h.emplace(kv.first, kv.second);
                  h.emplace("X-Forwarded-For", "10.0.0.7");
                  forwarded.add();
                  httplib::Result r = req.method == "PUT"    ? c.Put(req.target.c_str(), h, req.body, "text/plain")
                                      : req.method == "POST" ? c.Post(req.target.c_str(), h, req.body, "application/json")
                                                             : c.Get(req.target.c_str(), h);
                  if (!r) {
                      res.status = 502;
                      return;
                  }
                  res.status = r->status;
                  for (const auto& kv : r->headers)
                      if (kv.first != "Content-Length" && kv.first != "Transfer-Encoding" && kv.first != "Connection" &&
                          kv.first != "Content-Type")
                          res.set_header(kv.first.c_str(), kv.second);
                  res.set_content(r->body, r->get_header_value("Content-Type").empty() ? "text/plain"
                                                                                          : r->get_header_value("Content-Type").c_str());
              };
              s.Get(".*", forward);
              s.Put(".*", forward);
              s.Post(".*", forward);
          }) {}
    std::string url(const std::string& path) const { return server_.url(path); }

    signal_count forwarded;  ///< requests forwarded so far

private:
    std::mutex mutex_;
    loopback_server server_;
};

}  // namespace forewarn_test
