// SPDX-License-Identifier: MIT
#pragma once

// The GCE metadata client. It names its default transport only through fwd.hpp: include
// <forewarn/transport/default.hpp> (or <forewarn/forewarn.hpp>) to use it.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/client_base.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/detail/public_api_lane.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/gce/client_options.hpp>
#include <forewarn/gce/compute.hpp>
#include <forewarn/gce/endpoint.hpp>
#include <forewarn/gce/parse.hpp>
#include <forewarn/gce/upcoming_maintenance.hpp>
#include <forewarn/log.hpp>
#include <forewarn/poller/notice_source.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport/retry.hpp>
#include <forewarn/transport.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

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
// The default, default_transport, is given in fwd.hpp, where this template is declared first.
template <class Transport>
class basic_metadata_client
    : public forewarn::detail::client_base<basic_metadata_client<Transport>, Transport, instance_identity, cloud::gce, client_options> {
    using base_type = forewarn::detail::client_base<basic_metadata_client<Transport>, Transport, instance_identity, cloud::gce, client_options>;
    friend base_type;

public:
    explicit basic_metadata_client(client_options options = {}, Transport transport = Transport());
    FOREWARN_CLIENT_MOVABLE(basic_metadata_client);

    /// The root URL in use ("http://metadata.google.internal." until a fallback to the IP).
    std::string endpoint() const {
        std::lock_guard<std::mutex> lock(host_->mutex);
        return host_->base;
    }


    // next() and fetch() come from the base. next(): plain GETs the first time (and after wake());
    // then each key on its own schedule: a hanging GET where it has an ETag (answering on a
    // change, or after `watch_timeout`, shortened to reach `not_after`; under a second away,
    // plain GETs), a plain GET every `poll_interval` where it has none. fetch() asks instance/name
    // first when it is not known yet; a missing preempted key counts as FALSE.

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
    /// instance, asked each time (the name once). Asking never changes a document: events carry
    /// the name from the first one.
    result<instance_identity> identity();

    /// With client_options::perform_maintenance (the default), an upcoming window that can be
    /// rescheduled can be approved.
    bool can_approve() const noexcept { return this->options_.perform_maintenance; }
    /**
     * Starts the upcoming-maintenance window now: Compute's performMaintenance for this instance
     * (project, zone and name from the metadata server, the default service account's token). A
     * 200 means accepted: the window starting is what the notice shows next. errc::unsupported for
     * any other event, or with perform_maintenance off. One request id is kept for the retries of
     * one window's approval.
     */
    result<void> approve(const std::vector<std::string>& ids);

    void cancel() noexcept {
        compute_api_.cancel();
        base_type::cancel();
    }
    void reset() noexcept {
        compute_api_.reset();
        base_type::reset();
    }

private:
    // The keys of this source, in the document's order.
    static constexpr std::size_t key_count = 3;
    static constexpr bool may_hang = true;
    enum key_index : std::size_t { maintenance = 0, preempted = 1, upcoming = 2 };
    static constexpr std::string_view key_names[key_count] = {maintenance_event_key, preempted_key, upcoming_maintenance_key};

    // Where requests go (the default name falls back to the IP once) and the instance's name:
    // read by every lane, so under a mutex.
    struct host_state {
        std::mutex mutex;
        std::string base;
        bool base_is_default = false;
        std::string instance_name;
    };

    static client_options settled(client_options o) {
        o.watch_timeout = detail::larger(o.watch_timeout, std::chrono::seconds(1));
        o.poll_interval = detail::larger(o.poll_interval, std::chrono::milliseconds(200));
        return o;
    }
    static std::chrono::milliseconds error_pause(const client_options& o) { return o.error_pause; }

    forewarn::detail::key_plan plan(std::size_t k) const {
        using forewarn::detail::key_plan;
        const client_options& o = this->options_;
        if (k == upcoming && (!o.read_upcoming_maintenance || upcoming_absent_)) return key_plan::off();
        if (!etags_[k].empty()) return key_plan::hang(o.watch_timeout);
        return key_plan::poll(o.poll_interval);
    }

    std::string event_owner() const {
        std::lock_guard<std::mutex> lock(host_->mutex);
        return host_->instance_name;
    }
    result<void> before_fetch() {
        if (auto e = ensure_name()) return *e;
        return {};
    }
    // upcoming-maintenance's failures, whatever they are, keep its last good window: they never
    // hold back the maintenance-event and preempted notices.
    bool local_failure(std::size_t k, const error& e) const {
        return forewarn::detail::key_failure_is_local(e) || (k == upcoming && e.code != errc::cancelled);
    }
    // The metadata server ends every notice by clearing it: it cannot say "cancelled". It never
    // marks a live migration Started: one is under way once announced.
    void finish(document& doc) {
        doc.vanished_means_completed = true;
        doc.under_way_when_announced = {event_type::live_migrate};
    }

    std::string key_url(std::size_t k) const {
        return endpoint() + std::string(root_path) + std::string(key_names[k]);
    }

    // One request for key k on `lane` (a hanging GET of `hang` seconds when set), parsed. Its
    // ETag is the cursor of the next hanging GET even when the value does not parse.
    result<forewarn::detail::key_reading> read_key(std::size_t k, std::size_t lane, std::optional<std::chrono::seconds> hang) {
        get_options opts;
        opts.json = k == upcoming;
        result<metadata_value> r = hang ? watch_on(lane, key_names[k], etags_[k], *hang, opts) : get_on(lane, key_names[k], opts);
        if (!r && r.error().code == errc::not_found && k != maintenance) {
            if (k == preempted) {
                r = metadata_value{"FALSE", {}, {}};  // preempted, when missing, stands for FALSE (polled)
            } else {
                upcoming_absent_ = true;  // a machine type without the key: not asked again
                etags_[k].clear();
                this->log()(log_level::info, "instance/upcoming-maintenance does not exist here: not asked again", r.error().url);
                return forewarn::detail::key_reading{};
            }
        }
        if (!r) return std::move(r).error();
        etags_[k] = r->etag;
        auto fail = [&](error e) {
            return std::move(e).at_url(key_url(k));
        };
        forewarn::detail::key_reading out{{}, r->etag, r->service_time};
        if (k == upcoming) {
            auto window = parse_upcoming_maintenance(200, r->value);
            if (!window) return fail(std::move(window).error());
            if (*window) out.events.push_back(to_event(**window));
            for (auto& e : out.events) e.approvable = e.approvable.value_or(false) && can_approve();
            return out;
        }
        if (k == maintenance && r->etag.empty()) {
            error e(errc::invalid_document, "instance/maintenance-event answered without an ETag");
            e.field = "ETag";
            return fail(std::move(e));
        }
        auto e = k == maintenance ? maintenance_event_from(r->value) : preempted_event_from(r->value);
        if (!e) return fail(std::move(e).error());
        if (*e) {
            (*e)->approvable = false;  // a live migration, a termination, a preemption: never moved
            out.events.push_back(std::move(**e));
        }
        return out;
    }

    result<instance_identity> read_identity();
    // A metadata value, trimmed; an empty one is an error naming the key.
    result<std::string> metadata_text(std::string_view key);

    // performMaintenance's inputs, read once (the token until a minute before it expires), and
    // the request id of the approval in progress.
    forewarn::detail::public_api_lane<Transport> compute_api_;
    struct compute_state {
        std::string project, zone, token, request_id;
        forewarn::clock::time_point token_until{};
    } compute_;

    // The instance name, asked once before the first document so that every event names its VM.
    std::optional<error> ensure_name() {
        if (!event_owner().empty()) return std::nullopt;
        auto name = get_on(0, "instance/name", {});
        if (!name) return std::move(name).error();
        const auto trimmed = forewarn::detail::trim(name->value);
        if (trimmed.empty()) {
            error e(errc::empty_body, "instance/name answered with an empty value");
            e.field = "instance/name";
            return e;
        }
        std::lock_guard<std::mutex> lock(host_->mutex);
        host_->instance_name = std::string(trimmed);
        return std::nullopt;
    }

    std::optional<error> check_usable() const {
        if (auto v = this->validate(); !v) return v.error();
        if (this->x_.cancelled()) return error(errc::cancelled, "the client was cancelled").at_url(endpoint() + std::string(root_path));
        return std::nullopt;
    }

    result<metadata_value> get_on(std::size_t lane, std::string_view key, const get_options& opts) {
        auto path = forewarn::detail::gce_encode_key(key);
        if (!path) return std::move(path).error();
        std::string query = opts.recursive ? "recursive=true&alt=json" : (opts.json ? "alt=json" : "alt=text");
        return request(lane, *path, query, this->options_.request_timeout);
    }

    result<metadata_value> watch_on(std::size_t lane, std::string_view key, std::string_view last_etag,
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
        const auto total = std::chrono::duration_cast<std::chrono::milliseconds>(timeout_sec) + this->options_.watch_margin;
        return request(lane, *path, query, total);
    }

    // One request with retries, the rate limit, the flavor check and the fallback to the IP.
    result<metadata_value> request(std::size_t lane, const std::string& path, const std::string& query,
                                   std::chrono::milliseconds total_timeout) {
        if (auto e = check_usable()) return *e;
        return this->x_.run(lane, [&]() -> result<metadata_value> {
            std::string base;
            bool may_fall_back = false;
            {
                std::lock_guard<std::mutex> lock(host_->mutex);
                base = host_->base;
                may_fall_back = host_->base_is_default;
            }
            auto r = send_once(lane, base, path, query, total_timeout);
            if (!r && r.error().code == errc::transport && may_fall_back) {
                // metadata.google.internal. did not resolve (or connect): the same server
                // answers at the link-local IP. The flavor check still guards against impostors.
                {
                    std::lock_guard<std::mutex> lock(host_->mutex);
                    if (host_->base_is_default) {
                        host_->base = std::string(default_ip_endpoint);
                        host_->base_is_default = false;
                    }
                    base = host_->base;
                }
                r = send_once(lane, base, path, query, total_timeout);
            }
            return r;
        });
    }

    result<metadata_value> send_once(std::size_t lane, const std::string& base, const std::string& path,
                                     const std::string& query, std::chrono::milliseconds total_timeout) {
        http_request req = forewarn::detail::metadata_request(http_method::get, base + std::string(root_path) + path + '?' + query,
                                                              total_timeout, this->options_.connect_timeout, this->options_.max_body);
        req.headers.push_back({std::string(flavor_header), std::string(flavor)});
        auto sent = this->x_.send_once(lane, req);
        if (!sent) return std::move(sent).error();
        http_response& resp = *sent;
        if (!forewarn::detail::gce_has_google_flavor(resp))
            return error(errc::not_metadata_server,
                         "the answer from " + base + " has no 'Metadata-Flavor: Google' header: not the GCE metadata server",
                         resp.status)
                .at_url(req.url);
        // upcoming-maintenance's "nothing yet" answer is a 503: not a failure to retry.
        if (resp.status == 503 && path == upcoming_maintenance_key &&
            resp.body.find("no notifications") != std::string::npos)
            return metadata_value{"NONE", {}, forewarn::detail::service_time_of(resp)};
        if (resp.status != 200)
            return forewarn::detail::status_error(resp.status, "GET /computeMetadata/v1/" + path, resp.body).at_url(req.url);
        metadata_value v;
        v.value = std::move(resp.body);
        if (const std::string* etag = resp.header("ETag")) v.etag = std::string(forewarn::detail::trim(*etag));
        v.service_time = forewarn::detail::service_time_of(resp);
        return v;
    }

    std::unique_ptr<host_state> host_;
    std::array<std::string, key_count> etags_;  // each key's cursor (empty: not watched, polled)
    bool upcoming_absent_ = false;              // upcoming-maintenance answered 404: not asked again
};

