// SPDX-License-Identifier: MIT
#pragma once

// The AWS EC2 instance metadata (IMDSv2) client: a notice source for Spot interruptions,
// rebalance recommendations and scheduled events. It names its default transport only through
// fwd.hpp: include <forewarn/default_transport.hpp> (or <forewarn/forewarn.hpp>) to use it.

#include <forewarn/aws/endpoint.hpp>
#include <forewarn/aws/parse.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/log.hpp>
#include <forewarn/notice_source.hpp>
#include <forewarn/result.hpp>
#include <forewarn/retry.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/// Who this instance is, from the instance metadata.
struct instance_identity {
    std::string name;               ///< the instance id (or client_options::self_name): what events name
    std::string instance_id;        ///< meta-data/instance-id, e.g. "i-0123456789abcdef0"
    std::string instance_type;      ///< meta-data/instance-type; empty when not sent
    std::string availability_zone;  ///< meta-data/placement/availability-zone; empty when not sent
    std::string lifecycle;          ///< meta-data/instance-life-cycle: "spot", "on-demand" or "scheduled"; empty when not sent
    bool spot() const noexcept { return lifecycle == "spot"; }
};

/// The longest session token IMDS grants, in seconds (six hours).
inline constexpr int max_token_ttl_seconds = 21600;

/// Options of basic_instance_metadata_client. Plain struct: set what you need.
struct client_options {
    /// Base URL. Empty: $AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254 (or
    /// http://[fd00:ec2::254] with `ipv6`).
    std::string endpoint;
    bool ipv6 = false;
    /// The session token's lifetime asked for (X-aws-ec2-metadata-token-ttl-seconds): 1..21600.
    std::chrono::seconds token_ttl{max_token_ttl_seconds};
    /// IMDSv1 (no token) when the token PUT is refused with 403, 404 or 405. Off: IMDSv2 only,
    /// as AWS recommends; an instance that requires IMDSv2 refuses IMDSv1 anyway.
    bool allow_imdsv1 = false;
    /// next(): how often the Spot instance-action is read. A Spot notice gives two minutes, so
    /// it is read every second (AWS advises at least every 5 s; aws-node-termination-handler reads
    /// it every 2 s): a notice reaches the poller within about a second. Never below 200 ms.
    std::chrono::milliseconds spot_interval{1000};
    /// next(): how often the scheduled events and the rebalance recommendation are read (days
    /// and minutes of notice). Never below 1 s.
    std::chrono::milliseconds poll_interval{5000};
    std::chrono::milliseconds timeout{std::chrono::seconds(5)};  ///< total timeout of each request
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};
    std::size_t max_body = std::size_t(1) << 20;  ///< a longer answer fails with errc::body_too_large
    /// Backoff, attempts and budget: 429, 5xx and transport errors are retried; 400, 403 and 404
    /// are not; a 401 renews the token once.
    retry_options retry;
    /// Share the process-wide per-host rate limiter (5 requests in any second).
    bool rate_limit = true;
    /// This instance's name as events name it. Empty: the instance id from the metadata.
    std::string self_name;
    forewarn::clock clock;  ///< the time line every wait (and the token's expiry) runs on
    forewarn::logger log;   ///< each request at debug (never the token), retries at info
};

}  // namespace aws

namespace detail {

// A token is a short printable ASCII string; anything else is not IMDS talking.
bool aws_token_acceptable(std::string_view t) noexcept;

error aws_status_error(int status, std::string_view what, std::string_view body = {});

}  // namespace detail

namespace aws {

/**
 * AWS EC2 instance metadata (IMDSv2) over a Transport, a notice source: next() gives one
 * document every poll interval with the Spot instance-action, the rebalance recommendation and
 * the scheduled events (docs/aws.md has the mapping). AWS approves nothing through IMDS:
 * can_approve() is false and approve() errc::unsupported.
 *
 * Every request carries the session token (`X-aws-ec2-metadata-token`), got by `PUT
 * /latest/api/token` with the TTL asked for, renewed on the client's clock before it expires and
 * once after a 401. No proxy, no redirects (curl_transport), a body cap, retries by status, the
 * per-host rate limit. The token is never logged. One thread uses a client at a time; wake(),
 * cancel() and reset() may come from any thread.
 */
template <class Transport = default_transport>
class basic_instance_metadata_client {
public:
    using transport_type = Transport;
    using identity_type = instance_identity;

    explicit basic_instance_metadata_client(client_options options = {}, Transport transport = Transport());
    basic_instance_metadata_client(basic_instance_metadata_client&&) noexcept(std::is_nothrow_move_constructible_v<Transport>);
    basic_instance_metadata_client& operator=(basic_instance_metadata_client&&) noexcept(std::is_nothrow_move_assignable_v<Transport>);
    ~basic_instance_metadata_client();

