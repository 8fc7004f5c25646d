// SPDX-License-Identifier: MIT
#pragma once

// The GCE metadata client. It names curl_transport only through fwd.hpp: include
// <forewarn/curl_transport.hpp> (or <forewarn/forewarn.hpp>) to use the default transport.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/gce/endpoint.hpp>
#include <forewarn/gce/parse.hpp>
#include <forewarn/gce/upcoming_maintenance.hpp>
#include <forewarn/log.hpp>
#include <forewarn/notice_source.hpp>
#include <forewarn/result.hpp>
#include <forewarn/retry.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
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
    /// next(): timeout_sec of each hanging GET (the server answers with the current value after it).
    std::chrono::seconds watch_timeout{60};
    /// next(): after a failed request, the pause before the next one (the retries are done).
    std::chrono::milliseconds error_pause{1000};
    std::size_t max_body = std::size_t(1) << 20;  ///< a longer answer fails with errc::body_too_large
    retry_options retry;                          ///< backoff for 429, 5xx and transport errors
    bool rate_limit = true;  ///< share the per-host rate limiter (5 requests in any second)
    /// This VM's name in events' resources. Empty: instance/name, asked before the first document.
    std::string self_name;
    /**
     * Also watch instance/upcoming-maintenance (the days-ahead window: gce/upcoming_maintenance.hpp),
     * a third hanging GET beside maintenance-event and preempted: an event with id
     * "upcoming-maintenance". Its odd answers ({}, NONE, the 503 "no notifications have been
     * received yet") mean none, without a retry; an answer without an ETag (the 503) is read again
     * with a plain GET in every document instead of watched; after a 404 (a machine type without
     * the key) it is not asked again. An answer that is not an upcoming-maintenance document (or a
     * failed request for it) is logged as a warning and the last good window is kept: it never
     * holds back the maintenance-event and preempted notices.
     */
    bool read_upcoming_maintenance = true;
    /// The time line every wait of this client (and of a poller over it) runs on.
    forewarn::clock clock;
    /// Where this client (and a poller over it) logs: each request at debug, retries at info.
    forewarn::logger log;
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
    /// The server's Date header, when sent.
    std::optional<std::chrono::system_clock::time_point> service_time;
};

/// Who this VM is, from instance/ and instance/scheduling/.
struct instance_identity {
    std::string name;      ///< instance/name (or client_options::self_name)
    std::string id;        ///< instance/id (numeric, as text)
    std::string hostname;  ///< instance/hostname; empty when the key does not exist
    bool preemptible = false;         ///< instance/scheduling/preemptible is TRUE (preemptible or Spot)
    std::string on_host_maintenance;  ///< instance/scheduling/on-host-maintenance: "MIGRATE" or "TERMINATE"
};

/**
 * Client of the Google Compute Engine metadata server (/computeMetadata/v1/), a notice source.
 *
 * next() gives the maintenance snapshot: the first time with plain GETs, then with one hanging
 * GET per key (maintenance-event, preempted, upcoming-maintenance) that answers as soon as any
 * of them changes, or after `watch_timeout` with nothing new. The client keeps the keys' ETags itself (its cursor).
 * Events name this VM in `resources` from the very first document.
 *
 * Every request carries `Metadata-Flavor: Google`, and every answer must carry it back: anything
 * else (a captive portal, an ISP's DNS page, another cloud's service) fails with
 * errc::not_metadata_server and is never retried. 429, 5xx and transport errors are retried with
 * jittered backoff on the client's clock; cancel() interrupts the request, the backoff and the
 * hanging GETs.
 *
 * @code
 * forewarn::gce::metadata_client client;
 * for (;;) {
 *     auto doc = client.next();   // at once, then whenever something changes
 *     if (!doc) { std::cerr << doc.error().describe() << '\n'; continue; }
 *     for (const auto& e : doc->events) std::cout << e.id << '\n';
 * }
 * @endcode
 *
 * One thread uses a client at a time; wake(), cancel() and reset() may come from any thread.
 * next() runs the second and third hanging GETs on threads of their own, on copies of the
 * transport.
 */
// The default, curl_transport, is given in fwd.hpp, where this template is declared first.
template <class Transport>
class basic_metadata_client {
public:
    using transport_type = Transport;
    using identity_type = instance_identity;

