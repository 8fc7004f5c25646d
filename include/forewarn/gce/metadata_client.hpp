// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/result.hpp>
#include <forewarn/retry.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

/// Options of a metadata client. Plain struct: set the members you care about.
struct client_options {
    /**
     * Root of the metadata server, e.g. "http://127.0.0.1:8080" (no "/computeMetadata/v1").
     * Empty: $FOREWARN_GCE_ENDPOINT, else $GCE_METADATA_HOST (a "host[:port]"), else
     * http://metadata.google.internal. with http://169.254.169.254 as the fallback when the name
     * does not resolve.
     */
    std::string endpoint;
    std::chrono::milliseconds request_timeout{std::chrono::seconds(5)};  ///< whole exchange of a plain GET
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(1)};  ///< TCP connect, every request
    /// A hanging GET with timeout_sec=N gives up after N seconds plus this margin.
    std::chrono::milliseconds watch_margin{std::chrono::seconds(5)};
    std::size_t max_body = std::size_t(1) << 20;  ///< a longer answer fails with errc::body_too_large
    retry_options retry;                          ///< backoff for 429, 5xx and transport errors
    bool rate_limit = true;  ///< share the per-host 5 requests/s token bucket (off for in-process transports)
};

/// Options of one get() or watch().
struct get_options {
    bool recursive = false;  ///< a directory ("instance/attributes/") as one JSON object
    /// Send alt=json instead of alt=text; recursive requests always ask for JSON.
    bool json = false;
};

/// A metadata value and the ETag the server gave it.
struct metadata_value {
    std::string value;  ///< the body as sent (not trimmed)
    std::string etag;   ///< empty when the server sent none
};

/// Who this VM is, from instance/ and instance/scheduling/.
struct instance_identity {
    std::string name;      ///< instance/name
    std::string id;        ///< instance/id (numeric, as text)
    std::string hostname;  ///< instance/hostname; empty when the key does not exist
    bool preemptible = false;         ///< instance/scheduling/preemptible is TRUE (preemptible or Spot)
    std::string on_host_maintenance;  ///< instance/scheduling/on-host-maintenance: "MIGRATE" or "TERMINATE"
};

/// The two keys the maintenance snapshot is made of, relative to /computeMetadata/v1/.
inline constexpr std::string_view maintenance_event_key = "instance/maintenance-event";
inline constexpr std::string_view preempted_key = "instance/preempted";

namespace detail {

inline constexpr std::string_view default_host_endpoint = "http://metadata.google.internal.";
inline constexpr std::string_view default_ip_endpoint = "http://169.254.169.254";
inline constexpr std::string_view root_path = "/computeMetadata/v1/";

constexpr bool is_unreserved(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

/// Percent-encodes every byte but RFC 3986's unreserved ones (and '/' when `keep_slash`).
inline std::string percent_encode(std::string_view s, bool keep_slash) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        if (is_unreserved(c) || (keep_slash && c == '/')) {
            out += c;
        } else {
            const auto b = static_cast<unsigned char>(c);
            out += '%';
            out += hex[b >> 4];
            out += hex[b & 0x0F];
        }
    }
    return out;
}

/**
 * A metadata key as the path part of a URL. The key is relative to /computeMetadata/v1/ (one
 * leading '/' is tolerated). Refused: a scheme or authority (the client must never be pointed at
 * another host through a key), "." or ".." segments, '?', '#', control characters.
 */
inline result<std::string> encode_key(std::string_view key) {
    if (!key.empty() && key.front() == '/') key.remove_prefix(1);
    if (!key.empty() && key.front() == '/') return error(errc::invalid_argument, "metadata key starts with '//'");
    if (key.find("://") != std::string_view::npos) return error(errc::invalid_argument, "metadata key holds a URL");
    const auto first_slash = key.find('/');
    if (key.substr(0, first_slash).find(':') != std::string_view::npos)
        return error(errc::invalid_argument, "metadata key starts with a scheme");
    for (const char c : key) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20 || b == 0x7F) return error(errc::invalid_argument, "metadata key holds a control character");
        if (c == '?' || c == '#')
            return error(errc::invalid_argument, "metadata key holds '?' or '#': use get_options for the query");
        if (c == '\\') return error(errc::invalid_argument, "metadata key holds a backslash");
    }
    std::size_t start = 0;
    while (start <= key.size()) {
        const auto end = (std::min)(key.find('/', start), key.size());
        const auto segment = key.substr(start, end - start);
        if (segment == "." || segment == "..")
            return error(errc::invalid_argument, "metadata key holds a '.' or '..' segment");
        start = end + 1;
    }
    return percent_encode(key, true);
}

