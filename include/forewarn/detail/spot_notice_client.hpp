// SPDX-License-Identifier: MIT
// The clients of the clouds whose one in-guest notice is a Spot instance's reclaim time on a
// /latest/ path: one key, polled; a 404 is no notice. A cloud of this kind is its endpoint, its
// path, its parser and its options (docs/architecture.md, "A new cloud").
#pragma once

#include <forewarn/client_options.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/client_base.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/latest_metadata.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport/retry.hpp>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The options every reclaim-notice client has (each such cloud's client_options derives from
/// it): the common ones (client_options_base; its retry is retry_rules::http: 429, 5xx
/// and transport errors are retried; self_name, empty: the instance id) and the notice's interval
/// and the requests' timeout.
struct spot_notice_options : client_options_base {
    /// next(): how often the notice is read (a few minutes of notice). Never below 200 ms.
    std::chrono::milliseconds spot_interval{1000};
    std::chrono::milliseconds timeout{std::chrono::seconds(5)};  ///< total timeout of each request
};

/// A reclaim-notice service's session token, when it has one: its header, its name in a log
/// line, and where the options keep the TTL asked for (and its name in an error).
template <class Options>
struct spot_token {
    std::string_view header;
    std::string_view ttl_header;
    std::string_view kind;
    std::chrono::seconds Options::*ttl = nullptr;
    std::string_view ttl_option;
};

/// Where a reclaim-notice cloud is and how its notice reads; `Client` has them as static members
/// `endpoint_option`, `resolve(option, option_name) -> result<std::string>` (its endpoint.hpp's
/// resolver), `termination_time_path` and `parse(body) -> result<event>`.
template <class Client, class Transport, class Identity, cloud Cloud, class Options>
class spot_notice_client : public client_base<Client, Transport, Identity, Cloud, Options> {
    using base_type = client_base<Client, Transport, Identity, Cloud, Options>;
    friend base_type;

    // identity(), options() and endpoint() come from the base: the instance id, asked once and
    // cached, or the options' self_name.

protected:
    spot_notice_client(Options options, Transport transport, spot_token<Options> token = {})
        : base_type(std::move(options), std::move(transport), retry_rules::http),
          meta_(latest_settings{std::string(token.header), std::string(token.ttl_header), std::string(token.kind),
                                token.ttl ? this->options_.*token.ttl : std::chrono::seconds(max_session_token_ttl), false,
                                this->options_.timeout, this->options_.connect_timeout, this->options_.max_body, {}}) {
        if (!this->resolved(Client::resolve(this->options_.endpoint, Client::endpoint_option)))
            return;
        if (token.ttl)
            if (auto v = latest_metadata::check_ttl(this->options_.*token.ttl, token.ttl_option); !v)
                this->x_.set_config_error(std::move(v).error());
    }

    latest_metadata meta_;

private:
    static constexpr std::size_t key_count = 1;
    static constexpr bool may_hang = false;

    static Options settled(Options o) {
        o.spot_interval = detail::larger(o.spot_interval, std::chrono::milliseconds(200));
        return o;
    }
    static std::chrono::milliseconds error_pause(const Options& o) { return o.spot_interval; }

    key_plan plan(std::size_t) const { return key_plan::poll(this->options_.spot_interval); }
    result<void> before_read() { return meta_.ensure_token(this->x_, this->endpoint_); }
    result<void> before_fetch() {
        (void)this->identity();  // its failure is identity()'s to report: the notice is read anyway
        return {};
    }

    std::string key_url(std::size_t) const { return this->endpoint_ + std::string(Client::termination_time_path); }

    result<Identity> read_identity() {
        auto id = meta_.get_instance_id(this->x_, this->endpoint_);
        if (!id) return std::move(id).error();
        Identity out;
        out.name = std::move(*id);
        return out;
    }

    result<key_reading> read_key(std::size_t, std::size_t, std::optional<std::chrono::seconds>) {
        auto r = meta_.get(this->x_, this->endpoint_, Client::termination_time_path);
        if (!r) return std::move(r).error();
        if (!*r) return key_reading{};
        auto e = Client::parse((*r)->body);
        if (!e) return std::move(e).error().at_url(key_url(0));
        return key_reading{{std::move(*e)}, {}, service_time_of(**r)};
    }
};

}  // namespace detail
FOREWARN_END_NAMESPACE
