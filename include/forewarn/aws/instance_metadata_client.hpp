// SPDX-License-Identifier: MIT
#pragma once

// The AWS EC2 instance metadata (IMDSv2) client: a notice source for Spot interruptions,
// rebalance recommendations and scheduled events. It names its default transport only through
// fwd.hpp: include <forewarn/transport/default.hpp> (or <forewarn/forewarn.hpp>) to use it.

#include <forewarn/aws/client_options.hpp>
#include <forewarn/aws/endpoint.hpp>
#include <forewarn/aws/lifecycle_hook.hpp>
#include <forewarn/aws/parse.hpp>
#include <forewarn/detail/client_base.hpp>  // with detail/http.hpp, result.hpp, transport.hpp
#include <forewarn/detail/latest_metadata.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/poller/notice_source.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/**
 * AWS EC2 instance metadata (IMDSv2) over a Transport, a notice source: next() reads the Spot
 * instance-action every `spot_interval`, and the scheduled events, the rebalance recommendation
 * and the Auto Scaling target lifecycle state every `poll_interval`, and gives a document as soon
 * as one of them changed, else once all were read again (docs/aws.md has the mapping). A 404 on
 * any of them means none. A key whose answer fails (a status, a list that does not parse) keeps
 * its last good answer and its error is in document::key_errors: it never hides the others'
 * notices. IMDS approves nothing; with client_options::lifecycle_hook, the Auto Scaling
 * termination notice can be approved through Auto Scaling's API (aws/lifecycle_hook.hpp): approve()
 * completes the lifecycle action, and the client records its heartbeats meanwhile, as a fifth key
 * of its rounds. Every other notice reads event::approvable false.
 *
 * Every request carries the session token (`X-aws-ec2-metadata-token`), got by `PUT
 * /latest/api/token` with the TTL asked for, renewed on the client's clock before it expires and
 * once after a 401. No proxy, no redirects (curl_transport), a body cap, retries by status, the
 * per-host rate limit. The token is never logged. One thread uses a client at a time; wake(),
 * cancel() and reset() may come from any thread.
 */