/**
 * An endpoint option or variable as "scheme://authority[/prefix]" without a trailing '/'.
 * A bare "host:port" (GCE_METADATA_HOST's form) gets "http://"; a trailing
 * "/computeMetadata/v1/" is dropped, so the root URL from Google's docs works too.
 */
inline result<std::string> normalize_endpoint(std::string_view e, std::string_view what) {
    auto r = forewarn::detail::normalize_endpoint(e, what);
    if (!r) return r;
    // A root given with the path GCE's own clients append ("http://host/computeMetadata/v1").
    std::string& out = *r;
    constexpr std::string_view root = "/computeMetadata/v1";
    if (out.size() > root.size() && std::string_view(out).substr(out.size() - root.size()) == root) {
        out.resize(out.size() - root.size());
        forewarn::detail::strip_trailing_slashes(out);
        if (forewarn::detail::url_authority(out).empty())
            return error(errc::invalid_argument, std::string(what) + ": endpoint has no host");
    }
    return r;
}

/// Where the endpoint came from: the option, a variable, or the built-in default.
struct resolved_endpoint {
    std::string base;         ///< "http://host:port" without a trailing '/'
    bool is_default = false;  ///< the built-in name, which falls back to the IP
};

/// An explicit option beats $FOREWARN_GCE_ENDPOINT, which beats $GCE_METADATA_HOST.
inline result<resolved_endpoint> resolve_endpoint(std::string_view option, std::string_view fallback_default) {
    const auto chosen = forewarn::detail::choose_endpoint(option, "client_options::endpoint",
                                                          {"FOREWARN_GCE_ENDPOINT", "GCE_METADATA_HOST"});
    if (chosen.text.empty()) return resolved_endpoint{std::string(fallback_default), true};
    auto r = normalize_endpoint(chosen.text, chosen.source);
    if (!r) return std::move(r).error();
    return resolved_endpoint{std::move(*r), false};
}

/// True when the answer says it comes from Google's metadata server.
inline bool has_google_flavor(const http_response& r) noexcept {
    const std::string* flavor = r.header("Metadata-Flavor");
    return flavor != nullptr && forewarn::detail::iequals(forewarn::detail::trim(*flavor), "Google");
}

/// ETags may hold any byte: escape the separator so that two of them join into one incarnation.
inline std::string escape_etag(std::string_view etag) {
    std::string out;
    for (const char c : etag) {
        if (c == '%')
            out += "%25";
        else if (c == '/')
            out += "%2F";
        else
            out += c;
    }
    return out;
}

