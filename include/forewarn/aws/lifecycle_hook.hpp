// SPDX-License-Identifier: MIT
#pragma once

// The AWS client's Auto Scaling side (client_options::lifecycle_hook): the termination's lifecycle
// action, its heartbeats while it waits and its completion (CONTINUE) once approved, with what
// each call needs read from the instance metadata: the region, the group (its tag, or the
// option) and the instance profile's credentials. Over a lane of its own (a public API, not
// IMDS). aws/instance_metadata_client.hpp holds one; docs/aws.md ("Auto Scaling") says what it
// needs.

#include <forewarn/aws/autoscaling.hpp>
#include <forewarn/aws/client_options.hpp>
#include <forewarn/aws/parse.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/latest_metadata.hpp>
#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/detail/public_api_lane.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

// The client's metadata as the hook reads it, handed to each call: the client is movable, so the
// hook keeps no pointer to it.
template <class Exchange>
struct aws_hook_context {
    latest_metadata& imds;
    Exchange& x;
    const std::string& endpoint;
    const aws::client_options& options;
    const forewarn::clock& clock;
    const logger& log;

    // One value, trimmed; `what` names it when it is missing or empty.
    result<std::string> value(std::string_view path, std::string_view what) const {
        auto r = imds.get(x, endpoint, path);
        if (!r) return std::move(r).error();
        const auto v = *r ? trim((*r)->body) : std::string_view();
        if (v.empty())
            return error(errc::not_found, "the instance metadata has no " + std::string(what)).at_url(endpoint + std::string(path));
        return std::string(v);
    }
};

template <class Transport>
class aws_lifecycle_hook {
public:
    aws_lifecycle_hook(const Transport& metadata, const forewarn::clock& c) : api_(metadata, c) {}

    /// Heartbeats are wanted: a termination is noticed, neither completed nor let go of.
    bool pending() const noexcept { return pending_; }
    /// Heartbeats recorded so far (each accepted by Auto Scaling).
    std::size_t heartbeats() const noexcept { return heartbeats_; }
    /// The client's heartbeat key: a beat every lifecycle_heartbeat while pending, else off; what
    /// names it in an error.
    key_plan plan(const aws::client_options& o) const noexcept { return pending_ ? key_plan::beat(o.lifecycle_heartbeat) : key_plan::off(); }
    static std::string url(const aws::client_options& o) {
        return o.autoscaling_endpoint.empty() ? std::string("Auto Scaling RecordLifecycleActionHeartbeat") : o.autoscaling_endpoint;
    }
    /// A reading of target-lifecycle-state: a new termination starts the heartbeats; its end stops
    /// them, and a later one is new.
    void observe(bool termination) noexcept {
        if (termination && !seen_) pending_ = true;
        if (!termination) pending_ = false;
        seen_ = termination;
    }
    /// The poller let go of these events (a declined approval): when the termination is among
    /// them, no more heartbeats, and nothing is completed: the group goes on at the hook's timeout.
    void abandon(const std::vector<std::string>& ids, const logger& log) {
        bool named = false;
        for (const auto& id : ids) named = named || id == aws::autoscaling_event_id;
        if (!named || !std::exchange(pending_, false)) return;
        if (log.enabled(log_level::info))
            log(log_level::info, "the Auto Scaling termination was declined: no more heartbeats, nothing completed", {},
                std::string(aws::autoscaling_event_id));
    }

    /// RecordLifecycleActionHeartbeat: one try, bounded by half the Spot key's period, because it
    /// is asked on the notices' own thread, so that a slow Auto Scaling never delays the next read
    /// of the Spot notice by more. One that fails is sent again at the next beat (keep several
    /// beats within the hook's heartbeat timeout: lifecycle_heartbeat).
    template <class Exchange>
    result<void> heartbeat(const aws_hook_context<Exchange>& c, const result<aws::instance_identity>& self) {
        if (!pending_) return {};
        if (auto r = call(c, self, "RecordLifecycleActionHeartbeat", {}); !r) return r;
        ++heartbeats_;
        return {};
    }
    /// CompleteLifecycleAction CONTINUE for the termination (`ids` is its id alone: errc::unsupported
    /// otherwise, or without a hook named); the heartbeats stop once it is accepted.
    template <class Exchange>
    result<void> approve(const aws_hook_context<Exchange>& c, const result<aws::instance_identity>& self,
                         const std::vector<std::string>& ids) {
        if (c.options.lifecycle_hook.empty())
            return error(errc::unsupported, "AWS approves only an Auto Scaling termination, with a lifecycle hook named "
                                            "(aws::client_options::lifecycle_hook)");
        for (const auto& id : ids)
            if (id != aws::autoscaling_event_id)
                return error(errc::unsupported, "AWS approves only the Auto Scaling termination, not " + id);
        if (auto r = call(c, self, "CompleteLifecycleAction", "CONTINUE"); !r) return r;
        pending_ = false;
        return {};
    }
    /// The region, the group and the credentials as a call reads them; the first failure otherwise.
    template <class Exchange>
    result<aws::autoscaling_target> read_target(const aws_hook_context<Exchange>& c) {
        if (auto r = resolve_target(c); !r) return std::move(r).error();
        auto creds = instance_credentials(c, false);
        if (!creds) return std::move(creds).error();
        aws::autoscaling_target t;
        t.region = region_;
        t.group = group_;
        t.group_from_tag = group_from_tag_;
        t.role = role_;
        t.access_key_id = creds->access_key_id;
        t.expiration = creds->expiration;
        return t;
    }

