// SPDX-License-Identifier: MIT
#pragma once

// Alibaba Cloud ECS's instance metadata as a notice source: a preemptible (Spot) instance's
// reclaim notice. Its vocabulary, parser and one key on the client base (docs/alibaba.md).

#include <forewarn/config.hpp>
#include <forewarn/detail/client_base.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/latest_metadata.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace alibaba {

/// The ECS metadata service, every instance.
inline constexpr std::string_view default_endpoint = "http://100.100.100.200";
/// The reclaim notice: 404 while none is scheduled, else the time in UTC ("2015-01-05T18:02:00Z").
inline constexpr std::string_view termination_time_path = "/latest/meta-data/instance/spot/termination-time";

/// The reclaim notice's body as an event (detail::spot_termination): a UTC ISO 8601 time.
inline result<event> parse_termination_time(std::string_view body) {
    const auto text = forewarn::detail::trim(body);
    auto when = forewarn::detail::parse_iso8601(text);
    if (!when) {
        error e = std::move(when).error();
        e.code = errc::invalid_document;
        e.field = "termination-time";
        return e;
    }
    return forewarn::detail::spot_termination(*when, text);
}

/// Who this instance is: its instance id ("i-bp67acfmxazb4p****"), or client_options::self_name.
struct instance_identity {
    std::string name;
};

/// Options of basic_metadata_client. Plain struct: set what you need.
struct client_options {
    /// Base URL. Empty: $FOREWARN_ALIBABA_ENDPOINT, else http://100.100.100.200.
    std::string endpoint;
    /// The session token's lifetime asked for (X-aliyun-ecs-metadata-token-ttl-seconds): 1..21600.
    std::chrono::seconds token_ttl{forewarn::detail::max_session_token_ttl};
    /// next(): how often the reclaim notice is read (Alibaba gives about five minutes). Never below 200 ms.
    std::chrono::milliseconds spot_interval{1000};
    std::chrono::milliseconds timeout{std::chrono::seconds(5)};  ///< total timeout of each request
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};
    std::size_t max_body = std::size_t(1) << 20;  ///< a longer answer fails with errc::body_too_large
    /// 429, 5xx and transport errors are retried (AWS's rules: the same family of service).
    retry_options retry;
    bool rate_limit = true;  ///< share the process-wide per-host rate limiter
    /// This instance's name as events name it. Empty: the instance id from the metadata.
    std::string self_name;
    forewarn::clock clock;  ///< the time line every wait (and the token's expiry) runs on
    forewarn::logger log;   ///< each request at debug (never the token), retries at info
};

/**
 * Alibaba Cloud ECS instance metadata over a Transport, a notice source: next() reads
 * `instance/spot/termination-time` every `spot_interval`; a time there is a preempt event
 * ("spot-termination") that names this instance. Every request carries a session token from
 * `PUT /latest/api/token` (the hardened mode, which every instance accepts), renewed before it
 * expires and after a 401. Nothing is approved (errc::unsupported).
 */
template <class Transport = default_transport>
class basic_metadata_client : public forewarn::detail::client_base<basic_metadata_client<Transport>, Transport> {
    using base_type = forewarn::detail::client_base<basic_metadata_client<Transport>, Transport>;
    friend base_type;

public:
    using identity_type = instance_identity;
    /// The cloud whose metadata this client reads (document::origin).
    static constexpr cloud source_cloud = cloud::alibaba;

    explicit basic_metadata_client(client_options options = {}, Transport transport = Transport())
        : base_type(std::move(transport), 1,
                    forewarn::detail::exchange_settings{options.clock, options.log, options.rate_limit,
                                                        (std::max)(options.spot_interval, std::chrono::milliseconds(200))},
                    retry_policy(retry_rules::aws, options.retry), key_count),
          options_(std::move(options)),
          meta_(forewarn::detail::latest_settings{"X-aliyun-ecs-metadata-token", "Alibaba metadata", options_.token_ttl, false,
                                                  options_.timeout, options_.connect_timeout, options_.max_body, nullptr}) {
        options_.spot_interval = (std::max)(options_.spot_interval, std::chrono::milliseconds(200));
        auto e = forewarn::detail::resolve_endpoint(options_.endpoint, "alibaba::client_options::endpoint",
                                                    {"FOREWARN_ALIBABA_ENDPOINT"}, default_endpoint);
        auto ttl = meta_.check_ttl(options_.token_ttl, "alibaba::client_options::token_ttl");
        if (e) endpoint_ = std::move(*e);
        if (!e || !ttl) this->x_.set_config_error(!e ? std::move(e).error() : std::move(ttl).error());
    }

    /// The base URL in use, after the precedence rules.
    const std::string& endpoint() const noexcept { return endpoint_; }
    const client_options& options() const noexcept { return options_; }

    /// This instance's identity (its instance id), asked once and cached, or options.self_name.
    result<instance_identity> identity() {
        if (this->known_identity(identity_, options_.self_name)) return *identity_;
        if (auto v = this->validate(); !v) return std::move(v).error();
        auto id = meta_.instance_id(this->x_, endpoint_);
        if (!id) return std::move(id).error();
        identity_ = instance_identity{std::move(*id)};
        return *identity_;
    }

private:
    static constexpr std::size_t key_count = 1;
    static constexpr bool may_hang = false;

    forewarn::detail::key_plan plan(std::size_t) const { return forewarn::detail::key_plan::poll(options_.spot_interval); }
    std::string event_owner() const { return identity_ ? identity_->name : std::string(); }
    result<void> before_read() { return meta_.ensure_token(this->x_, endpoint_); }
    result<void> before_fetch() {
        (void)identity();  // its failure is identity()'s to report: the notice is read anyway
        return {};
    }

    result<forewarn::detail::key_reading> read_key(std::size_t, std::size_t, std::optional<std::chrono::seconds>) {
        auto r = meta_.get(this->x_, endpoint_, termination_time_path);
        if (!r) return std::move(r).error();
        forewarn::detail::key_reading out;
        if (!*r) return out;
        auto e = parse_termination_time((*r)->body);
        if (!e) return std::move(e).error().at_url(endpoint_ + std::string(termination_time_path));
        out.events.push_back(std::move(*e));
        out.service_time = forewarn::detail::service_time_of(**r);
        return out;
    }

    client_options options_;
    std::string endpoint_;
    forewarn::detail::latest_metadata meta_;
    std::optional<instance_identity> identity_;
};

/// The client over the default transport (include <forewarn/default_transport.hpp> or forewarn.hpp).
using metadata_client = basic_metadata_client<>;

}  // namespace alibaba
FOREWARN_END_NAMESPACE

#define FOREWARN_ALIBABA_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>
