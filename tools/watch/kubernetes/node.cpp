// SPDX-License-Identifier: MIT
#include "node.hpp"

#include "../json.hpp"

#include <ctime>

namespace watch::kubernetes {

namespace {

using writer = json_writer;

std::vector<std::pair<std::string, std::string>> string_map(const rapidjson::Value* v) {
    std::vector<std::pair<std::string, std::string>> out;
    if (!v || !v->IsObject()) return out;
    for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it)
        if (it->value.IsString())
            out.emplace_back(std::string(it->name.GetString(), it->name.GetStringLength()),
                             std::string(it->value.GetString(), it->value.GetStringLength()));
    return out;
}

void write_changes(writer& w, const char* name, const metadata_change& changes) {
    if (changes.empty()) return;
    w.Key(name);
    w.StartObject();
    for (const auto& [key, value] : changes) {
        json_put(w, key);
        if (value)
            json_put(w, *value);
        else
            w.Null();
    }
    w.EndObject();
}

}  // namespace

const std::string* node_view::label(const std::string& key) const {
    for (const auto& [k, v] : labels)
        if (k == key) return &v;
    return nullptr;
}

const std::string* node_view::annotation(const std::string& key) const {
    for (const auto& [k, v] : annotations)
        if (k == key) return &v;
    return nullptr;
}

const node_condition* node_view::condition(const std::string& type) const {
    for (const auto& c : conditions)
        if (c.type == type) return &c;
    return nullptr;
}

bool node_view::has_taint(const std::string& key, const std::string& effect) const {
    for (const auto& t : taints)
        if (t.key == key && t.effect == effect) return true;
    return false;
}