    /// The base URL in use, after the precedence rules.
    const std::string& endpoint() const noexcept { return endpoint_; }
    const client_options& options() const noexcept { return options_; }
    Transport& transport() noexcept { return x_.transport(); }
    const Transport& transport() const noexcept { return x_.transport(); }
    const forewarn::clock& clock() const noexcept { return x_.clock(); }
    const forewarn::logger& log() const noexcept { return x_.log(); }
    /// Session tokens got so far (the first one included): how often the client renewed.
    std::size_t tokens_fetched() const noexcept { return tokens_fetched_; }

    /// A configuration that can never work (a malformed endpoint, a TTL outside 1..21600, IMDS
    /// turned off by AWS_EC2_METADATA_DISABLED), or success.
    result<void> validate() const { return x_.validate(); }

    /// AWS approves nothing through IMDS: false.
    bool can_approve() const noexcept { return false; }
    /// errc::unsupported: maintenance on AWS is rescheduled through the EC2 API, not IMDS.
    result<void> approve(const std::vector<std::string>&) {
        return error(errc::unsupported, "AWS takes no approvals through the instance metadata service");
    }

    /**
     * The next document: at once the first time; then each notice path on its own cadence (the
     * Spot instance-action every `spot_interval`, the others every `poll_interval`), a document
     * as soon as one of them changed, else once all three were read again; earlier when
     * `not_after` comes first or wake() is called.
     */
    result<document> next(forewarn::clock::time_point not_after = (forewarn::clock::time_point::max)());

    /// Ends the wait in progress in next() now (not a request). Thread-safe.
    void wake() noexcept { x_.wake(); }

    /**
     * Reads the three notice paths once: the scheduled events (a 404 counts as none), the Spot
     * instance-action and the rebalance recommendation (404: none). Their events name this
     * instance (`resources`) once its name is known. Any other failure fails the whole document:
     * a partial one would look like notices that vanished.
     */
    result<document> fetch();

    /**
     * This instance's identity, asked once and cached: instance-id (required), instance-type,
     * placement/availability-zone and instance-life-cycle (each empty when 404). With
     * options.self_name, that is the name and nothing is asked.
     */
    result<instance_identity> identity();

    /// Makes the in-flight request, any backoff and the wait in next() return errc::cancelled
    /// promptly; sticky until reset().
    void cancel() noexcept { x_.cancel(); }
    /// Clears a cancel() so that the client can be used again.
    void reset() noexcept { x_.reset(); }

private:
    // The notice paths, the keys of this source, in the document's order.
    static constexpr std::size_t key_count = 3;
    static constexpr std::string_view key_paths[key_count] = {scheduled_events_path, spot_instance_action_path,
                                                               rebalance_path};
    static constexpr std::string_view key_whats[key_count] = {
        "GET events/maintenance/scheduled", "GET spot/instance-action", "GET events/recommendations/rebalance"};

    forewarn::detail::key_plan plan(std::size_t k) const {
        return forewarn::detail::key_plan::poll(k == 1 ? options_.spot_interval : options_.poll_interval);
    }

    // One notice path read: its answer kept (nullopt: 404, none); true when it differs from
    // the one the last document was made of.
    result<bool> ask(std::size_t k) {
        auto r = get(key_paths[k], key_whats[k]);
        if (!r) return std::move(r).error();
        const auto& before = composed_[k];
        const bool changed = r->has_value() != before.has_value() || (*r && (*r)->body != before->body);
        answers_[k] = std::move(*r);
        return changed;
    }

    result<document> compose();

    // A token that is good for a while yet: renewed when less than a tenth of its life (at most a
    // minute) is left, so that a request never goes out with one about to expire.
    result<void> ensure_token() {
        if (imdsv1_) return {};
        const auto now = x_.clock().now();
        if (token_ && now < token_renew_at_) return {};
        const std::string u = endpoint_ + "/latest/api/token";
        http_request req = base_request(http_method::put, u);
        req.headers.push_back({"X-aws-ec2-metadata-token-ttl-seconds", std::to_string(options_.token_ttl.count())});
        auto answer = send_with_retries(req, "PUT api/token");
        if (!answer) {
            const int status = answer.error().http_status;
            if (options_.allow_imdsv1 && (status == 403 || status == 404 || status == 405)) {
                imdsv1_ = true;
                x_.log()(log_level::warn, "IMDSv2 token refused (HTTP " + std::to_string(status) + "): using IMDSv1", u);
                return {};
            }
            return std::move(answer).error();
        }
        const auto token = forewarn::detail::trim(answer->body);
        if (!forewarn::detail::aws_token_acceptable(token))
            return error(errc::invalid_document, "PUT api/token: the answer is not a session token").at_url(u);
        token_ = std::string(token);
        ++tokens_fetched_;
        const auto ttl = std::chrono::duration_cast<forewarn::clock::duration>(options_.token_ttl);
        const auto margin = (std::min)(ttl / 10, std::chrono::duration_cast<forewarn::clock::duration>(std::chrono::minutes(1)));
        token_renew_at_ = forewarn::clock::saturating_add(now, ttl - margin);
        return {};
    }

