// SPDX-License-Identifier: MIT
#pragma once

// A real etcd cluster for a test: N members of Debian's etcd-server (/usr/bin/etcd, installed by
// ./quickstart; FOREWARN_ETCD overrides the path) on loopback ports, data in a fresh temporary
// directory, every process stopped (SIGKILL) and the directory removed at scope exit; on Linux the
// members also die with the test program should it be killed. POSIX only.
//
//   forewarn_test::etcd_cluster etcd(3);
//   auto urls = etcd.client_urls();         // {"http://127.0.0.1:P1", ...}
//   etcd.kill(etcd.leader());               // kill -9 the current leader

#include <forewarn/transport/curl.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace forewarn_test {

/// TLS for the client URLs: one CA that signs the server's certificate and the clients' (every
/// client must show one), the server's certificate and key, and a client certificate and key for
/// the cluster's own health checks.
struct etcd_tls {
    std::string ca, cert, key;
    std::string client_cert, client_key;
};

class etcd_cluster {
public:
    explicit etcd_cluster(int members = 3, etcd_tls tls = {}) : tls_(std::move(tls)), transport_(transport_options(tls_)) {
        const char* env = std::getenv("FOREWARN_ETCD");
        program_ = env && *env ? env : "/usr/bin/etcd";
        if (::access(program_.c_str(), X_OK) != 0)
            throw std::runtime_error("etcd_cluster: " + program_ + " not found: ./quickstart deps installs etcd-server");
        // The members' data under $TMPDIR (default /tmp): TMPDIR=/dev/shm keeps the disk's fsync
        // out of a benchmark's figures.
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/forewarn-etcd-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("etcd_cluster: mkdtemp failed in " + tmpl);
        dir_ = tmpl;
        std::string initial;
        const auto ports = free_ports(2 * static_cast<std::size_t>(members));
        for (int i = 0; i < members; ++i) {
            member m;
            m.name = "m" + std::to_string(i);
            m.client_port = ports[2 * static_cast<std::size_t>(i)];
            m.peer_port = ports[2 * static_cast<std::size_t>(i) + 1];
            members_.push_back(m);
            initial += (i ? "," : "") + m.name + "=http://127.0.0.1:" + std::to_string(m.peer_port);
        }
        initial_cluster_ = initial;
        for (std::size_t i = 0; i < members_.size(); ++i) start(i);
        if (!wait_healthy(std::chrono::seconds(30))) {
            stop_all();
            std::string log;
            if (std::FILE* f = std::fopen((dir_ + "/m0.stderr").c_str(), "r")) {
                char buf[600];
                log.assign(buf, std::fread(buf, 1, sizeof buf, f));
                std::fclose(f);
            }
            std::error_code ec;
            std::filesystem::remove_all(dir_, ec);
            throw std::runtime_error("etcd_cluster: the cluster did not become healthy within 30 s; m0 said: " + log);
        }
    }
    ~etcd_cluster() {
        stop_all();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    etcd_cluster(const etcd_cluster&) = delete;
    etcd_cluster& operator=(const etcd_cluster&) = delete;
    std::string client_url(std::size_t i) const {
        return (tls_.cert.empty() ? "http://127.0.0.1:" : "https://127.0.0.1:") + std::to_string(members_.at(i).client_port);
    }
    std::vector<std::string> client_urls() const {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < members_.size(); ++i) out.push_back(client_url(i));
        return out;
    }
    std::string endpoints() const {
        std::string out;
        for (std::size_t i = 0; i < members_.size(); ++i) out += (i ? "," : "") + client_url(i);
        return out;
    }

    /// The member that is the raft leader now, by asking each live member; -1 when none knows.
    int leader() {
        for (std::size_t i = 0; i < members_.size(); ++i) {
            if (members_[i].pid <= 0) continue;
            auto r = post(i, "/v3/maintenance/status", "{}");
            const auto lead = field(r, "leader"), self = field(r, "member_id");
            if (!lead.empty() && lead == self) return static_cast<int>(i);
        }
        return -1;
    }

    /// The members' process ids (0 for one that is down).
    std::vector<pid_t> pids() const {
        std::vector<pid_t> out;
        for (const auto& m : members_) out.push_back(m.pid);
        return out;
    }

    /// kill -9 one member (it stays down).
    void kill(std::size_t i) {
        auto& m = members_.at(i);
        if (m.pid > 0) {
            ::kill(m.pid, SIGKILL);
            ::waitpid(m.pid, nullptr, 0);
            m.pid = 0;
        }
    }

    /// Starts a member killed before, on its own data directory: it rejoins the cluster.
    void restart(std::size_t i) { start(i); }

    /// SIGSTOP one member: a pause (a frozen VM, a long stall) rather than a crash; resume() ends it.
    void pause(std::size_t i) {
        if (members_.at(i).pid > 0) ::kill(members_[i].pid, SIGSTOP);
    }
    void resume(std::size_t i) {
        if (members_.at(i).pid > 0) ::kill(members_[i].pid, SIGCONT);
    }

    std::size_t size() const { return members_.size(); }

    /// Every live member answers /health with "true".
    bool wait_healthy(std::chrono::milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < deadline) {
            bool all = true;
            for (std::size_t i = 0; i < members_.size() && all; ++i)
                if (members_[i].pid > 0) all = get(i, "/health").find("\"true\"") != std::string::npos;
            if (all) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }

    /// A POST to member i's gateway; "" when it did not answer 200.
    std::string post(std::size_t i, const std::string& path, const std::string& body) {
        forewarn::http_request req;
        req.method = forewarn::http_method::post;
        req.url = client_url(i) + path;
        req.body = body;
        req.timeout = std::chrono::seconds(2);
        auto r = transport_.send(req);
        return r && r->status == 200 ? r->body : std::string();
    }

private:
    struct member {
        std::string name;
        int client_port = 0;
        int peer_port = 0;
        pid_t pid = 0;
    };

    /// `n` distinct loopback ports free now, each held until all are chosen (so no two members
    /// share one). Below the kernel's ephemeral range when it leaves room: a member killed and
    /// restarted later must find its port free, and the agents' outgoing connections (hundreds
    /// in a fleet run) take their local ports from the ephemeral range.
    static std::vector<int> free_ports(std::size_t n) {
        int ephemeral_low = 32768;
        if (std::FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
            if (std::fscanf(f, "%d", &ephemeral_low) != 1) ephemeral_low = 32768;
            std::fclose(f);
        }
        const int lo = 10000, hi = ephemeral_low - 1;
        std::mt19937 rng(std::random_device{}());
        std::vector<int> fds, ports;
        for (int attempt = 0; attempt < 4000 && ports.size() < n; ++attempt) {
            // Past 2000 tries below the range (or with no room there), the kernel's choice.
            const bool below = hi - lo >= 1000 && attempt < 2000;
            const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
            if (fd < 0) break;
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            a.sin_port = htons(static_cast<std::uint16_t>(below ? std::uniform_int_distribution<int>(lo, hi)(rng) : 0));
            socklen_t len = sizeof a;
            if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
                ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
                ::close(fd);
                continue;
            }
            fds.push_back(fd);
            ports.push_back(ntohs(a.sin_port));
        }
        for (const int fd : fds) ::close(fd);
        if (ports.size() < n) throw std::runtime_error("etcd_cluster: no free port");
        return ports;
    }

    void start(std::size_t i) {
        auto& m = members_.at(i);
        if (m.pid > 0) return;
        const std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
        const std::string client = client_url(i);
        std::vector<std::string> args{program_,
                                      "--name", m.name,
                                      "--data-dir", dir_ + "/" + m.name,
                                      "--listen-client-urls", client,
                                      "--advertise-client-urls", client,
                                      "--listen-peer-urls", peer,
                                      "--initial-advertise-peer-urls", peer,
                                      "--initial-cluster", initial_cluster_,
                                      "--initial-cluster-state", "new",
                                      "--initial-cluster-token", "forewarn-test",
                                      "--heartbeat-interval", "50",
                                      "--election-timeout", "500",
                                      "--logger", "zap"};
        if (!tls_.cert.empty()) {
            for (const std::string& a : {std::string("--cert-file"), tls_.cert, std::string("--key-file"), tls_.key})
                args.push_back(a);
            for (const std::string& a : {std::string("--trusted-ca-file"), tls_.ca, std::string("--client-cert-auth")})
                args.push_back(a);
        }
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const std::string err_path = dir_ + "/" + m.name + ".stderr";
        const pid_t parent = ::getpid();
        // fork and exec rather than posix_spawn: the member asks for SIGKILL when the test program
        // dies (PR_SET_PDEATHSIG), so a test killed mid-run leaves no etcd behind. Only
        // async-signal-safe calls after fork().
        const pid_t pid = ::fork();
        if (pid < 0) throw std::runtime_error("etcd_cluster: could not start " + program_);
        if (pid == 0) {
#ifdef __linux__
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) ::_exit(127);
#endif
            const int out = ::open("/dev/null", O_WRONLY);
            const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (out >= 0) ::dup2(out, STDOUT_FILENO);
            if (err >= 0) ::dup2(err, STDERR_FILENO);
            ::execve(program_.c_str(), argv.data(), environ);
            ::_exit(127);
        }
        (void)parent;
        m.pid = pid;
    }

    void stop_all() {
        for (std::size_t i = 0; i < members_.size(); ++i) kill(i);
    }

    std::string get(std::size_t i, const std::string& path) {
        forewarn::http_request req;
        req.url = client_url(i) + path;
        req.timeout = std::chrono::seconds(2);
        auto r = transport_.send(req);
        return r && r->status == 200 ? r->body : std::string();
    }

    // A string field anywhere in a small JSON answer ("leader":"123").
    static std::string field(const std::string& body, const std::string& name) {
        const auto k = body.find("\"" + name + "\":\"");
        if (k == std::string::npos) return {};
        const auto start = k + name.size() + 4;
        const auto end = body.find('"', start);
        return end == std::string::npos ? std::string() : body.substr(start, end - start);
    }

    static forewarn::curl_transport_options transport_options(const etcd_tls& tls) {
        forewarn::curl_transport_options o;
        o.ca_file = tls.ca;
        o.client_cert = tls.client_cert;
        o.client_key = tls.client_key;
        return o;
    }

    etcd_tls tls_;
    std::string program_;
    std::string dir_;
    std::string initial_cluster_;
    std::vector<member> members_;
    forewarn::curl_transport transport_;  // after tls_: built from it
};

}  // namespace forewarn_test