inline std::string unescape_etag(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.substr(i, 3) == "%25") {
            out += '%';
            i += 2;
        } else if (s.substr(i, 3) == "%2F") {
            out += '/';
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

/// "<maintenance-etag>/<preempted-etag>"; the second part is empty when the key does not exist.
inline std::string join_etags(std::string_view maintenance, std::string_view preempted) {
    return escape_etag(maintenance) + '/' + escape_etag(preempted);
}

/// The two ETags of an incarnation made by join_etags, or nothing when it is not one.
inline std::optional<std::pair<std::string, std::string>> split_etags(std::string_view incarnation) {
    const auto slash = incarnation.find('/');
    if (slash == std::string_view::npos || incarnation.find('/', slash + 1) != std::string_view::npos)
        return std::nullopt;
    return std::make_pair(unescape_etag(incarnation.substr(0, slash)), unescape_etag(incarnation.substr(slash + 1)));
}

/// The maintenance-event value as an event (none for NONE). An empty value is an error.
inline result<std::optional<event>> maintenance_event_from(std::string_view body) {
    const auto v = forewarn::detail::trim(body);
    if (v.empty()) {
        error e(errc::empty_body, "instance/maintenance-event answered with an empty value");
        e.field = "maintenance-event";
        return e;
    }
    if (forewarn::detail::iequals(v, "NONE")) return std::optional<event>();
    event ev;
    ev.raw_type = std::string(v);
    ev.id = "maintenance-event:" + ev.raw_type;
    if (forewarn::detail::iequals(v, "MIGRATE_ON_HOST_MAINTENANCE"))
        ev.type = event_type::live_migrate;
    else if (forewarn::detail::iequals(v, "TERMINATE_ON_HOST_MAINTENANCE"))
        ev.type = event_type::host_terminate;
    else
        ev.type = event_type::unknown;
    // The value turns from NONE about 60 s before the migration: a warning, not the start.
    ev.status = event_status::scheduled;
    return std::optional<event>(std::move(ev));
}

/// The preempted value as an event (none for FALSE). Anything but TRUE/FALSE is an error.
inline result<std::optional<event>> preempted_event_from(std::string_view body) {
    const auto v = forewarn::detail::trim(body);
    if (forewarn::detail::iequals(v, "FALSE")) return std::optional<event>();
    if (forewarn::detail::iequals(v, "TRUE")) {
        event ev;
        ev.id = "preempted";
        ev.type = event_type::preempted;
        ev.raw_type = "preempted";
        // The stop is already under way when the key turns TRUE.
        ev.status = event_status::started;
        return std::optional<event>(std::move(ev));
    }
    error e(v.empty() ? errc::empty_body : errc::invalid_document,
            "instance/preempted is neither TRUE nor FALSE: \"" + std::string(v.substr(0, 64)) + '"');
    e.field = "preempted";
    return e;
}

/// The maintenance-event value a document of this client was made from ("NONE" when no event).
inline std::string maintenance_value_in(const document& d) {
    constexpr std::string_view prefix = "maintenance-event:";
    for (const auto& e : d.events)
        if (e.id.size() > prefix.size() && std::string_view(e.id).substr(0, prefix.size()) == prefix) return e.raw_type;
    return "NONE";
}

/// The preempted value a document of this client was made from.
inline std::string preempted_value_in(const document& d) { return d.find("preempted") ? "TRUE" : "FALSE"; }

}  // namespace detail

/**
 * Client of the Google Compute Engine metadata server (/computeMetadata/v1/).
 *
 * Every request carries `Metadata-Flavor: Google`, and every answer must carry it back: anything
 * else (a captive portal, an ISP's DNS page, another cloud's service) fails with
 * errc::not_metadata_server and is never retried. 429, 5xx and transport errors are retried with
 * jittered backoff; cancel() interrupts both the request and the backoff.
 *
 * @code
 * forewarn::gce::metadata_client client;
 * auto doc = client.fetch();                        // maintenance-event and preempted, once
 * while (doc) {
 *     auto next = client.wait_for_change(*doc, std::chrono::seconds(60));  // hanging GETs
 *     if (next && *next != *doc) { ... }
 *     doc = std::move(next);
 * }
 * @endcode
 *
 * One thread uses a client at a time; cancel() may come from any thread. wait_for_change() runs
 * its second hanging GET on a thread of its own, on a copy of the transport.
 */
// The default, curl_transport, is given in fwd.hpp, where this template is declared first.
template <class Transport>
class basic_metadata_client {
public:
    using transport_type = Transport;
    static constexpr cloud cloud_kind = cloud::gce;  ///< what the poller needs to know

    explicit basic_metadata_client(client_options options = {}, Transport transport = Transport())
        : options_(std::move(options)),
          state_(std::make_unique<state>(std::move(transport), options_.retry)) {
        static_assert(is_transport_v<Transport>, "Transport must satisfy forewarn::is_transport");
        static_assert(std::is_copy_constructible_v<Transport>,
                      "wait_for_change holds two requests at once, on two copies of the transport");
        auto resolved = detail::resolve_endpoint(options_.endpoint, detail::default_host_endpoint);
        if (resolved) {
            state_->base = std::move(resolved->base);
            state_->base_is_default = resolved->is_default;
        } else {
            state_->config_error = std::move(resolved).error();
        }
    }

    basic_metadata_client(basic_metadata_client&&) noexcept = default;
    basic_metadata_client& operator=(basic_metadata_client&&) noexcept = default;

    const client_options& options() const noexcept { return options_; }

