// SPDX-License-Identifier: MIT
#include "connection.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace watch::kubernetes {
namespace {

using forewarn::errc;
using forewarn::error;
using forewarn::result;

constexpr std::size_t max_file_bytes = std::size_t(1) << 20;  // a kubeconfig, token or CA

result<std::string> read_file(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(errc::io_error, std::string("cannot read the ") + what + " " + path + ": " + std::strerror(errno));
    std::string text;
    char buffer[8192];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > max_file_bytes)
            return error(errc::body_too_large, std::string("the ") + what + " " + path + " is larger than 1 MiB");
    }
    return text;
}

std::string trimmed(std::string s) {
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (!s.empty() && space(s.back())) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && space(s[i])) ++i;
    return s.substr(i);
}

std::string folder_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
}

std::string relative_to(const std::string& folder, const std::string& path) {
    if (path.empty() || path.front() == '/') return path;
    return folder + "/" + path;
}

// A scalar member of a YAML map, "" when absent; an error when present but not a scalar.
result<std::string> scalar(const YAML::Node& map, const char* key, const std::string& where) {
    const YAML::Node v = map[key];
    if (!v || v.IsNull()) return std::string();
    if (!v.IsScalar()) return error(errc::invalid_document, where + "." + key + " is not a string");
    return v.Scalar();
}

// The entry NAME of a kubeconfig list (clusters, users, contexts): {name: NAME, KIND: {...}}.
result<YAML::Node> named(const YAML::Node& root, const char* list, const char* kind, const std::string& name,
                         const std::string& file) {
    const YAML::Node entries = root[list];
    if (entries && !entries.IsSequence()) return error(errc::invalid_document, file + ": " + list + " is not a list");
    if (entries)
        for (const auto& entry : entries) {
            if (!entry.IsMap()) continue;
            const YAML::Node n = entry["name"];
            if (n && n.IsScalar() && n.Scalar() == name) {
                const YAML::Node body = entry[kind];
                if (!body || !body.IsMap())
                    return error(errc::invalid_document, file + ": " + list + " entry \"" + name + "\" has no " + kind);
                return body;
            }
        }
    return error(errc::invalid_document, file + ": no " + kind + " named \"" + name + "\" in " + list);
}

// A file or inline data member pair (certificate-authority / certificate-authority-data): the
// path to use, writing the data to a private file when inline.
result<std::string> file_or_data(const YAML::Node& map, const char* file_key, const char* data_key, const std::string& where,
                                 const std::string& folder, connection& c, const char* written_name) {
    auto data = scalar(map, data_key, where);
    if (!data) return std::move(data).error();
    if (!data->empty()) {
        auto bytes = decode_base64(*data);
        if (!bytes) return error(errc::invalid_document, where + "." + data_key + ": " + bytes.error().message);
        if (!c.files) c.files = std::make_shared<private_files>();
        return c.files->write(written_name, *bytes);
    }
    auto path = scalar(map, file_key, where);
    if (!path) return std::move(path).error();
    return relative_to(folder, *path);
}

}  // namespace

// --- private files ------------------------------------------------------------------------------

private_files::~private_files() {
    if (dir_.empty()) return;
    for (const auto& path : written_) std::remove(path.c_str());
    ::rmdir(dir_.c_str());
}

result<std::string> private_files::write(const std::string& name, const std::string& content) {
    if (dir_.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/forewarn-kube.XXXXXX";
        if (!::mkdtemp(pattern.data()))
            return error(errc::io_error, "cannot make a private folder for the Kubernetes credentials: " + std::string(std::strerror(errno)));
        dir_ = pattern;  // mkdtemp makes it 0700
    }
    const std::string path = dir_ + "/" + name;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return error(errc::io_error, "cannot write " + path + ": " + std::strerror(errno));
    written_.push_back(path);  // removed with the folder, even when the write below fails
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int e = errno;
            ::close(fd);
            return error(errc::io_error, "cannot write " + path + ": " + std::strerror(e));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) return error(errc::io_error, "cannot write " + path + ": " + std::strerror(errno));
    return path;
}

// --- the token ------------------------------------------------------------------------------------

token_source token_source::fixed(std::string token) {
    token_source t;
    t.state_->token = std::move(token);
    t.state_->loaded = true;
    return t;
}

token_source token_source::file(std::string path) {
    token_source t;
    t.path_ = std::move(path);
    return t;
}