    explicit basic_metadata_client(client_options options = {}, Transport transport = Transport());
    basic_metadata_client(basic_metadata_client&&) noexcept;
    basic_metadata_client& operator=(basic_metadata_client&&) noexcept;
    ~basic_metadata_client();

    const client_options& options() const noexcept { return options_; }
    const forewarn::clock& clock() const noexcept { return options_.clock; }
    const forewarn::logger& log() const noexcept { return options_.log; }

    /// The root URL in use ("http://metadata.google.internal." until a fallback to the IP).
    std::string endpoint() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->base;
    }

    /// A configuration that can never work (a malformed endpoint), or success.
    result<void> validate() const {
        if (state_->config_error) return *state_->config_error;
        return {};
    }

    /// GCE has nothing to approve: false.
    bool can_approve() const noexcept { return false; }

    /// GCE has nothing to approve: always errc::unsupported.
    result<void> approve(const std::vector<std::string>& /*event_ids*/) {
        return error(errc::unsupported, "the GCE metadata server has no way to approve maintenance");
    }

    /**
     * The next maintenance snapshot: plain GETs the first time (and after wake()), then hanging
     * GETs that answer on a change, or after `watch_timeout` (shortened to reach `not_after`;
     * under a second away, a plain GET) with the same content. After a failure, `error_pause`
     * first.
     */
    result<document> next(forewarn::clock::time_point not_after = (forewarn::clock::time_point::max)());

    /// Ends the hanging GETs or the pause in progress in next() now; next() then asks plainly.
    void wake() noexcept;

    /// One snapshot with plain GETs: maintenance-event, preempted (a missing preempted key
    /// counts as FALSE) and upcoming-maintenance when asked for, after instance/name when it is
    /// not known yet.
    result<document> fetch();

    /// One key's value and ETag (alt=text unless options ask for JSON). 404 is errc::not_found.
    result<metadata_value> get(std::string_view key, const get_options& opts = {}) { return get_on(0, key, opts); }

    /**
     * A hanging GET: answers when the key's ETag differs from `last_etag` (at once if it already
     * does), or with the current value after `timeout_sec`. An empty `last_etag` waits for the
     * next change. 404 (errc::not_found) means the key is gone.
     */
    result<metadata_value> watch(std::string_view key, std::string_view last_etag, std::chrono::seconds timeout_sec,
                                 const get_options& opts = {}) {
        return watch_on(0, key, last_etag, timeout_sec, opts);
    }

    /// name (or client_options::self_name), id, hostname and the scheduling options of this
    /// instance. Asking never changes a document: events carry the name from the first one.
    result<instance_identity> identity();

    /// Makes the call in progress (even a hanging GET or a backoff) and every later one return
    /// errc::cancelled promptly, until reset(). Thread-safe.
    void cancel() noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->cancelled = true;
        state_->pacer->cancel();
        for (auto& l : state_->lanes) {
            l.transport.cancel();
            l.sleep.interrupt();
        }
    }

    /// Clears a cancel() so the client can be used again.
    void reset() noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->cancelled = false;
        state_->pacer->reset();
        for (auto& l : state_->lanes) {
            l.transport.reset();
            l.sleep.reset();
        }
    }