    // GET `path` with the token: the answer on 200, nothing on 404, an error otherwise. A 401
    // renews the token once and asks again.
    result<std::optional<http_response>> get(std::string_view path, std::string_view what) {
        const std::string u = endpoint_ + std::string(path);
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (auto t = ensure_token(); !t) return std::move(t).error();
            http_request req = base_request(http_method::get, u);
            if (token_ && !imdsv1_) req.headers.push_back({"X-aws-ec2-metadata-token", *token_});
            auto answer = send_with_retries(req, what);
            if (answer) return std::optional<http_response>(std::move(*answer));
            if (answer.error().code == errc::not_found) return std::optional<http_response>();
            if (answer.error().http_status == 401 && attempt == 0 && !imdsv1_) {
                token_.reset();  // expired or revoked early: one fresh token, one more try
                continue;
            }
            return std::move(answer).error();
        }
        return error(errc::http_status, std::string(what) + ": 401 Unauthorized with a fresh token", 401).at_url(u);
    }

    http_request base_request(http_method method, const std::string& url) const {
        http_request req;
        req.method = method;
        req.url = url;
        req.timeout = options_.timeout;
        req.connect_timeout = options_.connect_timeout;
        req.max_body = options_.max_body;
        return req;
    }

    // The line of each request names the method, URL and status: never a header, so never the token.
    result<http_response> send_with_retries(const http_request& req, std::string_view what) {
        return x_.send(0, req, [&](http_response& r) -> result<http_response> {
            if (r.status != 200) return forewarn::detail::aws_status_error(r.status, what, r.body).at_url(req.url);
            return std::move(r);
        });
    }

    client_options options_;
    std::string endpoint_;
    forewarn::detail::metadata_exchange<Transport> x_;
    std::optional<http_response> answers_[key_count];   // each path's last answer (nullopt: 404)
    std::optional<http_response> composed_[key_count];  // the answers the last document was made of
    std::optional<std::string> token_;
    forewarn::clock::time_point token_renew_at_{};
    std::size_t tokens_fetched_ = 0;
    bool imdsv1_ = false;
    std::optional<instance_identity> identity_;
};

// The special members are defined out of the class, like every other member, so that compiled
// mode's extern template declaration covers them too (a user's file then compiles none of them).
template <class Transport>
basic_instance_metadata_client<Transport>::basic_instance_metadata_client(basic_instance_metadata_client&&) noexcept(
    std::is_nothrow_move_constructible_v<Transport>) = default;
template <class Transport>
basic_instance_metadata_client<Transport>& basic_instance_metadata_client<Transport>::operator=(basic_instance_metadata_client&&) noexcept(
    std::is_nothrow_move_assignable_v<Transport>) = default;
template <class Transport>
basic_instance_metadata_client<Transport>::~basic_instance_metadata_client() = default;

template <class Transport>
basic_instance_metadata_client<Transport>::basic_instance_metadata_client(client_options options, Transport transport)
    : options_(std::move(options)),
      x_(std::move(transport), 1,
         forewarn::detail::exchange_settings{options_.clock, options_.log, options_.rate_limit,
                                             (std::max)(options_.spot_interval, std::chrono::milliseconds(200))},
         retry_policy(retry_rules::aws, options_.retry)) {
    static_assert(is_transport_v<Transport>, "Transport must model forewarn::is_transport");
    options_.spot_interval = (std::max)(options_.spot_interval, std::chrono::milliseconds(200));
    options_.poll_interval = (std::max)(options_.poll_interval, std::chrono::milliseconds(1000));
    auto endpoint = forewarn::detail::aws_resolve_endpoint(options_.endpoint, "aws::client_options::endpoint", options_.ipv6);
    if (!endpoint) {
        x_.set_config_error(std::move(endpoint).error());
    } else {
        endpoint_ = std::move(*endpoint);
    }
    if (!x_.config_error() && (options_.token_ttl.count() < 1 || options_.token_ttl.count() > max_token_ttl_seconds))
        x_.set_config_error(error(errc::invalid_argument, "aws::client_options::token_ttl: " +
                                                              std::to_string(options_.token_ttl.count()) +
                                                              " s is outside 1..21600"));
    if (!x_.config_error() && forewarn::detail::aws_metadata_disabled())
        x_.set_config_error(
            error(errc::unsupported, "the instance metadata service is turned off by AWS_EC2_METADATA_DISABLED"));
}