std::size_t token_source::reads() const noexcept {
    std::lock_guard<std::mutex> lock(state_->m);
    return state_->reads;
}

result<std::string> token_source::read_locked(state& s, bool force) {
    if (path_.empty()) return s.token;
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0)
        return error(errc::io_error, "cannot read the token file " + path_ + ": " + std::strerror(errno));
    const bool changed = !s.loaded || st.st_mtim.tv_sec != s.mtime.tv_sec || st.st_mtim.tv_nsec != s.mtime.tv_nsec ||
                         static_cast<long long>(st.st_size) != s.size;
    if (!force && !changed) return s.token;
    auto text = read_file(path_, "token file");
    if (!text) return std::move(text).error();
    std::string token = trimmed(std::move(*text));
    if (token.empty()) return error(errc::invalid_document, "the token file " + path_ + " is empty");
    for (char ch : token)
        if (static_cast<unsigned char>(ch) < 0x21 || static_cast<unsigned char>(ch) > 0x7e)
            return error(errc::invalid_document, "the token file " + path_ + " holds a character a bearer token cannot have");
    s.token = std::move(token);
    s.mtime = st.st_mtim;
    s.size = static_cast<long long>(st.st_size);
    s.loaded = true;
    ++s.reads;
    return s.token;
}

result<std::string> token_source::current() {
    std::lock_guard<std::mutex> lock(state_->m);
    return read_locked(*state_, false);
}

result<std::string> token_source::reload() {
    std::lock_guard<std::mutex> lock(state_->m);
    return read_locked(*state_, true);
}

// --- base64 ---------------------------------------------------------------------------------------

result<std::string> decode_base64(const std::string& text) {
    std::string out;
    unsigned value = 0;
    int bits = 0, padding = 0, symbols = 0;
    for (char ch : text) {
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') continue;
        int d;
        if (ch >= 'A' && ch <= 'Z') d = ch - 'A';
        else if (ch >= 'a' && ch <= 'z') d = ch - 'a' + 26;
        else if (ch >= '0' && ch <= '9') d = ch - '0' + 52;
        else if (ch == '+') d = 62;
        else if (ch == '/') d = 63;
        else if (ch == '=') { ++padding; ++symbols; continue; }
        else return error(errc::invalid_document, "not base64 (a byte outside its alphabet)");
        if (padding) return error(errc::invalid_document, "not base64 (data after its padding)");
        ++symbols;
        value = (value << 6) | static_cast<unsigned>(d);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((value >> bits) & 0xff));
        }
    }
    if (symbols % 4 != 0 || padding > 2) return error(errc::invalid_document, "not base64 (its length is not a multiple of 4)");
    return out;
}

// --- the two ways in ------------------------------------------------------------------------------

environment process_environment() {
    return [](const char* name) {
        const char* v = std::getenv(name);
        return std::string(v ? v : "");
    };
}

result<connection> in_cluster(const environment& env, const std::string& account_dir) {
    const std::string host = env("KUBERNETES_SERVICE_HOST"), port = env("KUBERNETES_SERVICE_PORT");
    if (host.empty() || port.empty())
        return error(errc::invalid_argument,
                     "--kubernetes: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not in a pod?); outside a "
                     "cluster, give --kubeconfig FILE");
    for (char ch : port)
        if (ch < '0' || ch > '9') return error(errc::invalid_argument, "KUBERNETES_SERVICE_PORT is not a port number: " + port);
    for (char ch : host)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == ':'))
            return error(errc::invalid_argument, "KUBERNETES_SERVICE_HOST is not a host name or address: " + host);
    connection c;
    c.server = "https://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
    c.ca_file = account_dir + "/ca.crt";
    if (::access(c.ca_file.c_str(), R_OK) != 0)
        return error(errc::io_error, "cannot read the service account's CA " + c.ca_file + ": " + std::strerror(errno) +
                                         " (is automountServiceAccountToken off?)");
    c.token = token_source::file(account_dir + "/token");
    if (auto t = c.token.current(); !t) return std::move(t).error();
    if (auto ns = read_file(account_dir + "/namespace", "service account's namespace")) c.pod_namespace = trimmed(std::move(*ns));
    c.origin = "in-cluster";
    return c;
}