private:
    // upcoming-maintenance with a plain GET when asked for (options_.read_upcoming_maintenance):
    // its answer, nothing (not asked for, or a 404 now or before), or the failure.
    std::optional<result<metadata_value>> read_upcoming(std::size_t lane_index) {
        if (!options_.read_upcoming_maintenance || state_->upcoming_absent) return std::nullopt;
        return get_on(lane_index, upcoming_maintenance_key, upcoming_get_options());
    }

    static get_options upcoming_get_options() {
        get_options json;
        json.json = true;
        return json;
    }

    // The upcoming-maintenance event of an answer (or of its absence). A 404 stops the asking; a
    // failure or an answer that is not a window keeps the last good event, with a warning:
    // the other keys' notices never wait for this one.
    std::optional<event> upcoming_event_from(std::optional<result<metadata_value>>& answer) {
        if (!answer) return state_->upcoming_event;
        const std::string url = state_->base + std::string(root_path) + std::string(upcoming_maintenance_key);
        if (!*answer) {
            const error& e = answer->error();
            if (e.code == errc::not_found) {
                state_->upcoming_absent = true;
                state_->upcoming_event.reset();
                options_.log(log_level::info, "instance/upcoming-maintenance does not exist here: not asked again", url);
                return std::nullopt;
            }
            options_.log(log_level::warn,
                         "instance/upcoming-maintenance could not be read (the last window is kept): " + e.describe(), url);
            return state_->upcoming_event;
        }
        auto window = parse_upcoming_maintenance(200, (*answer)->value);
        if (!window) {
            options_.log(log_level::warn,
                         "instance/upcoming-maintenance is not a maintenance window (the last one is kept): " +
                             std::move(window).error().at_url(url).describe(),
                         url);
            return state_->upcoming_event;
        }
        state_->upcoming_event = *window ? std::optional<event>(to_event(**window)) : std::nullopt;
        return state_->upcoming_event;
    }

    static constexpr std::size_t key_count = 3;  // maintenance-event, preempted, upcoming-maintenance

    // One transport and one backoff sleep per concurrent request: next() holds one per key.
    struct lane {
        lane(Transport t, const forewarn::clock& c) : transport(std::move(t)), sleep(c) {}
        Transport transport;
        interruptible_sleep sleep;
        bool watching = false;  // a hanging GET of next() runs on it (wake() may cut it)
    };
    // What next() last returned: each key's value and ETag (an empty ETag: not watched).
    struct cursor_state {
        metadata_value maintenance;
        metadata_value preempted;  // etag empty: the key does not exist here
        metadata_value upcoming;   // etag empty: not asked for, absent, or answered without one (the 503)
    };
    struct state {
        state(Transport t, const client_options& o)
            : lanes{{lane(t, o.clock), lane(t, o.clock), lane(std::move(t), o.clock)}},
              retry(retry_rules::gce, o.retry),
              pacer(std::make_unique<forewarn::detail::source_pacer>(o.clock)) {}
        std::mutex mutex;  // guards base, instance_name, cancelled, woken and the lanes' cancel/reset
        std::array<lane, key_count> lanes;
        retry_policy retry;
        std::unique_ptr<forewarn::detail::source_pacer> pacer;
        std::string base;
        bool base_is_default = false;
        std::optional<error> config_error;
        std::string instance_name;
        bool cancelled = false;
        bool woken = false;
        bool failed = false;
        bool upcoming_absent = false;  // upcoming-maintenance answered 404: not asked again
        std::optional<event> upcoming_event;  // the last good upcoming-maintenance window's event
        std::optional<cursor_state> cursor;
    };

    std::optional<error> check_usable() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        if (state_->config_error) return state_->config_error;
        if (state_->cancelled) return cancelled_error();
        return std::nullopt;
    }

    error cancelled_error() const {
        return error(errc::cancelled, "the client was cancelled").at_url(state_->base + std::string(root_path));
    }

    bool take_woken() {
        std::lock_guard<std::mutex> lock(state_->mutex);
        const bool w = state_->woken;
        state_->woken = false;
        return w;
    }

    // The instance name, asked once before the first document so that every event names its VM.
    std::optional<error> ensure_name() {
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            if (!state_->instance_name.empty()) return std::nullopt;
        }
        auto name = get_on(0, "instance/name", {});
        if (!name) return std::move(name).error();
        const auto trimmed = forewarn::detail::trim(name->value);
        if (trimmed.empty()) {
            error e(errc::empty_body, "instance/name answered with an empty value");
            e.field = "instance/name";
            return e;
        }
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->instance_name = std::string(trimmed);
        return std::nullopt;
    }

    // Each lane, once it has a change or an error, cuts the other one short.
    void interrupt_lane(std::size_t i) noexcept {
        auto& l = state_->lanes[i];
        l.transport.cancel();
        l.sleep.interrupt();
    }

    // After next() cut a lane short: make them usable again unless the user cancelled.
    void restore_lanes() noexcept {
        std::lock_guard<std::mutex> lock(state_->mutex);
        for (auto& l : state_->lanes) l.watching = false;
        if (state_->cancelled) return;
        for (auto& l : state_->lanes) {
            l.transport.reset();
            l.sleep.reset();
        }
    }

    void set_watching(bool on) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        for (auto& l : state_->lanes) l.watching = on;
    }

    /**
     * Hanging GETs on every watched key with the cursor's ETags; returns as soon as any changes,
     * or the current snapshot (same content) when `timeout_sec` passes with no change. A lane cut
     * short by another one's change (or by wake()) keeps its value and ETag: had it changed
     * meanwhile, the next call's last_etag returns that at once. A key not watched (no ETag) is
     * read plainly once the watching ends.
     */
    result<document> wait_for_change(std::chrono::seconds timeout_sec) {
        const cursor_state last = *state_->cursor;
        const std::array<const metadata_value*, key_count> lasts{{&last.maintenance, &last.preempted, &last.upcoming}};
        const std::array<std::string_view, key_count> keys{{maintenance_event_key, preempted_key, upcoming_maintenance_key}};
        std::array<std::optional<result<metadata_value>>, key_count> results;
        auto watch_lane = [&](std::size_t i) {
            const get_options opts = i == 2 ? upcoming_get_options() : get_options{};
            auto r = watch_on(i, keys[i], lasts[i]->etag, timeout_sec, opts);
            if (!r || r->etag != lasts[i]->etag)
                for (std::size_t j = 0; j < key_count; ++j)
                    if (j != i) interrupt_lane(j);
            results[i] = std::move(r);
        };
        std::vector<std::thread> workers;
        workers.reserve(key_count - 1);
        set_watching(true);
        const forewarn::clock& c = options_.clock;
        for (std::size_t i = 1; i < key_count; ++i) {
            if (lasts[i]->etag.empty()) continue;
            c.thread_started();
            try {
                workers.emplace_back([&watch_lane, i, c] {
                    watch_lane(i);
                    c.thread_ended();
                });
            } catch (const std::exception& ex) {
                c.thread_ended();
                for (std::size_t j = 0; j < key_count; ++j) interrupt_lane(j);
                for (auto& w : workers) w.join();
                restore_lanes();
                return error(errc::transport, std::string("could not start a watch thread: ") + ex.what());
            }
        }
        watch_lane(0);
        for (auto& w : workers) w.join();
        restore_lanes();
        if (auto e = check_usable()) return *e;

        auto& maintenance_result = *results[0];
        if (!maintenance_result && maintenance_result.error().code == errc::cancelled)
            maintenance_result = last.maintenance;
        if (!maintenance_result) return std::move(maintenance_result).error();

        auto& preempted_result = results[1];
        if (preempted_result && !*preempted_result && preempted_result->error().code == errc::cancelled)
            preempted_result = result<metadata_value>(last.preempted);
        if (!preempted_result || (!*preempted_result && preempted_result->error().code == errc::not_found)) {
            // Not watched (the key did not exist) or gone while watched: read it plainly.
            auto p = get_preempted(0);
            if (!p) return std::move(p).error();
            preempted_result = std::move(p);
        }
        if (!*preempted_result) return std::move(*preempted_result).error();

        auto& upcoming_result = results[2];
        if (upcoming_result && !*upcoming_result && upcoming_result->error().code == errc::cancelled)
            upcoming_result = result<metadata_value>(last.upcoming);
        if (!upcoming_result) upcoming_result = read_upcoming(0);  // not watched: a plain GET
        return make_document(*maintenance_result, **preempted_result, std::move(upcoming_result));
    }

    result<metadata_value> get_on(std::size_t lane_index, std::string_view key, const get_options& opts) {
        auto path = forewarn::detail::gce_encode_key(key);
        if (!path) return std::move(path).error();
        std::string query = opts.recursive ? "recursive=true&alt=json" : (opts.json ? "alt=json" : "alt=text");
        return request(lane_index, *path, query, options_.request_timeout);
    }

    result<metadata_value> watch_on(std::size_t lane_index, std::string_view key, std::string_view last_etag,
                                    std::chrono::seconds timeout_sec, const get_options& opts) {
        if (timeout_sec.count() < 1) return error(errc::invalid_argument, "timeout_sec must be at least 1 second");
        auto path = forewarn::detail::gce_encode_key(key);
        if (!path) return std::move(path).error();
        std::string query = "wait_for_change=true";
        if (!last_etag.empty()) {
            query += "&last_etag=";
            query += forewarn::detail::percent_encode(last_etag, false);
        }
        query += "&timeout_sec=";
        query += std::to_string(timeout_sec.count());
        query += opts.recursive ? "&recursive=true&alt=json" : (opts.json ? "&alt=json" : "&alt=text");
        const auto total = std::chrono::duration_cast<std::chrono::milliseconds>(timeout_sec) + options_.watch_margin;
        return request(lane_index, *path, query, total);
    }

    // preempted, with a missing key standing for FALSE (no ETag: not watched).
    result<metadata_value> get_preempted(std::size_t lane_index) {
        auto p = get_on(lane_index, preempted_key, {});
        if (!p && p.error().code == errc::not_found) return metadata_value{"FALSE", {}, {}};
        return p;
    }

    // The document of the answers; on success they become the cursor. `u`: upcoming-maintenance's
    // answer, if asked.
    result<document> make_document(const metadata_value& m, const metadata_value& p,
                                   std::optional<result<metadata_value>> u) {
        if (m.etag.empty()) {
            error e(errc::invalid_document, "instance/maintenance-event answered without an ETag");
            e.field = "ETag";
            return std::move(e).at_url(state_->base + std::string(root_path) + std::string(maintenance_event_key));
        }
        auto me = maintenance_event_from(m.value);
        if (!me) return std::move(me).error();
        auto pe = preempted_event_from(p.value);
        if (!pe) return std::move(pe).error();
        std::optional<event> ue = upcoming_event_from(u);
        document doc;
        doc.origin = cloud::gce;
        metadata_value upcoming_answer;  // watched from now on only when it came with an ETag
        if (u && *u) upcoming_answer = **u;
        // Informative only: the ETags (the cursor is kept here, not in the document).
        doc.incarnation = m.etag + '/' + p.etag;
        if (!upcoming_answer.etag.empty()) doc.incarnation += '/' + upcoming_answer.etag;
        doc.service_time = m.service_time ? m.service_time : p.service_time;
        std::string name;
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            name = state_->instance_name;
        }
        for (auto* e : {&*me, &*pe, &ue}) {
            if (!*e) continue;
            if (!name.empty()) (*e)->resources.push_back(name);
            doc.events.push_back(std::move(**e));
        }
        state_->cursor = cursor_state{m, p, std::move(upcoming_answer)};
        return doc;
    }

    // One request with retries, the rate limit, the flavor check and the fallback to the IP.
    result<metadata_value> request(std::size_t lane_index, const std::string& path, const std::string& query,
                                   std::chrono::milliseconds total_timeout) {
        if (auto e = check_usable()) return *e;
        lane& l = state_->lanes[lane_index];
        auto attempt = [&]() -> result<metadata_value> {
            std::string base;
            bool may_fall_back = false;
            {
                std::lock_guard<std::mutex> lock(state_->mutex);
                if (state_->cancelled) return cancelled_error();
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
                        state_->base = std::string(default_ip_endpoint);
                        state_->base_is_default = false;
                    }
                    base = state_->base;
                }
                r = send_once(l, base, path, query, total_timeout);
            }
            return r;
        };
        return state_->retry.run(attempt, l.sleep, options_.log);
    }

    result<metadata_value> send_once(lane& l, const std::string& base, const std::string& path,
                                     const std::string& query, std::chrono::milliseconds total_timeout) {
        http_request req;
        req.method = http_method::get;
        req.url.reserve(base.size() + root_path.size() + path.size() + 1 + query.size());
        req.url += base;
        req.url += root_path;
        req.url += path;
        req.url += '?';
        req.url += query;
        if (options_.rate_limit) {
            auto bucket = rate_limiter::for_host(forewarn::detail::url_authority(base), options_.clock);
            if (!bucket->acquire(l.sleep))
                return error(errc::cancelled, "cancelled while waiting for the rate limit").at_url(req.url);
        }
        req.headers.push_back({"Metadata-Flavor", "Google"});
        req.timeout = total_timeout;
        req.connect_timeout = (std::min)(options_.connect_timeout, total_timeout);
        req.max_body = options_.max_body;

        const auto started = options_.clock.now();
        auto sent = l.transport.send(req);
        if (options_.log.enabled(log_level::debug))
            options_.log(log_level::debug,
                         forewarn::detail::request_log_line(req, sent, options_.clock.now() - started), req.url);
        if (!sent) return std::move(sent).error().at_url(req.url);
        http_response& resp = *sent;
        if (!forewarn::detail::gce_has_google_flavor(resp))
            return error(errc::not_metadata_server,
                         "the answer from " + base + " has no 'Metadata-Flavor: Google' header: not the GCE metadata server",
                         resp.status)
                .at_url(req.url);
        if (resp.status == 404)
            return error(errc::not_found, "no metadata key /computeMetadata/v1/" + path, 404).at_url(req.url);
        // upcoming-maintenance's "nothing yet" answer is a 503: not a failure to retry.
        if (resp.status == 503 && path == upcoming_maintenance_key &&
            resp.body.find("no notifications") != std::string::npos)
            return metadata_value{"NONE", {}, forewarn::detail::service_time_of(resp)};
        if (resp.status != 200)
            return error(errc::http_status,
                         "the metadata server answered " + std::to_string(resp.status) + " for /computeMetadata/v1/" + path,
                         resp.status)
                .at_url(req.url);
        metadata_value v;
        v.value = std::move(resp.body);
        if (const std::string* etag = resp.header("ETag")) v.etag = std::string(forewarn::detail::trim(*etag));
        v.service_time = forewarn::detail::service_time_of(resp);
        return v;
    }

    client_options options_;
    std::unique_ptr<state> state_;
};