    void cancel() noexcept { api_.cancel(); }
    void reset() noexcept { api_.reset(); }

private:
    template <class Exchange>
    result<void> call(const aws_hook_context<Exchange>& c, const result<aws::instance_identity>& self, std::string_view action,
                      std::string_view result);
    // The instance profile's credentials, kept until five minutes before they expire.
    template <class Exchange>
    forewarn::result<aws::credentials> instance_credentials(const aws_hook_context<Exchange>& c, bool refresh);
    // The region and the group, read once.
    template <class Exchange>
    result<void> resolve_target(const aws_hook_context<Exchange>& c);

    public_api_lane<Transport> api_;
    bool pending_ = false;
    bool seen_ = false;  // the last reading of target-lifecycle-state was a termination
    std::size_t heartbeats_ = 0;
    std::string region_, group_, role_;
    bool group_from_tag_ = false;
    std::optional<aws::credentials> creds_;
};

template <class Transport>
template <class Exchange>
result<void> aws_lifecycle_hook<Transport>::call(const aws_hook_context<Exchange>& c, const result<aws::instance_identity>& self,
                                                 std::string_view action, std::string_view result) {
    const aws::client_options& o = c.options;
    const std::string what = "Auto Scaling " + std::string(action);
    if (!self) return error(self.error().code, what + ": this instance's id: " + self.error().message);
    if (auto r = resolve_target(c); !r) {
        error e = std::move(r).error();
        e.message = what + ": " + e.message;
        return e;
    }
    aws::autoscaling_options ao;
    ao.region = region_;
    ao.endpoint = o.autoscaling_endpoint.empty() ? aws::autoscaling_endpoint(region_) : o.autoscaling_endpoint;
    ao.clock = c.clock;
    ao.log = c.log;
    if (result.empty()) {  // the heartbeat
        ao.max_attempts = 1;
        ao.timeout = larger(std::chrono::milliseconds(250), o.spot_interval / 2);
        ao.connect_timeout = smaller(ao.connect_timeout, ao.timeout);
    }
    const aws::credentials_source creds = [this, &c](bool refresh) { return instance_credentials(c, refresh); };
    return aws_autoscaling_call([this](const http_request& r) { return api_.send(r); }, ao, creds, api_.sleep, action,
                                aws_lifecycle_body(action, {group_, o.lifecycle_hook, self->instance_id}, result));
}

template <class Transport>
template <class Exchange>
forewarn::result<aws::credentials> aws_lifecycle_hook<Transport>::instance_credentials(const aws_hook_context<Exchange>& c,
                                                                                     bool refresh) {
    const auto now = c.clock.wall_now();
    if (!refresh && creds_ && (!creds_->expiration || now + std::chrono::minutes(5) < *creds_->expiration)) return *creds_;
    const auto& path = aws::security_credentials_path;
    auto role = c.value(path, "instance profile (iam/security-credentials/)");
    if (!role) return std::move(role).error();
    const std::string name(trim(std::string_view(*role).substr(0, role->find('\n'))));
    if (name.empty() || name.find('/') != std::string::npos || name.size() > 128)
        return error(errc::invalid_document, "iam/security-credentials/: not a role name");
    role_ = name;
    auto r = c.imds.get(c.x, c.endpoint, std::string(path) + name);
    if (!r) return std::move(r).error();
    if (!*r) return error(errc::not_found, "iam/security-credentials/ROLE: 404 (the role went away?)");
    auto parsed = aws::parse_security_credentials((*r)->body);
    if (!parsed) return std::move(parsed).error().at_url(c.endpoint + std::string(path) + name);
    creds_ = *parsed;
    return parsed;
}

template <class Transport>
template <class Exchange>
result<void> aws_lifecycle_hook<Transport>::resolve_target(const aws_hook_context<Exchange>& c) {
    if (region_.empty()) {
        auto region = c.value(aws::region_path, "region (placement/region)");
        if (!region) return std::move(region).error();
        region_ = std::move(*region);
    }
    if (!group_.empty()) return {};
    if (!c.options.autoscaling_group.empty()) {
        group_ = c.options.autoscaling_group;
        return {};
    }
    auto group = c.value(aws::autoscaling_group_tag_path, "tag aws:autoscaling:groupName");
    if (!group) {
        error e = std::move(group).error();
        e.message = "the group is not known: " + e.message +
                    " (instance metadata tags are off, or a tag key holds '/' or a space, which keeps them off: "
                    "name the group, aws::client_options::autoscaling_group)";
        return e;
    }
    group_ = std::move(*group);
    group_from_tag_ = true;
    return {};
}

}  // namespace detail
FOREWARN_END_NAMESPACE
