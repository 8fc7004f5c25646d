// SPDX-License-Identifier: MIT
#pragma once

// The AWS EC2 instance metadata (IMDSv2) client: a notice source for Spot interruptions,
// rebalance recommendations and scheduled events. It names its default transport only through
// fwd.hpp: include <forewarn/transport/default.hpp> (or <forewarn/forewarn.hpp>) to use it.

#include <forewarn/aws/autoscaling.hpp>
#include <forewarn/aws/client_options.hpp>
#include <forewarn/aws/endpoint.hpp>
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
 * termination notice can be approved through Auto Scaling's API (aws/autoscaling.hpp): approve()
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
    using base_type = forewarn::detail::client_base<basic_instance_metadata_client<Transport>, Transport, instance_identity,
                                                    cloud::aws, client_options>;
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
    result<void> approve(const std::vector<std::string>& ids);
    /// The poller lets go of these events (a declined approval): the lifecycle action's
    /// heartbeats stop, and nothing is completed.
    void abandon(const std::vector<std::string>& ids);
    /// Heartbeats recorded so far (each accepted by Auto Scaling).
    std::size_t heartbeats_sent() const noexcept { return asg_.heartbeats; }
    /// The region, the group and the instance profile's credentials, read as approve() reads them
    /// (what forewarn-watch check shows); the first failure, in words, otherwise.
    result<autoscaling_target> read_autoscaling_target();

    void cancel() noexcept {
        api_sleep_.interrupt();
        api_transport_.cancel();
        base_type::cancel();
    }
    void reset() noexcept {
        api_sleep_.reset();
        api_transport_.reset();
        base_type::reset();
    }

    // identity() comes from the base, asked once and cached: instance-id (required), instance-type,
    // placement/availability-zone and instance-life-cycle (each empty when 404). With
    // options().self_name, that is the name and nothing is asked.

private:
    // The keys of this source, in the document's order; the fifth is the lifecycle action's
    // heartbeat (no events; planned only while an action is pending).
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
        if (k == heartbeat_key)
            return asg_.pending ? forewarn::detail::key_plan::beat(this->options_.lifecycle_heartbeat)
                                : forewarn::detail::key_plan::off();
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
        if (k == heartbeat_key)
            return this->options_.autoscaling_endpoint.empty() ? std::string("Auto Scaling RecordLifecycleActionHeartbeat")
                                                               : this->options_.autoscaling_endpoint;
        return this->endpoint_ + std::string(key_paths[k]);
    }
    result<instance_identity> read_identity();

    result<forewarn::detail::key_reading> read_key(std::size_t k, std::size_t, std::optional<std::chrono::seconds>) {
        forewarn::detail::key_reading out;
        if (k == heartbeat_key) {
            if (!asg_.pending) return out;
            if (auto h = lifecycle_call("RecordLifecycleActionHeartbeat", {}); !h) return std::move(h).error();
            ++asg_.heartbeats;
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
        if (k == 3 && can_approve()) {
            if (termination && !asg_.seen) asg_.pending = true;  // a new termination: heartbeats from now
            if (!termination) asg_.pending = false;              // over (or never): a later one is new
            asg_.seen = termination;
        }
        return out;
    }

    // The lifecycle action's call (CompleteLifecycleAction with `result`, or the heartbeat).
    result<void> lifecycle_call(std::string_view action, std::string_view result);
    // The instance profile's credentials, kept until five minutes before they expire.
    forewarn::result<credentials> instance_credentials(bool refresh);
    // The region and the group, read once.
    result<void> resolve_target();
    // One instance metadata value, trimmed; `what` names it in the error of a 404.
    forewarn::result<std::string> metadata_value(std::string_view path, std::string_view what);

    forewarn::detail::latest_metadata imds_;
    Transport api_transport_;  // Auto Scaling's: a public API (a proxy from the environment), not IMDS
    interruptible_sleep api_sleep_;
    struct lifecycle_state {
        bool pending = false;  // heartbeats wanted: a termination notice, not completed or let go of
        bool seen = false;     // the last reading of target-lifecycle-state was a termination
        std::size_t heartbeats = 0;
        std::string region, group, role;
        bool group_from_tag = false;
        std::optional<credentials> creds;
    } asg_;
};