    /// The root URL in use ("http://metadata.google.internal." until a fallback to the IP).
    std::string endpoint() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->base;
    }

    /// One key's value and ETag (alt=text unless options ask for JSON). 404 is errc::not_found.
    result<metadata_value> get(std::string_view key, const get_options& opts = {}) {
        return get_on(0, key, opts);
    }

    /**
     * A hanging GET: answers when the key's ETag differs from `last_etag` (at once if it already
     * does), or with the current value after `timeout_sec`. An empty `last_etag` waits for the
     * next change. 404 (errc::not_found) means the key is gone.
     */
    result<metadata_value> watch(std::string_view key, std::string_view last_etag, std::chrono::seconds timeout_sec,
                                 const get_options& opts = {}) {
        return watch_on(0, key, last_etag, timeout_sec, opts);
    }

    /// One snapshot: maintenance-event and preempted (a missing preempted key counts as FALSE).
    result<document> fetch() {
        auto m = get_on(0, maintenance_event_key, {});
        if (!m) return std::move(m).error();
        auto p = get_preempted(0);
        if (!p) return std::move(p).error();
        return make_document(*m, *p);
    }

    /**
     * Holds hanging GETs on both keys with the ETags of `last` and returns as soon as either
     * changes, or the current snapshot (same incarnation) when `timeout_sec` passes with no
     * change. A `last` that did not come from this cloud's fetch() gives a plain fetch().
     */
    result<document> wait_for_change(const document& last, std::chrono::seconds timeout_sec) {
        if (auto e = check_usable()) return *e;
        if (timeout_sec.count() < 1) return error(errc::invalid_argument, "timeout_sec must be at least 1 second");
        const auto etags = last.origin == cloud::gce ? detail::split_etags(last.incarnation) : std::nullopt;
        if (!etags || etags->first.empty()) return fetch();
        const bool watch_preempted = !etags->second.empty();

        // Each lane, once it has a change or an error, cuts the other one short.
        std::optional<result<metadata_value>> preempted_result;
        std::thread worker;
        if (watch_preempted) {
            try {
                worker = std::thread([&] {
                    auto r = watch_on(1, preempted_key, etags->second, timeout_sec, {});
                    if (!r || r->etag != etags->second) interrupt_lane(0);
                    preempted_result = std::move(r);
                });
            } catch (const std::exception& ex) {
                return error(errc::transport, std::string("could not start the watch thread: ") + ex.what());
            }
        }
        auto maintenance_result = watch_on(0, maintenance_event_key, etags->first, timeout_sec, {});
        if (!maintenance_result || maintenance_result->etag != etags->first) interrupt_lane(1);
        if (worker.joinable()) worker.join();
        restore_lanes();
        if (auto e = check_usable()) return *e;

        // A lane cut short by the other one's change keeps the value and ETag it had in `last`:
        // no request, no wait. Had it changed meanwhile, its ETag now differs from the one in
        // the returned incarnation, so the next call returns at once with it (last_etag).
        if (!maintenance_result && maintenance_result.error().code == errc::cancelled)
            maintenance_result = metadata_value{detail::maintenance_value_in(last), etags->first};
        if (!maintenance_result) return std::move(maintenance_result).error();

        if (preempted_result && !*preempted_result && preempted_result->error().code == errc::cancelled)
            preempted_result = result<metadata_value>(metadata_value{detail::preempted_value_in(last), etags->second});
        if (!preempted_result || (!*preempted_result && preempted_result->error().code == errc::not_found)) {
            // Not watched (the key did not exist) or gone while watched: read it plainly.
            auto p = get_preempted(0);
            if (!p) return std::move(p).error();
            return make_document(*maintenance_result, *p);
        }
        if (!*preempted_result) return std::move(*preempted_result).error();
        return make_document(*maintenance_result, **preempted_result);
    }

    /// GCE has nothing to approve: always errc::unsupported.
    result<void> approve(const std::vector<std::string>& /*event_ids*/) {
        return error(errc::unsupported, "the GCE metadata server has no way to approve maintenance");
    }

    /// name, id, hostname and the scheduling options of this instance.
    result<instance_identity> identity() {
        instance_identity id;
        auto name = get_on(0, "instance/name", {});
        if (!name) return std::move(name).error();
        id.name = std::string(forewarn::detail::trim(name->value));
        auto num = get_on(0, "instance/id", {});
        if (!num) return std::move(num).error();
        id.id = std::string(forewarn::detail::trim(num->value));
        // The rest is informative: a key this server does not have leaves the field empty.
        auto optional_key = [this](std::string_view key) -> result<std::string> {
            auto r = get_on(0, key, {});
            if (!r) {
                if (r.error().code == errc::not_found) return std::string();
                return std::move(r).error();
            }
            return std::string(forewarn::detail::trim(r->value));
        };
        auto host = optional_key("instance/hostname");
        if (!host) return std::move(host).error();
        id.hostname = std::move(*host);
        auto preemptible = optional_key("instance/scheduling/preemptible");
        if (!preemptible) return std::move(preemptible).error();
        id.preemptible = forewarn::detail::iequals(*preemptible, "TRUE");
        auto ohm = optional_key("instance/scheduling/on-host-maintenance");
        if (!ohm) return std::move(ohm).error();
        id.on_host_maintenance = std::move(*ohm);
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            state_->instance_name = id.name;
        }
        return id;
    }

    /// Makes the call in progress (even a hanging GET or a backoff) and every later one return
    /// errc::cancelled promptly, until reset(). Thread-safe.
    void cancel() noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->cancelled = true;
        for (auto& l : state_->lanes) {
            l.transport.cancel();
            l.sleep.interrupt();
        }
    }

    /// Clears a cancel() so the client can be used again.
    void reset() noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->cancelled = false;
        for (auto& l : state_->lanes) {
            l.transport.reset();
            l.sleep.reset();
        }
    }

