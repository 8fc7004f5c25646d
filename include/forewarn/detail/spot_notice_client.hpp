// SPDX-License-Identifier: MIT
// The clients of the clouds whose one in-guest notice is a Spot instance's reclaim time on a
// /latest/ path (Alibaba ECS, Tencent CVM): one key, polled; a 404 is no notice. A cloud of this
// kind is its endpoint, its path, its parser and its options (docs/architecture.md, "A new cloud").
#pragma once

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/client_base.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/latest_metadata.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport/retry.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The options every reclaim-notice client has (alibaba::client_options and
/// tencent::client_options derive from it). Plain struct: set what you need.
struct spot_notice_options {
    /// Base URL. Empty: the cloud's variable (FOREWARN_ALIBABA_ENDPOINT, ...), else its address.
    std::string endpoint;
    /// next(): how often the notice is read (a few minutes of notice). Never below 200 ms.
    std::chrono::milliseconds spot_interval{1000};
    std::chrono::milliseconds timeout{std::chrono::seconds(5)};  ///< total timeout of each request
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};
    std::size_t max_body = std::size_t(1) << 20;  ///< a longer answer fails with errc::body_too_large
    retry_options retry;     ///< 429, 5xx and transport errors are retried (the AWS family's rules)
    bool rate_limit = true;  ///< share the process-wide per-host rate limiter
    /// This instance's name as events name it. Empty: the instance id from the metadata.
    std::string self_name;
    forewarn::clock clock;  ///< the time line every wait runs on
    forewarn::logger log;   ///< each request at debug (never a token), retries at info
};

/// Where a reclaim-notice cloud is and how its notice reads; `Client` has them as static members
/// `endpoint_option`, `endpoint_variable`, `default_endpoint`, `termination_time_path` and
/// `parse(body) -> result<event>`.
template <class Client, class Transport, class Identity, cloud Cloud>
class spot_notice_client : public client_base<Client, Transport, Identity, Cloud> {
    using base_type = client_base<Client, Transport, Identity, Cloud>;
    friend base_type;

public:
    /// The base URL in use, after the precedence rules.
    const std::string& endpoint() const noexcept { return endpoint_; }

    /// This instance's identity (its instance id), asked once and cached, or the options' self_name.
    result<Identity> identity() {
        if (this->known_identity(identity_, self_name_)) return *identity_;
        if (auto v = this->validate(); !v) return std::move(v).error();
        auto id = meta_.get_instance_id(this->x_, endpoint_);
        if (!id) return std::move(id).error();
        identity_.emplace();
        identity_->name = std::move(*id);
        return *identity_;
    }

protected:
    spot_notice_client(Transport transport, const spot_notice_options& o, latest_settings meta)
        : base_type(std::move(transport), 1,
                    exchange_settings{o.clock, o.log, o.rate_limit, (std::max)(o.spot_interval, std::chrono::milliseconds(200))},
                    retry_policy(retry_rules::aws, o.retry), 1),
          meta_(std::move(meta)), interval_((std::max)(o.spot_interval, std::chrono::milliseconds(200))), self_name_(o.self_name) {
        auto e = resolve_endpoint(o.endpoint, Client::endpoint_option, {Client::endpoint_variable}, Client::default_endpoint);
        if (e) endpoint_ = std::move(*e);
        else this->x_.set_config_error(std::move(e).error());
    }

    latest_metadata meta_;

private:
    static constexpr std::size_t key_count = 1;
    static constexpr bool may_hang = false;

    key_plan plan(std::size_t) const { return key_plan::poll(interval_); }
    std::string event_owner() const { return identity_ ? identity_->name : std::string(); }
    result<void> before_read() { return meta_.ensure_token(this->x_, endpoint_); }
    result<void> before_fetch() {
        (void)identity();  // its failure is identity()'s to report: the notice is read anyway
        return {};
    }

    std::string key_url(std::size_t) const { return endpoint_ + std::string(Client::termination_time_path); }

    result<key_reading> read_key(std::size_t, std::size_t, std::optional<std::chrono::seconds>) {
        auto r = meta_.get(this->x_, endpoint_, Client::termination_time_path);
        if (!r) return std::move(r).error();
        if (!*r) return key_reading{};
        auto e = Client::parse((*r)->body);
        if (!e) return std::move(e).error().at_url(key_url(0));
        return key_reading{{std::move(*e)}, {}, service_time_of(**r)};
    }

    std::string endpoint_;
    std::chrono::milliseconds interval_;
    std::string self_name_;
    std::optional<Identity> identity_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
