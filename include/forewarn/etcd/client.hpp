// SPDX-License-Identifier: MIT
#pragma once

// A small etcd v3 client over the JSON gateway (HTTP POST of JSON, no gRPC), on any transport:
// leases (grant, keepalive, revoke, timetolive), keys (range, put, delete), transactions, watches
// (over a transport that streams, transport/stream.hpp), several endpoints with failover, /v3 or
// /v3beta from /version, and user/password auth. What the fleet budget needs, not a general etcd SDK.

#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/transport/default.hpp>
#include <forewarn/etcd/wire.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>
#include <forewarn/transport/stream.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace etcd {

struct client_options {
    /// Client URLs of the cluster's members ("http://10.0.0.1:2379"); tried in turn on failure.
    std::vector<std::string> endpoints;
    /// With auth enabled on the cluster: the user and password (never logged).
    std::string username;
    std::string password;
    std::chrono::milliseconds request_timeout{std::chrono::seconds(3)};
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(1)};
    std::size_t max_body = std::size_t(4) << 20;  ///< of an answer, and of one message of a watch
    forewarn::logger log;
};

/// Splits "http://a:2379,http://b:2379" into URLs (empty items skipped, a trailing '/' dropped).
inline std::vector<std::string> split_endpoints(std::string_view list) {
    std::vector<std::string> out;
    while (!list.empty()) {
        const auto comma = list.find(',');
        auto item = detail::trim(list.substr(0, comma));
        while (!item.empty() && item.back() == '/') item.remove_suffix(1);
        if (!item.empty()) out.emplace_back(item);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return out;
}

template <class Transport>
class basic_client {
    static_assert(is_transport_v<Transport>, "Transport must meet the transport requirements (transport.hpp)");

public:
    explicit basic_client(client_options options, Transport transport = Transport())
        : options_(std::move(options)), transport_(std::move(transport)), stream_(detail::make_stream_for(transport_)),
          prefixes_(options_.endpoints.size()) {}

    /// Endpoints present and each an http:// or https:// URL.
    result<void> validate() const {
        if (options_.endpoints.empty()) return error(errc::invalid_argument, "no etcd endpoint given");
        for (const auto& e : options_.endpoints)
            if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0)
                return error(errc::invalid_argument, "an etcd endpoint must be an http:// or https:// URL: " + e);
        return {};
    }

    result<server_version> version() {
        auto r = send_at(current_, http_method::get, "/version", {}, false);
        if (!r) return r.error();
        return parse_version(*r);
    }

    result<lease> grant(std::int64_t ttl_seconds) {
        auto r = call("/lease/grant", write_lease_grant(ttl_seconds));
        if (!r) return r.error();
        return parse_lease(*r);
    }
    /// One keepalive; the answer's ttl is 0 (or less) when the lease no longer exists.
    result<lease> keepalive(std::int64_t id) {
        auto r = call("/lease/keepalive", write_lease_id(id));
        if (!r) return r.error();
        return parse_lease(*r);
    }
    /// The lease's remaining time; ttl -1 when it no longer exists.
    result<lease> time_to_live(std::int64_t id) {
        auto r = call("/kv/lease/timetolive", write_lease_id(id));
        if (!r) return r.error();
        return parse_lease(*r);
    }
    result<void> revoke(std::int64_t id) {
        auto r = call("/kv/lease/revoke", write_lease_id(id));
        if (!r) {
            // Revoking a lease that is already gone is what the caller wanted.
            if (r.error().message.find("lease not found") != std::string::npos) return {};
            return r.error();
        }
        return {};
    }

    /// One key, or [key, range_end); `keys_only`: without the values.
    result<range_result> range(std::string_view key, std::string_view range_end = {}, bool keys_only = false) {
        auto r = call("/kv/range", write_range(key, range_end, keys_only));
        if (!r) return r.error();
        return parse_range(*r);
    }
    result<range_result> range_prefix(std::string_view prefix) { return range(prefix, prefix_end(prefix)); }

    result<std::int64_t> put(std::string_view key, std::string_view value, std::int64_t lease_id = 0) {
        auto r = call("/kv/put", write_put(key, value, lease_id));
        if (!r) return r.error();
        return parse_header_revision(*r);
    }
    result<std::int64_t> remove(std::string_view key) {
        auto r = call("/kv/deleterange", write_delete(key));
        if (!r) return r.error();
        return parse_header_revision(*r);
    }
    result<txn_result> txn(const txn_request& t) {
        auto r = call("/kv/txn", write_txn(t));
        if (!r) return r.error();
        return parse_txn(*r);
    }

    /// Compacts the key history up to `revision` (a watch from before it is then canceled).
    result<void> compact(std::int64_t revision) {
        detail::json_writer w;
        w.begin_object();
        wire::write_int(w, "revision", revision);
        w.end_object();
        auto r = call("/kv/compaction", w.str());
        if (!r) return r.error();
        return {};
    }

    /// Whether watch() can work: the transport streams (transport/stream.hpp; libcurl does,
    /// WinHTTP does not yet).
    static constexpr bool can_watch() noexcept { return can_stream_v<Transport>; }

    /**
     * Watches every change to [key, range_end) (one key when range_end is empty) from
     * `start_revision` on (0: from now), calling `on_response(const watch_response&)` for each
     * message, on this thread, until it returns false (the watch() then returns success), the
     * stream ends or breaks (an error), or cancel(). A `canceled` message (a compaction past
     * `start_revision`: read afresh and watch from that read) ends it after `on_response` saw it.
     * etcd is asked for progress notifications; `idle` is the longest silence before the stream is
     * given up (errc::timeout). Tries the endpoints in turn until one answers the stream; once a
     * message has arrived a failure is returned, for the caller to start again from its revision.
     * Without a streaming transport: errc::unsupported at once. `deletes_only`: etcd leaves out
     * the puts (its NOPUT filter).
     */
    template <class OnResponse>
    result<void> watch(std::string_view key, std::string_view range_end, std::int64_t start_revision,
                       std::chrono::milliseconds idle, OnResponse&& on_response, bool deletes_only = false) {
        if constexpr (!can_stream_v<Transport>) {
            (void)key, (void)range_end, (void)start_revision, (void)idle, (void)on_response, (void)deletes_only;
            return error(errc::unsupported, "this transport cannot stream, and etcd's watch needs it (transport/stream.hpp)");
        } else {
            if (auto v = validate(); !v) return v.error();
            const std::string body = write_watch_create(key, range_end, start_revision, true, deletes_only);
            error last(errc::transport, "no etcd endpoint answered");
            const std::size_t n = options_.endpoints.size();
            for (std::size_t k = 0; k < n; ++k) {
                const std::size_t i = (current_ + k) % n;
                std::size_t messages = 0;
                std::optional<error> bad;
                auto sink = [&](std::string_view line) {
                    ++messages;
                    auto w = parse_watch_response(line);
                    if (!w) {
                        bad = w.error();
                        return false;
                    }
                    return on_response(static_cast<const watch_response&>(*w)) && !w->canceled;
                };
                auto r = stream_at(i, body, idle, sink);
                if (bad) return *bad;
                if (r || messages > 0) current_ = i;  // this endpoint served the watch: start there next time
                if (r) return {};
                last = r.error();
                if (messages > 0 || !endpoint_failure(last)) return last;
                prefixes_[i].clear();
            }
            return last;
        }
    }

    /// Ends the request in progress and every later one (errc::cancelled) until reset(); a watch too.
    void cancel() noexcept {
        transport_.cancel();
        stream_.cancel();
    }
    void reset() noexcept {
        transport_.reset();
        stream_.reset();
    }

    const client_options& options() const noexcept { return options_; }
    /// The endpoint the next request goes to first.
    const std::string& current_endpoint() const { return options_.endpoints.at(current_); }

private:
    // POSTs to `path` under the API prefix (/v3 or /v3beta; revoke and timetolive under /kv/lease/,
    // the spelling every version since 3.3 serves), on the current endpoint, then each other one
    // in turn while the failure is the endpoint's (no connection, timeout, 5xx, no leader).
    result<std::string> call(std::string_view path, const std::string& body) {
        if (auto v = validate(); !v) return v.error();
        error last(errc::transport, "no etcd endpoint answered");
        const std::size_t n = options_.endpoints.size();
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t i = (current_ + k) % n;
            auto prefix = api_prefix_of(i);
            if (!prefix) {
                last = prefix.error();
                if (last.code == errc::cancelled) return last;
                continue;
            }
            const std::string full = *prefix + std::string(path);
            auto r = send_at(i, http_method::post, full, body, true);
            if (r) {
                current_ = i;
                return r;
            }
            last = r.error();
            if (!endpoint_failure(last)) {
                current_ = i;
                return last;
            }
            prefixes_[i].clear();  // ask its version again when it is back (it may have been upgraded)
        }
        return last;
    }

    static bool endpoint_failure(const error& e) {
        if (e.code == errc::transport || e.code == errc::timeout) return true;
        if (e.code == errc::http_status && e.http_status >= 500) return true;
        // A member cut off from the others answers, but cannot serve linearizable requests.
        return e.message.find("no leader") != std::string::npos || e.message.find("timed out") != std::string::npos;
    }

    result<std::string> api_prefix_of(std::size_t i) {
        if (!prefixes_[i].empty()) return prefixes_[i];
        auto r = send_at(i, http_method::get, "/version", {}, false);
        if (!r) return r.error();
        auto v = parse_version(*r);
        if (!v) {
            error e = v.error();
            e.url = options_.endpoints[i] + "/version";
            return e;
        }
        prefixes_[i] = api_prefix(v->server);
        return prefixes_[i];
    }

    result<std::string> send_at(std::size_t i, http_method method, const std::string& path, const std::string& body,
                                bool authenticated) {
        if (auto v = validate(); !v) return v.error();
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (authenticated && !options_.username.empty() && token_.empty()) {
                if (auto t = authenticate(i); !t) return t.error();
            }
            const http_request req = request_to(i, method, path, body, authenticated, options_.request_timeout);
            auto r = transport_.send(req);
            auto again = read_answer(req, r, authenticated, attempt);
            if (!again) return again.error();
            if (*again) continue;  // authenticate once more
            return std::move(r->body);
        }
        return error(errc::http_status, "etcd refused the credentials");
    }

    // A watch's stream on endpoint i (the watch's API prefix and token as for any call).
    template <class Sink>
    result<void> stream_at(std::size_t i, const std::string& body, std::chrono::milliseconds idle, Sink& sink) {
        auto prefix = api_prefix_of(i);
        if (!prefix) return prefix.error();
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (!options_.username.empty() && token_.empty()) {
                if (auto t = authenticate(i); !t) return t.error();
            }
            http_request req = request_to(i, http_method::post, *prefix + "/watch", body, true, idle);
            auto r = stream_.send_stream(req, sink);
            auto again = read_answer(req, r, true, attempt);
            if (!again) return again.error();
            if (!*again) return {};
        }
        return error(errc::http_status, "etcd refused the credentials");
    }

    http_request request_to(std::size_t i, http_method method, const std::string& path, const std::string& body,
                            bool authenticated, std::chrono::milliseconds timeout) const {
        http_request req;
        req.method = method;
        req.url = options_.endpoints[i] + path;
        req.timeout = timeout;
        req.connect_timeout = options_.connect_timeout;
        req.max_body = options_.max_body;
        req.body = body;
        if (method == http_method::post) req.headers.push_back({"Content-Type", "application/json"});
        if (authenticated && !token_.empty()) req.headers.push_back({"Authorization", token_});
        return req;
    }

    // What an answer means: an error, or whether to authenticate and send again (the token
    // expired, on the first attempt); false: a 200, the answer to use.
    result<bool> read_answer(const http_request& req, result<http_response>& r, bool authenticated, int attempt) {
        if (!r) {
            error e = r.error();
            if (e.url.empty()) e.url = req.url;
            return e;
        }
        if (options_.log.enabled(log_level::debug))
            options_.log(log_level::debug, "etcd " + std::string(to_string(req.method)) + " " + req.url + " -> " +
                                               std::to_string(r->status), {}, {});
        if (r->status == 200) return false;
        int code = 0;
        std::string message = parse_error_message(r->body, &code);
        // An expired or unknown token (code 16, UNAUTHENTICATED): authenticate once more.
        if (authenticated && !options_.username.empty() && attempt == 0 &&
            (code == 16 || message.find("invalid auth token") != std::string::npos)) {
            token_.clear();
            return true;
        }
        error e(errc::http_status,
                "etcd answered " + std::to_string(r->status) + (message.empty() ? std::string() : ": " + message), r->status);
        e.url = req.url;
        return e;
    }

    result<void> authenticate(std::size_t i) {
        auto prefix = api_prefix_of(i);
        if (!prefix) return prefix.error();
        auto body = write_authenticate(options_.username, options_.password);
        if (!body) return body.error();
        auto r = send_at(i, http_method::post, *prefix + "/auth/authenticate", *body, false);
        if (!r) {
            error e = r.error();
            e.message = "etcd authentication failed: " + e.message;
            return e;
        }
        auto token = parse_auth_token(*r);
        if (!token) return token.error();
        token_ = std::move(*token);
        return {};
    }

    client_options options_;
    Transport transport_;
    detail::stream_or_none_t<Transport> stream_;  // the watch's: its own connection and cancel()
    std::vector<std::string> prefixes_;  // per endpoint: "/v3" or "/v3beta" once known
    std::size_t current_ = 0;
    std::string token_;
};

/// The client over the default transport (WinHTTP on Windows, libcurl elsewhere).
using client = basic_client<default_transport>;

}  // namespace etcd
FOREWARN_END_NAMESPACE