private:
    // One transport and one backoff sleep per concurrent request: wait_for_change holds two.
    struct lane {
        lane(Transport t) : transport(std::move(t)) {}
        Transport transport;
        interruptible_sleep sleep;
    };
    struct state {
        // Braced initialisers run in order: the copy is taken before the move.
        state(Transport t, const retry_options& retry_opts)
            : lanes{lane(t), lane(std::move(t))}, retry(retry_rules::gce, retry_opts) {}
        std::mutex mutex;  // guards base, instance_name, cancelled and the lanes' cancel/reset
        lane lanes[2];
        retry_policy retry;
        std::string base;
        bool base_is_default = false;
        std::optional<error> config_error;
        std::string instance_name;
        bool cancelled = false;
    };

    std::optional<error> check_usable() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        if (state_->config_error) return state_->config_error;
        if (state_->cancelled) return error(errc::cancelled, "the client was cancelled");
        return std::nullopt;
    }

    void interrupt_lane(int i) noexcept {
        auto& l = state_->lanes[i];
        l.transport.cancel();
        l.sleep.interrupt();
    }

    // After wait_for_change cut a lane short: make both usable again unless the user cancelled.
    void restore_lanes() noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        if (state_->cancelled) return;
        for (auto& l : state_->lanes) {
            l.transport.reset();
            l.sleep.reset();
        }
    }

    result<metadata_value> get_on(int lane_index, std::string_view key, const get_options& opts) {
        auto path = detail::encode_key(key);
        if (!path) return std::move(path).error();
        std::string query = opts.recursive ? "recursive=true&alt=json" : (opts.json ? "alt=json" : "alt=text");
        return request(lane_index, *path, query, options_.request_timeout);
    }

    result<metadata_value> watch_on(int lane_index, std::string_view key, std::string_view last_etag,
                                    std::chrono::seconds timeout_sec, const get_options& opts) {
        if (timeout_sec.count() < 1) return error(errc::invalid_argument, "timeout_sec must be at least 1 second");
        auto path = detail::encode_key(key);
        if (!path) return std::move(path).error();
        std::string query = "wait_for_change=true";
        if (!last_etag.empty()) {
            query += "&last_etag=";
            query += detail::percent_encode(last_etag, false);
        }
        query += "&timeout_sec=";
        query += std::to_string(timeout_sec.count());
        query += opts.recursive ? "&recursive=true&alt=json" : (opts.json ? "&alt=json" : "&alt=text");
        const auto total = std::chrono::duration_cast<std::chrono::milliseconds>(timeout_sec) + options_.watch_margin;
        return request(lane_index, *path, query, total);
    }

    // preempted, with a missing key standing for FALSE (no ETag: not watched).
    result<metadata_value> get_preempted(int lane_index) {
        auto p = get_on(lane_index, preempted_key, {});
        if (!p && p.error().code == errc::not_found) return metadata_value{"FALSE", {}};
        return p;
    }

    result<document> make_document(const metadata_value& m, const metadata_value& p) const {
        if (m.etag.empty()) {
            error e(errc::invalid_document, "instance/maintenance-event answered without an ETag");
            e.field = "ETag";
            return e;
        }
        auto me = detail::maintenance_event_from(m.value);
        if (!me) return std::move(me).error();
        auto pe = detail::preempted_event_from(p.value);
        if (!pe) return std::move(pe).error();
        document doc;
        doc.origin = cloud::gce;
        doc.incarnation = detail::join_etags(m.etag, p.etag);
        std::string name;
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            name = state_->instance_name;
        }
        for (auto* e : {&*me, &*pe}) {
            if (!*e) continue;
            if (!name.empty()) (*e)->resources.push_back(name);
            doc.events.push_back(std::move(**e));
        }
        return doc;
    }

    // One request with retries, the token bucket, the flavor check and the fallback to the IP.
    result<metadata_value> request(int lane_index, const std::string& path, const std::string& query,
                                   std::chrono::milliseconds total_timeout) {
        if (auto e = check_usable()) return *e;
        lane& l = state_->lanes[lane_index];
        auto attempt = [&]() -> result<metadata_value> {
            std::string base;
            bool may_fall_back = false;
            {
                std::lock_guard<std::mutex> lock(state_->mutex);
                if (state_->cancelled) return error(errc::cancelled, "the client was cancelled");
                base = state_->base;
                may_fall_back = state_->base_is_default;
            }
            auto r = send_once(l, base, path, query, total_timeout);
            if (!r && r.error().code == errc::transport && may_fall_back) {
                // metadata.google.internal. did not resolve (or connect): the same server
                // answers at the link-local IP. The flavor check still guards against impostors.
                {
                    std::lock_guard<std::mutex> lock(state_->mutex);
                    if (state_->base_is_default) {
                        state_->base = std::string(detail::default_ip_endpoint);
                        state_->base_is_default = false;
                    }
                    base = state_->base;
                }
                r = send_once(l, base, path, query, total_timeout);
            }
            return r;
        };
        return state_->retry.run(attempt, l.sleep);
    }

    result<metadata_value> send_once(lane& l, const std::string& base, const std::string& path,
                                     const std::string& query, std::chrono::milliseconds total_timeout) {
        if (options_.rate_limit) {
            auto bucket = token_bucket::for_host(forewarn::detail::url_authority(base));
            if (!bucket->acquire(l.sleep)) return error(errc::cancelled, "cancelled while waiting for the rate limit");
        }
        http_request req;
        req.method = http_method::get;
        req.url.reserve(base.size() + detail::root_path.size() + path.size() + 1 + query.size());
        req.url += base;
        req.url += detail::root_path;
        req.url += path;
        req.url += '?';
        req.url += query;
        req.headers.push_back({"Metadata-Flavor", "Google"});
        req.timeout = total_timeout;
        req.connect_timeout = (std::min)(options_.connect_timeout, total_timeout);
        req.max_body = options_.max_body;

        auto sent = l.transport.send(req);
        if (!sent) return std::move(sent).error();
        http_response& resp = *sent;
        if (!detail::has_google_flavor(resp))
            return error(errc::not_metadata_server,
                         "the answer from " + base + " has no 'Metadata-Flavor: Google' header: not the GCE metadata server",
                         resp.status);
        if (resp.status == 404) return error(errc::not_found, "no metadata key /computeMetadata/v1/" + path, 404);
        if (resp.status != 200)
            return error(errc::http_status, "the metadata server answered " + std::to_string(resp.status) +
                                                " for /computeMetadata/v1/" + path,
                         resp.status);
        metadata_value v;
        v.value = std::move(resp.body);
        if (const std::string* etag = resp.header("ETag")) v.etag = std::string(forewarn::detail::trim(*etag));
        return v;
    }

    client_options options_;
    std::unique_ptr<state> state_;
};

/// The metadata client over libcurl (include <forewarn/curl_transport.hpp> or forewarn.hpp).
using metadata_client = basic_metadata_client<>;

}  // namespace gce
FOREWARN_END_NAMESPACE
