// SPDX-License-Identifier: MIT
#pragma once

// How forewarn-watch reaches the Kubernetes API server (docs/kubernetes.md): from inside a pod
// (the service account's token, CA and namespace, KUBERNETES_SERVICE_HOST and _PORT), or from a
// kubeconfig file read as kubectl writes it (YAML: its current context's server, CA, and token,
// token file or client certificate). Only the public API of forewarn is used here.

#include <forewarn/result.hpp>

#include <chrono>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace watch::kubernetes {

/// Where a pod finds its service account (the kubelet mounts it there).
inline constexpr const char* service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Files this agent wrote for a connection (a CA, certificate or key given inline as `-data`:
/// libcurl 7.68, forewarn's minimum, takes them only as files). Private to the agent's user
/// (0700 folder, 0600 files) and removed with this object.
class private_files {
public:
    private_files() = default;
    private_files(const private_files&) = delete;
    private_files& operator=(const private_files&) = delete;
    ~private_files();
    /// Writes `content` to a new file NAME in the folder (made on first use); its path.
    forewarn::result<std::string> write(const std::string& name, const std::string& content);
    const std::string& dir() const noexcept { return dir_; }

private:
    std::string dir_;
    std::vector<std::string> written_;
};

/// The bearer token: given once (a kubeconfig's `token`), or read from a file that is read again
/// when it changes and when the server refused the token (projected service-account tokens
/// rotate hourly). The token is never logged, and never part of an error's message.
class token_source {
public:
    token_source() = default;
    static token_source fixed(std::string token);
    static token_source file(std::string path);

    /// The token now ("" when the connection uses a client certificate instead). The file is
    /// read again when its modification time or size changed since the last read.
    forewarn::result<std::string> current();
    /// Read the file again now, whatever its time (after a 401).
    forewarn::result<std::string> reload();
    bool from_file() const noexcept { return !path_.empty(); }
    const std::string& path() const noexcept { return path_; }
    /// How many times the file was read (tests: a replaced file is read again).
    std::size_t reads() const noexcept;

private:
    struct state {
        std::mutex m;
        std::string token;
        std::timespec mtime{};
        long long size = -1;
        bool loaded = false;
        std::size_t reads = 0;
    };
    forewarn::result<std::string> read_locked(state& s, bool force);
    std::string path_;
    std::shared_ptr<state> state_ = std::make_shared<state>();
};

/// Everything needed to talk to one API server.
struct connection {
    std::string server;       ///< "https://10.0.0.1:443", no trailing slash
    std::string ca_file;      ///< the CA that signs the server (TLS is always verified)
    std::string client_cert;  ///< a client certificate and its key (PEM files), when not a token
    std::string client_key;
    token_source token;
    std::string pod_namespace;  ///< in-cluster: the service account's namespace
    std::string origin;         ///< for messages: "in-cluster" or "kubeconfig FILE, context NAME"
    std::shared_ptr<private_files> files;  ///< what was written for it (kept alive with it)
};

/// Reads the environment (tests give their own).
using environment = std::function<std::string(const char*)>;
environment process_environment();

/// The in-cluster connection: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (an IPv6
/// host in brackets), `token` (read again as it rotates) and `ca.crt` under `account_dir`.
forewarn::result<connection> in_cluster(const environment& env, const std::string& account_dir = service_account_dir);

/// The connection of a kubeconfig's current context (or of `context` when given): its cluster's
/// `server` and `certificate-authority` or `certificate-authority-data`; its user's `token`,
/// `tokenFile`, or `client-certificate(-data)` and `client-key(-data)`. Relative paths are
/// relative to the file's folder, as kubectl reads them. What it cannot use (an exec or
/// auth-provider plugin, `insecure-skip-tls-verify`, a server that is not https) is an error
/// that says so.
forewarn::result<connection> from_kubeconfig(const std::string& path, const std::string& context = {});

/// The connection the agent uses: `kubeconfig`'s current context when one is given (--kubeconfig),
/// else the pod's service account (--kubernetes). The agent and `check` both connect so.
forewarn::result<connection> connect(const std::string& kubeconfig);

/// Base64 (RFC 4648, with padding; whitespace ignored) as kubeconfig's `-data` fields carry it.
forewarn::result<std::string> decode_base64(const std::string& text);

}  // namespace watch::kubernetes
