// SPDX-License-Identifier: MIT
#pragma once

// Tencent Cloud CVM's instance metadata as a notice source: a Spot instance's reclaim notice.
// Its vocabulary, parser and one key on the client base (docs/tencent.md).

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
namespace tencent {

/// The CVM metadata service (it resolves to a link-local address inside Tencent Cloud).
inline constexpr std::string_view default_endpoint = "http://metadata.tencentyun.com";
/// The reclaim notice: 404 while none (or not a Spot instance), else "2018-08-18 12:05:33" in UTC+8.
inline constexpr std::string_view termination_time_path = "/latest/meta-data/spot/termination-time";

/// The reclaim notice's body as an event (detail::spot_termination): "YYYY-MM-DD HH:MM:SS", which
/// Tencent writes in China Standard Time (UTC+8); the event's not_before is that instant.
inline result<event> parse_termination_time(std::string_view body) {
    const auto text = forewarn::detail::trim(body);
    bool shaped = text.size() == 19 && text[10] == ' ';
    for (std::size_t i = 0; shaped && i < text.size(); ++i)
        shaped = (i == 4 || i == 7) ? text[i] == '-' : (i == 13 || i == 16) ? text[i] == ':' : i == 10 || (text[i] >= '0' && text[i] <= '9');
    auto when = shaped ? forewarn::detail::parse_iso8601(std::string(text.substr(0, 10)) + 'T' + std::string(text.substr(11)) + "+08:00")
                       : result<std::chrono::system_clock::time_point>(error(errc::invalid_document, "not a time like 2018-08-18 12:05:33"));
    if (!when) {
        error e = std::move(when).error();
        e.code = errc::invalid_document;
        e.field = "termination-time";
        return e;
    }
    return forewarn::detail::spot_termination(*when, std::string(text) + " (UTC+8)");
}

/// Who this instance is: its instance id ("ins-xxxxxxxx"), or client_options::self_name.
struct instance_identity {
    std::string name;
};

/// Options of basic_metadata_client. Plain struct: set what you need.
struct client_options {
    /// Base URL. Empty: $FOREWARN_TENCENT_ENDPOINT, else http://metadata.tencentyun.com.
    std::string endpoint;
    /// next(): how often the reclaim notice is read (Tencent gives about two minutes). Never below 200 ms.
    std::chrono::milliseconds spot_interval{1000};
    std::chrono::milliseconds timeout{std::chrono::seconds(5)};  ///< total timeout of each request
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};
    std::size_t max_body = std::size_t(1) << 20;  ///< a longer answer fails with errc::body_too_large
    retry_options retry;     ///< 429, 5xx and transport errors are retried (the AWS family's rules)
    bool rate_limit = true;  ///< share the process-wide per-host rate limiter
    /// This instance's name as events name it. Empty: the instance id from the metadata.
    std::string self_name;
    forewarn::clock clock;  ///< the time line every wait runs on
    forewarn::logger log;   ///< each request at debug, retries at info
};

/**
 * Tencent Cloud CVM instance metadata over a Transport, a notice source: next() reads
 * `spot/termination-time` every `spot_interval`; a time there is a preempt event
 * ("spot-termination", not_before in UTC) that names this instance. The service takes no token.
 * Nothing is approved (errc::unsupported).
 */
template <class Transport = default_transport>
class basic_metadata_client : public forewarn::detail::client_base<basic_metadata_client<Transport>, Transport> {
    using base_type = forewarn::detail::client_base<basic_metadata_client<Transport>, Transport>;
    friend base_type;

public:
    using identity_type = instance_identity;
    /// The cloud whose metadata this client reads (document::origin).
    static constexpr cloud source_cloud = cloud::tencent;

    explicit basic_metadata_client(client_options options = {}, Transport transport = Transport())
        : base_type(std::move(transport), 1,
                    forewarn::detail::exchange_settings{options.clock, options.log, options.rate_limit,
                                                        (std::max)(options.spot_interval, std::chrono::milliseconds(200))},
                    retry_policy(retry_rules::aws, options.retry), key_count),
          options_(std::move(options)),
          meta_(forewarn::detail::latest_settings{{}, {}, {}, false, options_.timeout, options_.connect_timeout,
                                                  options_.max_body, nullptr}) {
        options_.spot_interval = (std::max)(options_.spot_interval, std::chrono::milliseconds(200));
        auto e = forewarn::detail::resolve_endpoint(options_.endpoint, "tencent::client_options::endpoint",
                                                    {"FOREWARN_TENCENT_ENDPOINT"}, default_endpoint);
        if (e) endpoint_ = std::move(*e);
        else this->x_.set_config_error(std::move(e).error());
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
    result<void> before_fetch() {
        (void)identity();  // its failure is identity()'s to report: the notice is read anyway
        return {};
    }

    result<forewarn::detail::key_reading> read_key(std::size_t, std::size_t, std::optional<std::chrono::seconds>) {
        auto r = meta_.get(this->x_, endpoint_, termination_time_path);
        if (!r) return std::move(r).error();
        if (!*r) return forewarn::detail::key_reading{};
        auto e = parse_termination_time((*r)->body);
        if (!e) return std::move(e).error().at_url(endpoint_ + std::string(termination_time_path));
        return forewarn::detail::key_reading{{std::move(*e)}, {}, forewarn::detail::service_time_of(**r)};
    }

    client_options options_;
    std::string endpoint_;
    forewarn::detail::latest_metadata meta_;
    std::optional<instance_identity> identity_;
};

/// The client over the default transport (include <forewarn/default_transport.hpp> or forewarn.hpp).
using metadata_client = basic_metadata_client<>;

}  // namespace tencent
FOREWARN_END_NAMESPACE

#define FOREWARN_TENCENT_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>