std::string api_time(std::chrono::system_clock::time_point t) {
    const std::time_t s = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

result<void> validate_node_name(const std::string& name) {
    bool ok = !name.empty() && name.size() <= 253;
    for (char ch : name) ok = ok && ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.');
    if (!ok)
        return error(errc::invalid_argument, "\"" + name + "\" is not a Kubernetes node name (lower-case letters, digits, '-' "
                                                           "and '.', at most 253)");
    return {};
}

node_api::node_api(api_client& api, std::string node) : api_(api), node_(std::move(node)) {}

result<rapidjson::Document> node_api::read() {
    auto a = api_.call(http_method::get, "/api/v1/nodes/" + node_);
    if (!a) return std::move(a).error();
    if (!a->ok()) return answer_error("GET node " + node_, *a);
    std::string why;
    auto doc = parse_json(a->body, &why);
    if (!doc || !doc->IsObject()) return error(errc::parse_error, "GET node " + node_ + ": " + (why.empty() ? "not an object" : why));
    return std::move(*doc);
}

result<node_view> node_api::get() {
    if (auto v = validate_node_name(node_); !v) return std::move(v).error();
    auto doc = read();
    if (!doc) return std::move(doc).error();
    node_view n;
    const rapidjson::Value* meta = json_member(*doc, "metadata");
    if (!meta || !meta->IsObject()) return error(errc::invalid_document, "GET node " + node_ + ": no metadata");
    n.name = json_string_member(*meta, "name");
    n.uid = json_string_member(*meta, "uid");
    n.resource_version = json_string_member(*meta, "resourceVersion");
    n.labels = string_map(json_member(*meta, "labels"));
    n.annotations = string_map(json_member(*meta, "annotations"));
    if (const rapidjson::Value* spec = json_member(*doc, "spec")) {
        if (const rapidjson::Value* u = json_member(*spec, "unschedulable"); u && u->IsBool()) n.unschedulable = u->GetBool();
        if (const rapidjson::Value* ts = json_member(*spec, "taints"); ts && ts->IsArray())
            for (const auto& t : ts->GetArray())
                n.taints.push_back({json_string_member(t, "key"), json_string_member(t, "value"), json_string_member(t, "effect")});
    }
    if (const rapidjson::Value* status = json_member(*doc, "status"))
        if (const rapidjson::Value* cs = json_member(*status, "conditions"); cs && cs->IsArray())
            for (const auto& c : cs->GetArray())
                n.conditions.push_back({json_string_member(c, "type"), json_string_member(c, "status"), json_string_member(c, "reason"),
                                        json_string_member(c, "message")});
    if (n.name != node_ || n.resource_version.empty())
        return error(errc::invalid_document, "GET node " + node_ + ": the answer is not that node");
    uid_ = n.uid;
    return n;
}

result<void> node_api::patch_metadata(const metadata_change& labels, const metadata_change& annotations,
                                      std::optional<bool> unschedulable) {
    if (auto v = validate_node_name(node_); !v) return std::move(v).error();
    if (labels.empty() && annotations.empty() && !unschedulable) return {};
    rapidjson::StringBuffer out;
    writer w(out);
    w.StartObject();
    if (!labels.empty() || !annotations.empty()) {
        w.Key("metadata");
        w.StartObject();
        write_changes(w, "labels", labels);
        write_changes(w, "annotations", annotations);
        w.EndObject();
    }
    if (unschedulable) {
        w.Key("spec");
        w.StartObject();
        w.Key("unschedulable");
        // false is written as null: the field goes, as `kubectl uncordon` leaves it
        if (*unschedulable)
            w.Bool(true);
        else
            w.Null();
        w.EndObject();
    }
    w.EndObject();
    auto a = api_.call(http_method::patch, "/api/v1/nodes/" + node_, out.GetString(), merge_patch);
    if (!a) return std::move(a).error();
    if (!a->ok()) return answer_error("PATCH node " + node_, *a);
    return {};
}

result<void> node_api::set_condition(const node_condition& c, const node_view* current) {
    if (auto v = validate_node_name(node_); !v) return std::move(v).error();
    std::optional<node_view> read;
    if (!current) {
        auto n = get();
        if (!n) return std::move(n).error();
        read = std::move(*n);
        current = &*read;
    }
    const std::string now = api_time(std::chrono::system_clock::now());
    const node_condition* was = current->condition(c.type);
    rapidjson::StringBuffer out;
    writer w(out);
    w.StartObject();
    w.Key("status");
    w.StartObject();
    w.Key("conditions");
    w.StartArray();
    w.StartObject();
    json_put(w, "type", c.type);
    json_put(w, "status", c.status);
    json_put(w, "reason", c.reason);
    json_put(w, "message", c.message);
    json_put(w, "lastHeartbeatTime", now);
    if (!was || was->status != c.status) {
        json_put(w, "lastTransitionTime", now);
    }
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndObject();
    auto a = api_.call(http_method::patch, "/api/v1/nodes/" + node_ + "/status", out.GetString(), strategic_merge_patch);
    if (!a) return std::move(a).error();
    if (!a->ok()) return answer_error("PATCH node " + node_ + " status (" + c.type + ")", *a);
    return {};
}

result<bool> node_api::add_taint(const taint& t) { return write_taints(t.key, t.effect, &t); }

result<bool> node_api::remove_taint(const std::string& key, const std::string& effect) {
    return write_taints(key, effect, nullptr);
}

result<bool> node_api::write_taints(const std::string& key, const std::string& effect, const taint* added) {
    if (auto v = validate_node_name(node_); !v) return std::move(v).error();
    constexpr int rounds = 8;  // each round lost to another writer reads again
    api_answer refused;          // the last write refused, and the version it was tested against
    std::string refused_version;
    for (int round = 1;; ++round) {
        auto doc = read();
        if (!doc) return std::move(doc).error();
        const rapidjson::Value* meta = json_member(*doc, "metadata");
        const std::string version = meta ? json_string_member(*meta, "resourceVersion") : std::string();
        if (version.empty()) return error(errc::invalid_document, "GET node " + node_ + ": no resourceVersion");
        if (!refused_version.empty() && version == refused_version) {
            --conflicts_;  // not a race: the node did not change, the patch itself was refused
            return answer_error("PATCH node " + node_ + " taints", refused);
        }
        const rapidjson::Value* spec = json_member(*doc, "spec");
        const rapidjson::Value* taints = spec ? json_member(*spec, "taints") : nullptr;
        // The list as read, every member of every other taint kept as it is (timeAdded too).
        rapidjson::StringBuffer out;
        writer w(out);
        w.StartArray();
        w.StartObject();
        w.Key("op");
        w.String("test");
        w.Key("path");
        w.String("/metadata/resourceVersion");
        json_put(w, "value", version);
        w.EndObject();
        w.StartObject();
        w.Key("op");
        w.String("add");  // on an object member, add replaces it (RFC 6902 4.1)
        w.Key("path");
        w.String("/spec/taints");
        w.Key("value");
        w.StartArray();
        bool found = false;
        if (taints && taints->IsArray())
            for (const auto& t : taints->GetArray()) {
                if (json_string_member(t, "key") == key && json_string_member(t, "effect") == effect) {
                    found = true;
                    if (!added) continue;  // removed
                }
                t.Accept(w);
            }
        if (added && found) return false;  // there already: nothing to write
        if (!added && !found) return false;
        if (added) {
            w.StartObject();
            json_put(w, "key", added->key);
            if (!added->value.empty()) {
                json_put(w, "value", added->value);
            }
            json_put(w, "effect", added->effect);
            json_put(w, "timeAdded", api_time(std::chrono::system_clock::now()));
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        w.EndArray();
        // spec may be absent on a node that has none of its fields: add it first
        std::string patch = out.GetString();
        if (!spec) patch.insert(patch.find("},{") + 2, "{\"op\":\"add\",\"path\":\"/spec\",\"value\":{}},");
        if (before_taint_write_) before_taint_write_();
        auto p = api_.call(http_method::patch, "/api/v1/nodes/" + node_, patch, json_patch);
        if (!p) return std::move(p).error();
        if (p->ok()) return true;
        // The node changed since it was read: a 409, or the 422 a failed `test` op gets ("the
        // server rejected our request due to an error in our request", which an invalid patch
        // gets too). A 422 counts as a lost race only when the next read shows a new version.
        if ((p->status != 409 && p->status != 422) || round >= rounds) return answer_error("PATCH node " + node_ + " taints", *p);
        refused = std::move(*p);
        refused_version = version;
        ++conflicts_;
    }
}

result<void> node_api::post_event(const node_event& e) {
    if (auto v = validate_node_name(node_); !v) return std::move(v).error();
    const std::string now = api_time(std::chrono::system_clock::now());
    rapidjson::StringBuffer out;
    writer w(out);
    w.StartObject();
    w.Key("metadata");
    w.StartObject();
    json_put(w, "generateName", node_ + ".forewarn-");
    w.Key("namespace");
    w.String("default");
    w.EndObject();
    w.Key("involvedObject");
    w.StartObject();
    w.Key("apiVersion");
    w.String("v1");
    w.Key("kind");
    w.String("Node");
    json_put(w, "name", node_);
    if (!uid_.empty()) {
        json_put(w, "uid", uid_);
    }
    w.EndObject();
    json_put(w, "reason", e.reason);
    json_put(w, "message", e.message);
    w.Key("type");
    w.String(e.warning ? "Warning" : "Normal");
    w.Key("source");
    w.StartObject();
    w.Key("component");
    w.String("forewarn-watch");
    json_put(w, "host", node_);
    w.EndObject();
    json_put(w, "firstTimestamp", now);
    json_put(w, "lastTimestamp", now);
    w.Key("count");
    w.Int(1);
    w.EndObject();
    auto a = api_.call(http_method::post, "/api/v1/namespaces/default/events", out.GetString(), json_body);
    if (!a) return std::move(a).error();
    if (!a->ok()) return answer_error("POST event " + e.reason + " about node " + node_, *a);
    return {};
}

}  // namespace watch::kubernetes