template <class Transport>
basic_metadata_client<Transport>::basic_metadata_client(client_options options, Transport transport)
    : base_type(std::move(options), std::move(transport), retry_rules::gce),
      compute_api_(this->transport(), this->options_.clock),
      host_(std::make_unique<host_state>()) {
    static_assert(std::is_copy_constructible_v<Transport>,
                  "next() holds a request per key at once, on copies of the transport");
    auto resolved = forewarn::detail::gce_resolve_endpoint(this->options_.endpoint, default_host_endpoint);
    if (resolved) {
        host_->base = std::move(resolved->base);
        host_->base_is_default = resolved->is_default;
    } else {
        this->x_.set_config_error(std::move(resolved).error());
    }
    if (!this->options_.self_name.empty()) host_->instance_name = this->options_.self_name;
}

template <class Transport>
result<instance_identity> basic_metadata_client<Transport>::identity() {
    return read_identity();
}

template <class Transport>
result<instance_identity> basic_metadata_client<Transport>::read_identity() {
    if (auto e = ensure_name()) return *e;
    instance_identity id;
    id.name = event_owner();
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

template <class Transport>
result<std::string> basic_metadata_client<Transport>::metadata_text(std::string_view key) {
    auto r = get_on(0, key, {});
    if (!r) return std::move(r).error();
    const auto v = forewarn::detail::trim(r->value);
    if (v.empty()) {
        error e(errc::empty_body, std::string(key) + " answered with an empty value");
        e.field = std::string(key);
        return e;
    }
    return std::string(v);
}

template <class Transport>
result<void> basic_metadata_client<Transport>::approve(const std::vector<std::string>& ids) {
    if (!can_approve())
        return error(errc::unsupported, "GCE approvals are off (gce::client_options::perform_maintenance)");
    for (const auto& id : ids)
        if (id != upcoming_maintenance_event_id)
            return error(errc::unsupported, "GCE starts only an upcoming-maintenance window early, not " + id);
    const std::string what = "Compute performMaintenance";
    auto name = read_identity();
    if (!name) return error(name.error().code, what + ": this instance's name: " + name.error().message);
    if (compute_.project.empty()) {
        auto project = metadata_text(project_id_key);
        if (!project) return error(project.error().code, what + ": " + project.error().describe());
        compute_.project = std::move(*project);
    }
    if (compute_.zone.empty()) {
        auto zone = metadata_text(zone_key);
        if (!zone) return error(zone.error().code, what + ": " + zone.error().describe());
        compute_.zone = zone->substr(zone->rfind('/') + 1);  // projects/NUM/zones/ZONE
    }
    const auto now = this->clock().now();
    if (compute_.token.empty() || now >= compute_.token_until) {
        auto body = get_on(0, token_key, {});
        if (!body) return error(body.error().code, what + ": the service account's token: " + body.error().describe());
        auto t = parse_access_token(body->value);
        if (!t) return error(t.error().code, what + ": the service account's token: " + t.error().describe());
        compute_.token = std::move(t->token);
        compute_.token_until = now + detail::larger(t->expires_in - std::chrono::seconds(60), std::chrono::seconds(0));
    }
    if (compute_.request_id.empty()) compute_.request_id = forewarn::detail::uuid_v4();
    const std::string endpoint =
        this->options_.compute_endpoint.empty() ? std::string(default_compute_endpoint) : this->options_.compute_endpoint;
    auto r = forewarn::detail::gce_perform_maintenance(
        [this](const http_request& q) { return compute_api_.send(q); }, compute_api_.sleep, this->log(),
        perform_maintenance_url(endpoint, compute_.project, compute_.zone, name->name, compute_.request_id), compute_.token);
    if (r) compute_.request_id.clear();  // the next window is a new request
    if (!r && r.error().http_status == 401) compute_.token.clear();  // read it again next time
    return r;
}

FOREWARN_CLIENT_MOVABLE_DEFAULTS(basic_metadata_client);

/// The metadata client over the default transport (include <forewarn/transport/default.hpp> or forewarn.hpp).
using metadata_client = basic_metadata_client<>;

}  // namespace gce
FOREWARN_END_NAMESPACE

#define FOREWARN_GCE_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>