template <class Transport>
result<document> basic_instance_metadata_client<Transport>::next(forewarn::clock::time_point not_after) {
    return x_.next(
        not_after, key_count, [this](std::size_t k) { return plan(k); },
        [this](std::size_t k, std::size_t, std::optional<std::chrono::seconds>) { return ask(k); },
        [this] { return fetch(); }, [this] { return compose(); });
}

template <class Transport>
result<document> basic_instance_metadata_client<Transport>::fetch() {
    if (auto v = x_.validate(); !v) return std::move(v).error();
    if (!identity_ && options_.self_name.empty()) (void)identity();  // its failure is identity()'s to report
    auto read = x_.read_all(
        key_count, [this](std::size_t k) { return plan(k); },
        [this](std::size_t k, std::size_t, std::optional<std::chrono::seconds>) { return ask(k); });
    if (!read) return std::move(read).error();
    return compose();
}

template <class Transport>
result<document> basic_instance_metadata_client<Transport>::compose() {
    document doc;
    doc.origin = cloud::aws;
    if (const auto& scheduled = answers_[0]) {
        auto events = parse_scheduled_events(scheduled->body);
        if (!events) return std::move(events).error().at_url(endpoint_ + std::string(key_paths[0]));
        doc.events = std::move(*events);
        doc.service_time = forewarn::detail::service_time_of(*scheduled);
    }
    if (const auto& spot = answers_[1]) {
        auto e = parse_spot_instance_action(spot->body);
        if (!e) return std::move(e).error().at_url(endpoint_ + std::string(key_paths[1]));
        doc.events.push_back(std::move(*e));
        if (!doc.service_time) doc.service_time = forewarn::detail::service_time_of(*spot);
    }
    if (const auto& rebalance = answers_[2]) {
        auto e = parse_rebalance_recommendation(rebalance->body);
        if (!e) return std::move(e).error().at_url(endpoint_ + std::string(key_paths[2]));
        doc.events.push_back(std::move(*e));
        if (!doc.service_time) doc.service_time = forewarn::detail::service_time_of(*rebalance);
    }
    const std::string self = options_.self_name.empty() ? (identity_ ? identity_->name : std::string()) : options_.self_name;
    if (!self.empty())
        for (auto& e : doc.events) e.resources = {self};
    for (std::size_t k = 0; k < key_count; ++k) composed_[k] = answers_[k];
    return doc;
}

template <class Transport>
result<instance_identity> basic_instance_metadata_client<Transport>::identity() {
    if (identity_) return *identity_;
    if (!options_.self_name.empty()) {
        instance_identity id;
        id.name = options_.self_name;
        identity_ = id;
        return id;
    }
    if (auto v = x_.validate(); !v) return std::move(v).error();
    instance_identity id;
    struct field {
        std::string_view path;
        std::string instance_identity::*target;
        bool required;
    };
    for (const auto& f : {field{"/latest/meta-data/instance-id", &instance_identity::instance_id, true},
                          field{"/latest/meta-data/instance-type", &instance_identity::instance_type, false},
                          field{"/latest/meta-data/placement/availability-zone", &instance_identity::availability_zone, false},
                          field{"/latest/meta-data/instance-life-cycle", &instance_identity::lifecycle, false}}) {
        auto r = get(f.path, "GET identity");
        if (!r) return std::move(r).error();
        if (!*r) {
            if (!f.required) continue;
            error e(errc::not_found, "the instance metadata has no instance-id");
            e.http_status = 404;
            return std::move(e).at_url(endpoint_ + std::string(f.path));
        }
        const auto value = forewarn::detail::trim((*r)->body);
        if (f.required && value.empty()) {
            error e(errc::empty_body, "empty instance-id");
            e.field = "instance-id";
            return std::move(e).at_url(endpoint_ + std::string(f.path));
        }
        id.*f.target = std::string(value);
    }
    id.name = id.instance_id;
    identity_ = id;
    return id;
}

/// The client over the default transport (WinHTTP on Windows, libcurl elsewhere). Include
/// <forewarn/default_transport.hpp> to use it.
using instance_metadata_client = basic_instance_metadata_client<>;

}  // namespace aws
FOREWARN_END_NAMESPACE

#define FOREWARN_AWS_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/aws/instance_metadata_client-inl.hpp>
#endif