template <class Transport>
basic_instance_metadata_client<Transport>::basic_instance_metadata_client(client_options options, Transport transport)
    : base_type(std::move(options), std::move(transport), retry_rules::aws),
      imds_(forewarn::detail::latest_settings{std::string(token_header), std::string(token_ttl_header), "IMDSv2",
                                              this->options_.token_ttl,
                                              this->options_.allow_imdsv1, this->options_.timeout, this->options_.connect_timeout,
                                              this->options_.max_body, forewarn::detail::aws_status_hints}),
      api_transport_(public_api_transport<Transport>::from(this->transport())), api_sleep_(this->options_.clock) {
    const client_options& o = this->options_;
    if (!this->resolved(forewarn::detail::aws_resolve_endpoint(o.endpoint, "aws::client_options::endpoint", o.ipv6))) return;
    auto ttl = forewarn::detail::latest_metadata::check_ttl(o.token_ttl, "aws::client_options::token_ttl");
    if (!ttl)
        this->x_.set_config_error(std::move(ttl).error());
    else if (forewarn::detail::aws_metadata_disabled())
        this->x_.set_config_error(
            error(errc::unsupported, "the instance metadata service is turned off by AWS_EC2_METADATA_DISABLED"));
}

template <class Transport>
result<instance_identity> basic_instance_metadata_client<Transport>::read_identity() {
    auto instance_id = imds_.get_instance_id(this->x_, this->endpoint_);
    if (!instance_id) return std::move(instance_id).error();
    instance_identity id;
    id.instance_id = std::move(*instance_id);
    // The rest is informative: a path this instance does not have leaves its field empty.
    struct field {
        std::string_view path;
        std::string instance_identity::*target;
    };
    for (const auto& f : {field{"/latest/meta-data/instance-type", &instance_identity::instance_type},
                          field{"/latest/meta-data/placement/availability-zone", &instance_identity::availability_zone},
                          field{"/latest/meta-data/instance-life-cycle", &instance_identity::lifecycle}}) {
        auto r = imds_.get(this->x_, this->endpoint_, f.path);
        if (!r) return std::move(r).error();
        if (*r) id.*f.target = std::string(forewarn::detail::trim((*r)->body));
    }
    id.name = id.instance_id;
    return id;
}

template <class Transport>
result<void> basic_instance_metadata_client<Transport>::approve(const std::vector<std::string>& ids) {
    if (!can_approve())
        return error(errc::unsupported, "AWS approves only an Auto Scaling termination, with a lifecycle hook named "
                                        "(aws::client_options::lifecycle_hook)");
    for (const auto& id : ids)
        if (id != autoscaling_event_id)
            return error(errc::unsupported, "AWS approves only the Auto Scaling termination, not " + id);
    if (auto r = lifecycle_call("CompleteLifecycleAction", "CONTINUE"); !r) return r;
    asg_.pending = false;  // completed: no more heartbeats
    return {};
}

template <class Transport>
void basic_instance_metadata_client<Transport>::abandon(const std::vector<std::string>& ids) {
    bool named = false;
    for (const auto& id : ids) named = named || id == autoscaling_event_id;
    if (!named || !asg_.pending) return;
    asg_.pending = false;
    if (this->log().enabled(log_level::info))
        this->log()(log_level::info, "the Auto Scaling termination was declined: no more heartbeats, nothing completed", {},
                    std::string(autoscaling_event_id));
}

template <class Transport>
forewarn::result<std::string> basic_instance_metadata_client<Transport>::metadata_value(std::string_view path,
                                                                                       std::string_view what) {
    auto r = imds_.get(this->x_, this->endpoint_, path);
    if (!r) return std::move(r).error();
    const auto v = *r ? forewarn::detail::trim((*r)->body) : std::string_view();
    if (v.empty())
        return error(errc::not_found, "the instance metadata has no " + std::string(what)).at_url(this->endpoint_ + std::string(path));
    return std::string(v);
}