// The special members are defined out of the class, like every other member, so that compiled
// mode's extern template declaration covers them too (a user's file then compiles none of them).
template <class Transport>
basic_metadata_client<Transport>::basic_metadata_client(basic_metadata_client&&) noexcept = default;
template <class Transport>
basic_metadata_client<Transport>& basic_metadata_client<Transport>::operator=(basic_metadata_client&&) noexcept = default;
template <class Transport>
basic_metadata_client<Transport>::~basic_metadata_client() = default;

template <class Transport>
basic_metadata_client<Transport>::basic_metadata_client(client_options options, Transport transport)
    : options_(std::move(options)),
      state_(std::make_unique<state>(std::move(transport), options_)) {
    static_assert(is_transport_v<Transport>, "Transport must satisfy forewarn::is_transport");
    static_assert(std::is_copy_constructible_v<Transport>,
                  "next() holds a request per key at once, on copies of the transport");
    if (options_.watch_timeout < std::chrono::seconds(1)) options_.watch_timeout = std::chrono::seconds(1);
    auto resolved = forewarn::detail::gce_resolve_endpoint(options_.endpoint, default_host_endpoint);
    if (resolved) {
        state_->base = std::move(resolved->base);
        state_->base_is_default = resolved->is_default;
    } else {
        state_->config_error = std::move(resolved).error();
    }
    if (!options_.self_name.empty()) state_->instance_name = options_.self_name;
}

