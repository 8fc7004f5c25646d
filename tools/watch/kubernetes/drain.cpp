// SPDX-License-Identifier: MIT
#include "drain.hpp"

#include "../json.hpp"

#include <algorithm>
#include <utility>

namespace watch::kubernetes {

using writer = json_writer;

namespace {

constexpr long long default_grace = 30;  // what the API server gives a pod without its own

// A name or namespace as the API takes it in a URL: lower-case letters, digits, '-' and '.'
// (a DNS subdomain). A pod list's names are network input: anything else is not spliced in.
bool url_safe(const std::string& s) {
    if (s.empty() || s.size() > 253) return false;
    return std::all_of(s.begin(), s.end(), [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'; });
}

}  // namespace

bool pod_view::critical() const noexcept {
    return priority_class == "system-node-critical" || priority_class == "system-cluster-critical" ||
           (priority && *priority >= critical_priority);
}

pod_fate fate_of(const pod_view& p) noexcept {
    if (p.mirror) return pod_fate::stays_mirror;
    if (p.daemon_set) return pod_fate::stays_daemon_set;
    if (p.phase == "Succeeded" || p.phase == "Failed") return pod_fate::stays_finished;
    return pod_fate::evict;
}

result<std::vector<pod_view>> parse_pod_list(std::string_view body) {
    std::string why;
    auto doc = parse_json(body, &why);
    if (!doc) return error(errc::parse_error, "the node's pods: " + why);
    const rapidjson::Value* items = json_member(*doc, "items");
    if (!doc->IsObject() || !items || !items->IsArray()) return error(errc::invalid_document, "the node's pods: not a PodList");
    std::vector<pod_view> pods;
    for (const auto& item : items->GetArray()) {
        const rapidjson::Value* meta = json_member(item, "metadata");
        if (!meta || !meta->IsObject()) continue;
        pod_view p;
        p.namespace_name = json_string_member(*meta, "namespace");
        p.name = json_string_member(*meta, "name");
        p.uid = json_string_member(*meta, "uid");
        if (p.name.empty() || p.namespace_name.empty()) continue;
        if (const rapidjson::Value* d = json_member(*meta, "deletionTimestamp"); d && !d->IsNull()) p.being_deleted = true;
        if (const rapidjson::Value* a = json_member(*meta, "annotations")) p.mirror = json_member(*a, "kubernetes.io/config.mirror") != nullptr;
        if (const rapidjson::Value* owners = json_member(*meta, "ownerReferences"); owners && owners->IsArray())
            for (const auto& o : owners->GetArray()) {
                const rapidjson::Value* controller = json_member(o, "controller");
                if (!controller || !controller->IsBool() || !controller->GetBool()) continue;
                p.controlled = true;
                if (json_string_member(o, "kind") == "DaemonSet") p.daemon_set = true;
            }
        if (const rapidjson::Value* spec = json_member(item, "spec")) {
            if (const rapidjson::Value* g = json_member(*spec, "terminationGracePeriodSeconds"); g && g->IsInt64() && g->GetInt64() >= 0)
                p.grace = g->GetInt64();
            p.priority_class = json_string_member(*spec, "priorityClassName");
            if (const rapidjson::Value* pr = json_member(*spec, "priority"); pr && pr->IsInt64()) p.priority = pr->GetInt64();
        }
        if (const rapidjson::Value* status = json_member(item, "status")) p.phase = json_string_member(*status, "phase");
        pods.push_back(std::move(p));
    }
    return pods;
}

result<std::string> eviction_version(std::string_view api_v1_discovery) {
    std::string why;
    auto doc = parse_json(api_v1_discovery, &why);
    if (!doc) return error(errc::parse_error, "GET /api/v1: " + why);
    const rapidjson::Value* resources = json_member(*doc, "resources");
    if (!resources || !resources->IsArray()) return error(errc::invalid_document, "GET /api/v1: not an APIResourceList");
    for (const auto& r : resources->GetArray()) {
        if (json_string_member(r, "name") != "pods/eviction" || json_string_member(r, "kind") != "Eviction") continue;
        const std::string group = json_string_member(r, "group");
        const std::string version = json_string_member(r, "version");
        if (group == "policy" && (version == "v1" || version == "v1beta1")) return group + "/" + version;
        return error(errc::unsupported, "the server's Eviction is " + group + "/" + version + ", not policy/v1 or policy/v1beta1");
    }
    return error(errc::unsupported, "the server offers no pods/eviction: it cannot evict");
}

std::string eviction_body(const std::string& group_version, const pod_view& p, std::optional<long long> grace_seconds) {
    rapidjson::StringBuffer out;
    writer w(out);
    w.StartObject();
    json_put(w, "apiVersion", group_version);
    w.Key("kind");
    w.String("Eviction");
    w.Key("metadata");
    w.StartObject();
    json_put(w, "name", p.name);
    json_put(w, "namespace", p.namespace_name);
    w.EndObject();
    if (grace_seconds) {
        w.Key("deleteOptions");
        w.StartObject();
        // policy/v1beta1's DeleteOptions carries its own kind and version; v1's takes them too
        w.Key("kind");
        w.String("DeleteOptions");
        w.Key("apiVersion");
        w.String("v1");
        w.Key("gracePeriodSeconds");
        w.Int64(*grace_seconds);
        w.EndObject();
    }
    w.EndObject();
    return out.GetString();
}

eviction_answer read_eviction_answer(const api_answer& a) {
    if (a.status == 200 || a.status == 201) return {eviction_answer::kind::evicted, {}};
    if (a.status == 404) return {eviction_answer::kind::gone, {}};
    if (a.status == 429) {
        // The Status names the budget in a cause (1.20: "The disruption budget web needs 2 healthy
        // pods and has 2 currently"); its message alone is generic.
        std::string why = status_message(a.body);
        if (auto doc = parse_json(a.body))
            if (const rapidjson::Value* details = json_member(*doc, "details"))
                if (const rapidjson::Value* causes = json_member(*details, "causes"); causes && causes->IsArray())
                    for (const auto& c : causes->GetArray())
                        if (json_string_member(c, "reason") == "DisruptionBudget" && !json_string_member(c, "message").empty()) {
                            why = json_string_member(c, "message");
                            break;
                        }
        if (why.empty()) why = "429 Too Many Requests";
        return {eviction_answer::kind::refused, std::move(why)};
    }
    return {eviction_answer::kind::failed, answer_error("eviction", a).describe()};
}

long long capped_grace(std::optional<long long> pod_grace, std::chrono::seconds left) noexcept {
    const long long own = pod_grace ? *pod_grace : default_grace;
    return std::max<long long>(1, std::min<long long>(own, left.count()));
}

drain::drain(api_client& api, std::string node, std::chrono::system_clock::time_point deadline, std::chrono::seconds refused_retry)
    : api_(api), node_(std::move(node)), deadline_(deadline), refused_retry_(refused_retry) {}

result<void> drain::discover() {
    if (!version_.empty()) return {};
    auto a = api_.call(http_method::get, "/api/v1");
    if (!a) return std::move(a).error();
    if (!a->ok()) return answer_error("GET /api/v1", *a);
    auto v = eviction_version(a->body);
    if (!v) return std::move(v).error();
    version_ = std::move(*v);
    return {};
}

result<drain::state> drain::step(std::chrono::system_clock::time_point now) {
    if (auto d = discover(); !d) return std::move(d).error();
    auto a = api_.call(http_method::get, "/api/v1/pods?fieldSelector=spec.nodeName%3D" + node_);
    if (!a) return std::move(a).error();
    if (!a->ok()) return answer_error("GET the pods of node " + node_, *a);
    auto pods = parse_pod_list(a->body);
    if (!pods) return std::move(pods).error();

    // Evicted pods still here: the same name with the same UID.
    std::vector<std::string> waiting;
    for (const auto& entry : evicted_) {  // (no structured binding: clang 14 cannot capture one)
        const bool here = std::any_of(pods->begin(), pods->end(),
                                      [&](const pod_view& p) { return p.key() == entry.first && p.uid == entry.second; });
        if (here) waiting.push_back(entry.first);
    }
    const auto left_seconds = std::chrono::duration_cast<std::chrono::seconds>(deadline_ - now);
    const bool past = now >= deadline_;
    // Critical pods wait while any other pod to evict is still here (not evicted yet, or evicted
    // and not gone), unless their own grace (and two rounds) would then no longer fit.
    const bool others_here = std::any_of(pods->begin(), pods->end(), [&](const pod_view& p) {
        if (fate_of(p) != pod_fate::evict || p.critical()) return false;
        const auto it = evicted_.find(p.key());
        return it == evicted_.end() || it->second == p.uid;
    });

    std::vector<left_pod> not_asked;
    for (const auto& p : *pods) {
        if (fate_of(p) != pod_fate::evict || evicted_.count(p.key())) continue;
        if (p.being_deleted) {  // someone else's deletion: wait for it as for our own
            evicted_[p.key()] = p.uid;
            waiting.push_back(p.key());
            continue;
        }
        if (!url_safe(p.name) || !url_safe(p.namespace_name)) {
            not_asked.push_back({p.key(), "its name cannot be put in a URL"});
            continue;
        }
        if (past) {
            auto r = refused_.find(p.key());
            not_asked.push_back({p.key(), r != refused_.end() ? r->second : "not evicted before the deadline"});
            continue;
        }
        if (p.critical() && others_here &&
            left_seconds.count() > (p.grace ? *p.grace : default_grace) + 2 * refused_retry_.count()) {
            not_asked.push_back({p.key(), "a critical pod: evicted once the others are gone"});
            continue;
        }
        if (auto at = retry_at_.find(p.key()); at != retry_at_.end() && now < at->second) {
            not_asked.push_back({p.key(), refused_[p.key()]});
            continue;
        }
        const long long grace = capped_grace(p.grace, left_seconds);
        auto e = api_.call(http_method::post, "/api/v1/namespaces/" + p.namespace_name + "/pods/" + p.name + "/eviction",
                           eviction_body(version_, p, grace), json_body, true);
        if (!e) return std::move(e).error();
        const auto answer = read_eviction_answer(*e);
        switch (answer.what) {
        case eviction_answer::kind::evicted:
        case eviction_answer::kind::gone:
            evicted_[p.key()] = p.uid;
            grace_given_[p.key()] = grace;
            refused_.erase(p.key());
            retry_at_.erase(p.key());
            if (!p.controlled) unowned_.push_back(p.key());
            if (answer.what == eviction_answer::kind::evicted) waiting.push_back(p.key());
            break;
        case eviction_answer::kind::refused:
            ++refusals_;
            refused_[p.key()] = answer.why;
            retry_at_[p.key()] = now + refused_retry_;
            not_asked.push_back({p.key(), answer.why});
            break;
        case eviction_answer::kind::failed:  // 403, 500 after the retries: this pod waits, the others go on
            refused_[p.key()] = answer.why;
            retry_at_[p.key()] = now + refused_retry_;
            failures_.push_back(answer.why);
            not_asked.push_back({p.key(), answer.why});
            break;
        }
    }
    if (waiting.empty() && not_asked.empty()) return state::drained;
    if (!past) return state::draining;
    left_ = std::move(not_asked);
    for (const auto& key : waiting) left_.push_back({key, "evicted, not gone yet"});
    return state::timed_out;
}

}  // namespace watch::kubernetes