template <class Transport>
forewarn::result<credentials> basic_instance_metadata_client<Transport>::instance_credentials(bool refresh) {
    const auto now = this->clock().wall_now();
    if (!refresh && asg_.creds && (!asg_.creds->expiration || now + std::chrono::minutes(5) < *asg_.creds->expiration))
        return *asg_.creds;
    auto role = metadata_value(security_credentials_path, "instance profile (iam/security-credentials/)");
    if (!role) return std::move(role).error();
    const auto first = std::string_view(*role).substr(0, role->find('\n'));
    const std::string name(forewarn::detail::trim(first));
    if (name.empty() || name.find('/') != std::string::npos || name.size() > 128)
        return error(errc::invalid_document, "iam/security-credentials/: not a role name");
    asg_.role = name;
    auto r = imds_.get(this->x_, this->endpoint_, std::string(security_credentials_path) + name);
    if (!r) return std::move(r).error();
    if (!*r) return error(errc::not_found, "iam/security-credentials/ROLE: 404 (the role went away?)");
    auto c = parse_security_credentials((*r)->body);
    if (!c) return std::move(c).error().at_url(this->endpoint_ + std::string(security_credentials_path) + name);
    asg_.creds = *c;
    return c;
}

template <class Transport>
result<void> basic_instance_metadata_client<Transport>::resolve_target() {
    if (asg_.region.empty()) {
        auto region = metadata_value(region_path, "region (placement/region)");
        if (!region) return std::move(region).error();
        asg_.region = std::move(*region);
    }
    if (asg_.group.empty()) {
        if (!this->options_.autoscaling_group.empty()) {
            asg_.group = this->options_.autoscaling_group;
        } else {
            auto group = metadata_value(autoscaling_group_tag_path, "tag aws:autoscaling:groupName");
            if (!group) {
                error e = std::move(group).error();
                e.message = "the group is not known: " + e.message +
                            " (instance metadata tags are off, or a tag key holds '/' or a space, which keeps them off: "
                            "name the group, aws::client_options::autoscaling_group)";
                return e;
            }
            asg_.group = std::move(*group);
            asg_.group_from_tag = true;
        }
    }
    return {};
}

template <class Transport>
result<autoscaling_target> basic_instance_metadata_client<Transport>::read_autoscaling_target() {
    if (auto r = resolve_target(); !r) return std::move(r).error();
    auto c = instance_credentials(false);
    if (!c) return std::move(c).error();
    autoscaling_target t;
    t.region = asg_.region;
    t.group = asg_.group;
    t.group_from_tag = asg_.group_from_tag;
    t.role = asg_.role;
    t.access_key_id = c->access_key_id;
    t.expiration = c->expiration;
    return t;
}

template <class Transport>
result<void> basic_instance_metadata_client<Transport>::lifecycle_call(std::string_view action, std::string_view result) {
    const client_options& o = this->options_;
    const std::string what = "Auto Scaling " + std::string(action);
    auto id = this->identity();
    if (!id) return error(id.error().code, what + ": this instance's id: " + id.error().message);
    if (auto r = resolve_target(); !r) {
        error e = std::move(r).error();
        e.message = what + ": " + e.message;
        return e;
    }
    autoscaling_options ao;
    ao.region = asg_.region;
    ao.endpoint = o.autoscaling_endpoint.empty() ? autoscaling_endpoint(asg_.region) : o.autoscaling_endpoint;
    ao.clock = this->clock();
    ao.log = this->log();
    if (result.empty()) {
        // The heartbeat is asked on the notices' own thread: one try, bounded by half the Spot key's
        // period, so that a slow Auto Scaling never delays the next read of the Spot notice by more.
        // One that fails is sent again at the next beat (keep several beats within the hook's
        // heartbeat timeout: lifecycle_heartbeat).
        ao.max_attempts = 1;
        ao.timeout = detail::larger(std::chrono::milliseconds(250), o.spot_interval / 2);
        ao.connect_timeout = detail::smaller(ao.connect_timeout, ao.timeout);
    }
    const credentials_source creds = [this](bool refresh) { return instance_credentials(refresh); };
    return forewarn::detail::aws_autoscaling_call([this](const http_request& r) { return api_transport_.send(r); }, ao, creds, api_sleep_,
                                    action, forewarn::detail::aws_lifecycle_body(action, {asg_.group, o.lifecycle_hook, id->instance_id}, result));
}

FOREWARN_CLIENT_MOVABLE_DEFAULTS(basic_instance_metadata_client);

/// The client over the default transport (WinHTTP on Windows, libcurl elsewhere). Include
/// <forewarn/transport/default.hpp> to use it.
using instance_metadata_client = basic_instance_metadata_client<>;

}  // namespace aws
FOREWARN_END_NAMESPACE

#define FOREWARN_AWS_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>