result<connection> from_kubeconfig(const std::string& path, const std::string& context) {
    auto text = read_file(path, "kubeconfig");
    if (!text) return std::move(text).error();
    YAML::Node root;
    try {
        root = YAML::Load(*text);
    } catch (const YAML::Exception& e) {
        return error(errc::parse_error, "the kubeconfig " + path + " is not YAML: " + e.what());
    }
    try {
        if (!root.IsMap()) return error(errc::invalid_document, "the kubeconfig " + path + " is not a YAML map");
        std::string context_name = context;
        if (context_name.empty()) {
            auto current = scalar(root, "current-context", path);
            if (!current) return std::move(current).error();
            context_name = *current;
        }
        if (context_name.empty()) return error(errc::invalid_document, "the kubeconfig " + path + " has no current-context");
        auto ctx = named(root, "contexts", "context", context_name, path);
        if (!ctx) return std::move(ctx).error();
        auto cluster_name = scalar(*ctx, "cluster", path + " context " + context_name);
        if (!cluster_name) return std::move(cluster_name).error();
        auto user_name = scalar(*ctx, "user", path + " context " + context_name);
        if (!user_name) return std::move(user_name).error();
        auto cluster = named(root, "clusters", "cluster", *cluster_name, path);
        if (!cluster) return std::move(cluster).error();

        connection c;
        c.origin = "kubeconfig " + path + ", context " + context_name;
        const std::string folder = folder_of(path);
        const std::string cwhere = path + " cluster " + *cluster_name;
        auto server = scalar(*cluster, "server", cwhere);
        if (!server) return std::move(server).error();
        c.server = *server;
        while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
        if (c.server.rfind("https://", 0) != 0)
            return error(errc::invalid_argument, cwhere + ": server \"" + c.server + "\" is not an https:// URL (forewarn-watch "
                                                 "talks to the API server over verified TLS only)");
        if (auto skip = scalar(*cluster, "insecure-skip-tls-verify", cwhere); skip && *skip == "true")
            return error(errc::unsupported, cwhere + ": insecure-skip-tls-verify is set; forewarn-watch always verifies the "
                                                     "server's certificate: give certificate-authority(-data)");
        auto ca = file_or_data(*cluster, "certificate-authority", "certificate-authority-data", cwhere, folder, c, "ca.crt");
        if (!ca) return std::move(ca).error();
        c.ca_file = *ca;  // empty: the system's CAs (a managed cluster with a public certificate)

        if (user_name->empty()) return error(errc::invalid_document, path + " context " + context_name + " names no user");
        auto user = named(root, "users", "user", *user_name, path);
        if (!user) return std::move(user).error();
        const std::string uwhere = path + " user " + *user_name;
        if ((*user)["exec"] || (*user)["auth-provider"])
            return error(errc::unsupported, uwhere + " gets its credentials from a plugin (exec or auth-provider), which "
                                                     "forewarn-watch does not run: give a token, tokenFile or client certificate");
        auto token = scalar(*user, "token", uwhere);
        if (!token) return std::move(token).error();
        auto token_file = scalar(*user, "tokenFile", uwhere);
        if (!token_file) return std::move(token_file).error();
        auto cert = file_or_data(*user, "client-certificate", "client-certificate-data", uwhere, folder, c, "client.crt");
        if (!cert) return std::move(cert).error();
        auto key = file_or_data(*user, "client-key", "client-key-data", uwhere, folder, c, "client.key");
        if (!key) return std::move(key).error();
        if (!token->empty())
            c.token = token_source::fixed(*token);
        else if (!token_file->empty()) {
            c.token = token_source::file(relative_to(folder, *token_file));
            if (auto t = c.token.current(); !t) return std::move(t).error();
        }
        if (cert->empty() != key->empty())
            return error(errc::invalid_document, uwhere + " has a client certificate without its key, or a key without its certificate");
        c.client_cert = *cert;
        c.client_key = *key;
        if (token->empty() && token_file->empty() && cert->empty())
            return error(errc::invalid_document, uwhere + " has no token, tokenFile or client certificate");
        return c;
    } catch (const YAML::Exception& e) {
        return error(errc::invalid_document, "the kubeconfig " + path + " is not a kubeconfig: " + e.what());
    }
}

forewarn::result<connection> connect(const std::string& kubeconfig) {
    return kubeconfig.empty() ? in_cluster(process_environment()) : from_kubeconfig(kubeconfig);
}

}  // namespace watch::kubernetes