template <class Transport = default_transport>
class basic_instance_metadata_client
    : public forewarn::detail::client_base<basic_instance_metadata_client<Transport>, Transport, instance_identity, cloud::aws,
                                           client_options> {
    using base_type = typename basic_instance_metadata_client::client_base;
    friend base_type;

public:
    explicit basic_instance_metadata_client(client_options options = {}, Transport transport = Transport());
    FOREWARN_CLIENT_MOVABLE(basic_instance_metadata_client);

    /// Session tokens got so far (the first one included): how often the client renewed.
    std::size_t tokens_fetched() const noexcept { return imds_.tokens_fetched(); }

    /// With a lifecycle hook, the Auto Scaling termination can be approved.
    bool can_approve() const noexcept { return !this->options_.lifecycle_hook.empty(); }
    /**
     * Completes the lifecycle action (CONTINUE) for the Auto Scaling termination, its id
     * autoscaling_event_id; its heartbeats stop. errc::unsupported for any other id, or without a
     * lifecycle hook. The group, the region and the instance profile's credentials are read
     * from the instance metadata (the group from options().autoscaling_group when set).
     */
    result<void> approve(const std::vector<std::string>& ids) { return hook_.approve(hook_context(), this->identity(), ids); }
    /// The poller lets go of these events (a declined approval): the lifecycle action's
    /// heartbeats stop, and nothing is completed.
    void abandon(const std::vector<std::string>& ids) { hook_.abandon(ids, this->log()); }
    /// Heartbeats recorded so far (each accepted by Auto Scaling).
    std::size_t heartbeats_sent() const noexcept { return hook_.heartbeats(); }
    /// The region, the group and the instance profile's credentials, read as approve() reads them
    /// (what forewarn-watch check shows); the first failure, in words, otherwise.
    result<autoscaling_target> read_autoscaling_target() { return hook_.read_target(hook_context()); }

    void cancel() noexcept {
        hook_.cancel();
        base_type::cancel();
    }
    void reset() noexcept {
        hook_.reset();
        base_type::reset();
    }

    // identity() comes from the base, asked once and cached: instance-id (required), instance-type,
    // placement/availability-zone and instance-life-cycle (each empty when 404). With
    // options().self_name, that is the name and nothing is asked.

private:
    // The keys of this source, in the document's order; the fifth is the lifecycle action's
    // heartbeat (no events; on its own cadence, key_plan::beat; planned only while an action is
    // pending).
    static constexpr std::size_t key_count = 5;
    static constexpr std::size_t heartbeat_key = 4;
    static constexpr bool may_hang = false;
    static constexpr std::string_view key_paths[key_count - 1] = {scheduled_events_path, spot_instance_action_path,
                                                                   rebalance_path, target_lifecycle_state_path};

    static client_options settled(client_options o) {
        o.spot_interval = detail::larger(o.spot_interval, std::chrono::milliseconds(200));
        o.poll_interval = detail::larger(o.poll_interval, std::chrono::milliseconds(1000));
        o.lifecycle_heartbeat = detail::larger(o.lifecycle_heartbeat, std::chrono::seconds(1));
        return o;
    }
    static std::chrono::milliseconds error_pause(const client_options& o) { return o.spot_interval; }

    forewarn::detail::key_plan plan(std::size_t k) const {
        if (k == heartbeat_key) return hook_.plan(this->options_);
        if (k == 3 && !this->options_.read_target_lifecycle_state) return forewarn::detail::key_plan::off();
        return forewarn::detail::key_plan::poll(k == 1 ? this->options_.spot_interval : this->options_.poll_interval);
    }
    // A heartbeat that failed never hides the notices.
    bool local_failure(std::size_t k, const error& e) const {
        return k == heartbeat_key || forewarn::detail::key_failure_is_local(e);
    }

    result<void> before_read() { return imds_.ensure_token(this->x_, this->endpoint_); }
    result<void> before_fetch() {
        (void)this->identity();  // its failure is identity()'s to report: the notices are read anyway
        return {};
    }

    // One notice path read and parsed (a 404: none); or the heartbeat.
    std::string key_url(std::size_t k) const {
        return k == heartbeat_key ? hook_.url(this->options_) : this->endpoint_ + std::string(key_paths[k]);
    }
    result<instance_identity> read_identity() {
        auto instance_id = imds_.get_instance_id(this->x_, this->endpoint_);
        if (!instance_id) return std::move(instance_id).error();
        instance_identity id;
        id.instance_id = std::move(*instance_id);
        for (const auto& f : identity_fields) {  // informative: empty when 404
            auto r = imds_.get(this->x_, this->endpoint_, f.path);
            if (!r) return std::move(r).error();
            if (*r) id.*f.field = std::string(forewarn::detail::trim((*r)->body));
        }
        id.name = id.instance_id;
        return id;
    }

    result<forewarn::detail::key_reading> read_key(std::size_t k, std::size_t, std::optional<std::chrono::seconds>) {
        forewarn::detail::key_reading out;
        if (k == heartbeat_key) {
            if (auto h = hook_.heartbeat(hook_context(), this->identity()); !h) return std::move(h).error();
            return out;
        }
        auto r = imds_.get(this->x_, this->endpoint_, key_paths[k]);
        if (!r) return std::move(r).error();
        if (*r) {
            out.service_time = forewarn::detail::service_time_of(**r);
            auto events = forewarn::detail::aws_parse_key(key_paths[k], (*r)->body);
            if (!events) return std::move(events).error().at_url(key_url(k));
            out.events = std::move(*events);
        }
        const bool termination = k == 3 && !out.events.empty();
        for (auto& e : out.events) e.approvable = termination && can_approve();
        if (k == 3 && can_approve()) hook_.observe(termination);
        return out;
    }

    forewarn::detail::aws_hook_context<forewarn::detail::metadata_exchange<Transport>> hook_context() {
        return {imds_, this->x_, this->endpoint_, this->options_, this->clock(), this->log()};
    }

    forewarn::detail::latest_metadata imds_;
    forewarn::detail::aws_lifecycle_hook<Transport> hook_;
};

template <class Transport>
basic_instance_metadata_client<Transport>::basic_instance_metadata_client(client_options options, Transport transport)
    : base_type(std::move(options), std::move(transport), retry_rules::aws),
      imds_(forewarn::detail::latest_settings{std::string(token_header), std::string(token_ttl_header), "IMDSv2", this->options_.token_ttl,
                                              this->options_.allow_imdsv1, this->options_.timeout, this->options_.connect_timeout,
                                              this->options_.max_body, forewarn::detail::aws_status_hints}),
      hook_(this->transport(), this->options_.clock) {
    const client_options& o = this->options_;
    if (!this->resolved(forewarn::detail::aws_resolve_endpoint(o.endpoint, "aws::client_options::endpoint", o.ipv6))) return;
    auto ttl = forewarn::detail::latest_metadata::check_ttl(o.token_ttl, "aws::client_options::token_ttl");
    if (!ttl)
        this->x_.set_config_error(std::move(ttl).error());
    else if (forewarn::detail::aws_metadata_disabled())
        this->x_.set_config_error(error(errc::unsupported, "the instance metadata service is turned off by AWS_EC2_METADATA_DISABLED"));
}

FOREWARN_CLIENT_MOVABLE_DEFAULTS(basic_instance_metadata_client);

/// The client over the default transport (WinHTTP on Windows, libcurl elsewhere). Include
/// <forewarn/transport/default.hpp> to use it.
using instance_metadata_client = basic_instance_metadata_client<>;

}  // namespace aws
FOREWARN_END_NAMESPACE

#define FOREWARN_AWS_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>

