// SPDX-License-Identifier: MIT
// The clients forewarn-watch runs, one per cloud, made from its settings: the agent and `check`
// both take theirs from make_source (source.hpp). The one place the agent names each cloud's
// client; everything else reaches it as a watch::source. In Release builds with GCC or Clang it is
// compiled twice (WATCH_CLIENTS_POLL_APART): as itself, for size, and by clients_poll.cpp
// (WATCH_CLIENTS_POLL), for speed, as only what the clients do on every poll (poll_next(), at the
// end; tools/watch/CMakeLists.txt says why). Other builds compile it once, poll_next() included.

#include <forewarn/alibaba/metadata_client.hpp>
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/tencent/metadata_client.hpp>
#include <forewarn/clouds.hpp>
#include <forewarn/transport/default.hpp>

#if !WATCH_CLIENTS_POLL
#include "source.hpp"
#endif

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace watch {

// A client's next(), its rounds, exchange, transport and parse (at the end). Compiled apart, it is
// defined and instantiated only as clients_poll.cpp, so that this file's sources call that copy.
template <class Client>
forewarn::result<forewarn::document> poll_next(Client& c, forewarn::clock::time_point not_after);

#if !WATCH_CLIENTS_POLL
namespace {

/// `Client` as a watch::source.
// GCE: what performMaintenance needs: the default service account's token and a scope that
// reaches Compute (docs/gce.md, "Starting a window early").
std::vector<check_row> compute_steps(forewarn::gce::metadata_client& c, const settings& s) {
    if (s.approve == forewarn::approval_scope::never) return {};
    auto token = c.get(forewarn::gce::token_key);
    if (!token)
        return {{"compute access", check_result::fail, token.error().describe(),
                 "an upcoming window cannot be started early from this instance",
                 "give the instance a service account (the default one will do)"}};
    if (auto t = forewarn::gce::parse_access_token(token->value); !t)
        return {{"compute access", check_result::fail, t.error().describe(), "the metadata server's token is not usable", {}}};
    auto scopes = c.get(forewarn::gce::scopes_key);
    std::string list;
    bool compute = false;
    if (scopes)
        for (std::size_t at = 0; at < scopes->value.size();) {
            auto end = scopes->value.find('\n', at);
            if (end == std::string::npos) end = scopes->value.size();
            const std::string scope = scopes->value.substr(at, end - at);
            if (!scope.empty()) {
                list += (list.empty() ? "" : ", ") + scope.substr(scope.rfind('/') + 1);
                compute = compute || scope.find("/auth/cloud-platform") != std::string::npos ||
                          scope.find("/auth/compute") != std::string::npos;
            }
            at = end + 1;
        }
    if (!compute)
        return {{"compute access", check_result::warn, "the service account's token has no compute scope (" +
                                                              (list.empty() ? std::string("none listed") : list) + ")",
                 "performMaintenance will be refused: a window that can be rescheduled starts at its own time",
                 "give the instance the cloud-platform (or compute) scope, and the role with "
                 "compute.instances.performMaintenance"}};
    return {{"compute access", check_result::ok,
             "the service account's token is obtainable, scopes " + list +
                 ": an upcoming window that can be rescheduled is started once approved (performMaintenance; the role "
                 "needs compute.instances.performMaintenance)",
             {}, {}}};
}

// AWS: what completing an Auto Scaling lifecycle action needs (docs/aws.md, "Auto Scaling").
std::vector<check_row> autoscaling_steps(forewarn::aws::instance_metadata_client& c, const settings& s) {
    if (s.aws_lifecycle_hook.empty())  // with --approve, the approvals step warns
        return {{"auto scaling", check_result::skip,
                 "no --aws-lifecycle-hook: a scale-in is heard, no lifecycle action is completed (the group waits for the "
                 "hook's HeartbeatTimeout)", {}, {}}};
    auto t = c.read_autoscaling_target();
    if (!t)
        return {{"auto scaling", check_result::fail, t.error().describe(), "a scale-in cannot be completed from this instance",
                 t.error().message.find("group is not known") != std::string::npos
                     ? "give the group with --aws-autoscaling-group NAME"
                     : "attach an instance profile whose role may call autoscaling:CompleteLifecycleAction and "
                       "autoscaling:RecordLifecycleActionHeartbeat on the group"}};
    return {{"auto scaling", check_result::ok,
             "hook " + s.aws_lifecycle_hook + " of group " + t->group +
                 (t->group_from_tag ? " (from the instance's tag)" : " (--aws-autoscaling-group)") + " in " + t->region +
                 "; role " + t->role + ": credentials readable (key " + t->access_key_id +
                 (t->expiration ? ", expire " + forewarn::format_iso8601(*t->expiration) : std::string()) +
                 "); heartbeat every " + std::to_string(s.aws_heartbeat.count()) + " s",
             {}, {}}};
}

template <class Client>
class source_of final : public source {
public:
    explicit source_of(Client c) : c_(std::move(c)) {}

    forewarn::result<forewarn::document> next(forewarn::clock::time_point not_after) override { return poll_next(c_, not_after); }
    void wake() noexcept override { c_.wake(); }
    bool can_approve() const override { return c_.can_approve(); }
    forewarn::result<void> approve(const std::vector<std::string>& ids) override { return c_.approve(ids); }
    void abandon(const std::vector<std::string>& ids) override {
        if constexpr (Client::source_cloud == forewarn::cloud::aws) c_.abandon(ids);  // the one cloud that holds anything
        else (void)ids;
    }
    forewarn::result<source_identity> identity() override {
        auto id = c_.identity();
        if (!id) return std::move(id).error();
        return source_identity{std::move(id->name)};
    }
    forewarn::result<void> validate() const override { return c_.validate(); }
    void cancel() noexcept override { c_.cancel(); }
    void reset() noexcept override { c_.reset(); }
    const forewarn::clock& clock() const override { return c_.clock(); }
    const forewarn::logger& log() const override { return c_.log(); }

    forewarn::cloud cloud() const override { return Client::source_cloud; }
    std::string endpoint() const override { return c_.endpoint(); }
    std::string api_version() const override {
        if constexpr (Client::source_cloud == forewarn::cloud::azure) return c_.options().api_version;
        else return {};
    }
    forewarn::result<forewarn::document> fetch() override { return c_.fetch(); }
    std::vector<std::string> key_urls() const override { return c_.key_urls(); }
    std::vector<check_row> lever_steps(const settings& s) override {
        if constexpr (Client::source_cloud == forewarn::cloud::aws) return autoscaling_steps(c_, s);
        else if constexpr (Client::source_cloud == forewarn::cloud::gce) return compute_steps(c_, s);
        else return {};
    }
    check_row cannot_approve() const override {
        if constexpr (Client::source_cloud == forewarn::cloud::aws)
            return {"approvals", check_result::warn, "no --aws-lifecycle-hook, so nothing can be approved",
                    "AWS approves only an Auto Scaling termination, by completing its lifecycle hook",
                    "name the group's termination hook with --aws-lifecycle-hook NAME; or drop --approve"};
        else return source::cannot_approve();
    }

private:
    Client c_;
};

/// The client of `Client`'s cloud with the command line's endpoint, name and interval.
template <class Client>
std::unique_ptr<source> make(const settings& s) {
    using options = typename Client::options_type;
    options o;
    o.endpoint = s.endpoint;
    o.self_name = s.self;
    if constexpr (std::is_same_v<options, forewarn::alibaba::client_options> || std::is_same_v<options, forewarn::tencent::client_options>) {
        if (s.interval) o.spot_interval = *s.interval;
    } else if constexpr (!std::is_same_v<options, forewarn::gce::client_options>) {
        if (s.interval) o.poll_interval = *s.interval;
    }
    if constexpr (std::is_same_v<options, forewarn::gce::client_options>) o.compute_endpoint = s.gce_api_endpoint;
    if constexpr (std::is_same_v<options, forewarn::aws::client_options>) {
        o.lifecycle_hook = s.aws_lifecycle_hook;
        o.autoscaling_group = s.aws_autoscaling_group;
        o.autoscaling_endpoint = s.aws_api_endpoint;
        o.lifecycle_heartbeat = s.aws_heartbeat;
    }
    return std::make_unique<source_of<Client>>(Client(std::move(o)));
}

}  // namespace

forewarn::result<forewarn::detection> detect_cloud(const settings& s, std::optional<std::chrono::milliseconds> timeout) {
    forewarn::detect_options d;
    for (const auto& c : forewarn::clouds) d.set_endpoint(c.id, s.endpoint);
    if (timeout) d.timeout = *timeout;
    return forewarn::detect_cloud(d);
}

std::string detection_evidence(const forewarn::detection& found) {
    std::string evidence;
    for (const auto& c : forewarn::clouds)
        evidence += (evidence.empty() ? "" : "; ") + std::string(c.name) + ": " +
                    (found.answered(c.id) ? std::string("answered") : found.why(c.id).describe());
    return evidence;
}

check_row source::cannot_approve() const {
    return {"approvals", check_result::warn, "takes no approvals",
            "forewarn approves maintenance on Azure, GCE and AWS only (each through its own API)",
            "nothing to do: the agent watches and runs the hooks; or drop --approve"};
}

std::unique_ptr<source> make_source(const std::string& cloud, const settings& s) {
    if (cloud == "azure") return make<forewarn::azure::scheduled_events_client>(s);
    if (cloud == "aws") return make<forewarn::aws::instance_metadata_client>(s);
    if (cloud == "alibaba") return make<forewarn::alibaba::metadata_client>(s);
    if (cloud == "tencent") return make<forewarn::tencent::metadata_client>(s);
    return make<forewarn::gce::metadata_client>(s);
}

#endif

#if WATCH_CLIENTS_POLL || !WATCH_CLIENTS_POLL_APART
template <class Client>
forewarn::result<forewarn::document> poll_next(Client& c, forewarn::clock::time_point not_after) {
    return c.next(not_after);
}
#endif

#if WATCH_CLIENTS_POLL  // clients_poll.cpp
template forewarn::result<forewarn::document> poll_next(forewarn::azure::scheduled_events_client&, forewarn::clock::time_point);
template forewarn::result<forewarn::document> poll_next(forewarn::aws::instance_metadata_client&, forewarn::clock::time_point);
template forewarn::result<forewarn::document> poll_next(forewarn::gce::metadata_client&, forewarn::clock::time_point);
template forewarn::result<forewarn::document> poll_next(forewarn::alibaba::metadata_client&, forewarn::clock::time_point);
template forewarn::result<forewarn::document> poll_next(forewarn::tencent::metadata_client&, forewarn::clock::time_point);

#endif

}  // namespace watch
