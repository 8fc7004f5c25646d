// SPDX-License-Identifier: MIT
#include "rules.hpp"

#include "../json.hpp"

#include <fstream>
#include <iterator>

namespace watch::kubernetes {

using forewarn::errc;
using forewarn::error;
using forewarn::event_type;
using forewarn::result;

namespace {

constexpr event_type all_types[] = {event_type::unknown,  event_type::freeze,         event_type::reboot,
                                    event_type::redeploy, event_type::preempt,        event_type::terminate,
                                    event_type::live_migrate, event_type::host_terminate, event_type::preempted,
                                    event_type::maintenance, event_type::retirement,  event_type::stop,
                                    event_type::hibernate, event_type::rebalance};

bool known_effect(const std::string& e) { return e == "NoSchedule" || e == "PreferNoSchedule" || e == "NoExecute"; }

}  // namespace

bool disruptive(event_type t) noexcept {
    return t != event_type::live_migrate && t != event_type::freeze && t != event_type::rebalance;
}

node_rules::node_rules() {
    for (const auto t : all_types) {
        node_rule r;
        r.taint = r.cordon = r.drain = disruptive(t);
        rules_[t] = r;
    }
}

const node_rule& node_rules::of(event_type t) const {
    auto it = rules_.find(t);
    return it != rules_.end() ? it->second : rules_.at(event_type::unknown);
}

result<node_rules> node_rules::parse(std::string_view json) {
    std::string why;
    auto doc = parse_json(json, &why);
    if (!doc) return error(errc::parse_error, "the Kubernetes rules: " + why);
    if (!doc->IsObject()) return error(errc::invalid_document, "the Kubernetes rules: not a JSON object of event types");
    node_rules rules;
    const rapidjson::Value& object = *doc;
    for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
        const std::string name(it->name.GetString(), it->name.GetStringLength());
        const event_type t = forewarn::event_type_from_string(name);
        if (t == event_type::unknown && name != "unknown")
            return error(errc::invalid_argument, "the Kubernetes rules: \"" + name + "\" is not an event type (reboot, live_migrate, ...)");
        if (!it->value.IsObject()) return error(errc::invalid_document, "the Kubernetes rules: " + name + " is not an object");
        node_rule r = rules.of(t);
        for (auto m = it->value.MemberBegin(); m != it->value.MemberEnd(); ++m) {
            const std::string key(m->name.GetString(), m->name.GetStringLength());
            bool* flag = key == "taint" ? &r.taint : key == "cordon" ? &r.cordon : key == "drain" ? &r.drain : nullptr;
            if (flag) {
                if (!m->value.IsBool()) return error(errc::invalid_document, "the Kubernetes rules: " + name + "." + key + " is not true or false");
                *flag = m->value.GetBool();
            } else if (key == "effect") {
                if (!m->value.IsString() || !known_effect(m->value.GetString()))
                    return error(errc::invalid_document,
                                 "the Kubernetes rules: " + name + ".effect is not NoSchedule, PreferNoSchedule or NoExecute");
                r.effect = m->value.GetString();
            } else {
                return error(errc::invalid_document,
                             "the Kubernetes rules: " + name + " has \"" + key + "\" (taint, cordon, drain and effect are known)");
            }
        }
        rules.set(t, r);
    }
    return rules;
}

result<node_rules> node_rules::from_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(errc::io_error, "the Kubernetes rules: cannot read " + path);
    std::string text;
    constexpr std::size_t cap = 64 * 1024;
    text.resize(cap + 1);
    in.read(&text[0], static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > cap) return error(errc::body_too_large, "the Kubernetes rules: " + path + " is larger than 64 KiB");
    auto r = parse(text);
    if (!r) return error(r.error().code, r.error().message + " (" + path + ")");
    return r;
}

void node_rules::drain_also(const std::vector<event_type>& types) {
    for (const auto t : types) {
        node_rule& r = rules_[t];
        r.taint = r.cordon = r.drain = true;
    }
}

void node_rules::no_drain() {
    for (auto& [t, r] : rules_) r.drain = false;
}

std::string node_rules::describe() const {
    // Types with the same rule together: "taint NoSchedule, cordon, drain: reboot, redeploy, ...".
    std::map<std::string, std::string> by_rule;
    for (const auto& [t, r] : rules_) {
        if (!r.takes_out()) continue;
        std::string how;
        if (r.taint) how += "taint " + r.effect;
        if (r.cordon) how += std::string(how.empty() ? "" : ", ") + "cordon";
        if (r.drain) how += std::string(how.empty() ? "" : ", ") + "drain";
        auto& types = by_rule[how];
        types += (types.empty() ? "" : ", ") + std::string(forewarn::to_string(t));
    }
    std::string out;
    for (const auto& [how, types] : by_rule) out += (out.empty() ? "" : "; ") + how + ": " + types;
    return out.empty() ? "no type takes the node out of service" : out;
}

}  // namespace watch::kubernetes