template <class Transport>
result<document> basic_metadata_client<Transport>::next(forewarn::clock::time_point not_after) {
    if (auto e = check_usable()) return *e;
    auto& pacer = *state_->pacer;
    if (state_->failed) {
        const auto due = forewarn::clock::saturating_add(options_.clock.now(), options_.error_pause);
        if (!pacer.wait(due, not_after)) return cancelled_error();
    }
    result<document> r = error(errc::cancelled, "not asked");
    const auto left = not_after - options_.clock.now();
    if (!state_->cursor || take_woken() || left < std::chrono::seconds(1)) {
        r = fetch();
    } else {
        const auto secs = std::chrono::duration_cast<std::chrono::seconds>(left);
        r = wait_for_change((std::min)(options_.watch_timeout, secs));
    }
    state_->failed = !r && r.error().code != errc::cancelled;
    return r;
}

template <class Transport>
void basic_metadata_client<Transport>::wake() noexcept {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->woken = true;
    state_->pacer->wake();
    for (auto& l : state_->lanes) {
        if (!l.watching) continue;
        l.transport.cancel();
        l.sleep.interrupt();
    }
}

template <class Transport>
result<document> basic_metadata_client<Transport>::fetch() {
    if (auto e = check_usable()) return *e;
    if (auto e = ensure_name()) return *e;
    auto m = get_on(0, maintenance_event_key, {});
    if (!m) return std::move(m).error();
    auto p = get_preempted(0);
    if (!p) return std::move(p).error();
    return make_document(*m, *p, read_upcoming(0));
}

template <class Transport>
result<instance_identity> basic_metadata_client<Transport>::identity() {
    if (auto e = ensure_name()) return *e;
    instance_identity id;
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        id.name = state_->instance_name;
    }
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
    return id;
}

/// The metadata client over libcurl (include <forewarn/curl_transport.hpp> or forewarn.hpp).
using metadata_client = basic_metadata_client<>;

}  // namespace gce
FOREWARN_END_NAMESPACE

#define FOREWARN_GCE_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>
