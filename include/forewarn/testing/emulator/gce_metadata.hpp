// SPDX-License-Identifier: MIT
#pragma once

// The GCE metadata server as the emulator plays it: keys under /computeMetadata/v1/, content
// ETags, directory listings and recursive JSON, hanging GETs (wait_for_change, last_etag,
// timeout_sec), and instance/upcoming-maintenance with its odd answers. Rules: docs/emulator.md.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/faults.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/scenario_file.hpp>
#include <forewarn/testing/emulator/service.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// 64-bit FNV-1a as 16 hex digits: the GCE ETag of a value, so the same content has the same tag.
inline std::string emulator_etag(std::string_view content) {
    std::uint64_t h = 14695981039346656037ull;
    for (const char c : content) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i) {
        out[static_cast<std::size_t>(i)] = digits[h & 0xF];
        h >>= 4;
    }
    return out;
}

/// "maintenance-event" -> "maintenanceEvent": the names of GCE's recursive JSON.
inline std::string emulator_camel_case(std::string_view s) {
    std::string out;
    bool up = false;
    for (const char c : s) {
        if (c == '-') {
            up = true;
            continue;
        }
        out += (up && c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
        up = false;
    }
    return out;
}

/// The default service account's token as the emulated metadata server issues it, and the key of
/// its scopes (Compute checks both).
inline constexpr std::string_view emulator_gce_token = "ya29.forewarn-emulator-token";
inline constexpr std::string_view emulator_gce_scopes_key = "instance/service-accounts/default/scopes";

/// The emulated GCE metadata server: everything under /computeMetadata, its control route "gce".
class emulator_gce final : public emulator_service {
public:
    using duration = testing::scenario_duration;
    /// Every key with its value: the scenario's keys over the VM's own (instance/name, ...).
    using leaves = std::map<std::string, std::string>;

    explicit emulator_gce(emulator_engine& engine) : engine_(engine) {}

    std::string_view name() const noexcept override { return "gce"; }
    bool serves(std::string_view path) const noexcept override { return path.compare(0, 16, "/computeMetadata") == 0; }

    // ---- what tests and the control API do to it ----

    /// Sets a key (path under computeMetadata/v1/, e.g. "instance/maintenance-event").
    void set(const std::string& key, std::string value) {
        auto& slot = values_[key];
        if (slot == value) return;
        engine_.log("gce: " + key + " " + (slot.empty() ? std::string("(none)") : slot) + " -> " + value);
        slot = std::move(value);
        engine_.notify();
    }
    /// The current value of a key as `vm` sees it, or nothing.
    std::optional<std::string> value(const std::string& key, const testing::vm_identity& vm) const {
        const auto all = leaves_of(vm);
        const auto it = all.find(key);
        if (it == all.end()) return std::nullopt;
        return it->second;
    }
    /// The ETag a key (or directory, ending in '/') has now, as `vm` sees it.
    std::string etag(const std::string& key, const testing::vm_identity& vm) const {
        return emulator_etag(content(leaves_of(vm), key).value_or(std::string()));
    }

    // ---- emulator_service ----

    void restart() override {
        values_.clear();
        values_["instance/maintenance-event"] = "NONE";
        values_["instance/preempted"] = "FALSE";
        values_["instance/scheduling/preemptible"] = "FALSE";
        values_["instance/scheduling/on-host-maintenance"] = "MIGRATE";
        values_["instance/scheduling/automatic-restart"] = "TRUE";
        values_["project/project-id"] = "forewarn-test";
        values_["project/numeric-project-id"] = "123456789012";
        values_["instance/service-accounts/default/token"] =
            R"({"access_token":")" + std::string(emulator_gce_token) + R"(","expires_in":3599,"token_type":"Bearer"})";
        values_["instance/service-accounts/default/scopes"] = "https://www.googleapis.com/auth/cloud-platform\n";
        for (const auto& kv : engine_.config().gce) values_[kv.first] = kv.second;
        compute_calls_.clear();
        compute_faults_.clear();
        maintenance_read_ = false;
        skipped_warning_ = false;
    }

    bool apply_step(const testing::scenario_step& s, duration) override {
        if (s.what != testing::scenario_step::kind::gce_set) return false;
        if (s.maintenance_edge > 0 && engine_.config().gce_warning_requires_read && !maintenance_read_) {
            engine_.log("gce: maintenance-event not read since the last maintenance: no warning is given");
            skipped_warning_ = true;
            return true;
        }
        if (s.maintenance_edge < 0) {
            maintenance_read_ = false;  // a new maintenance needs a new read
            if (skipped_warning_) {
                skipped_warning_ = false;
                engine_.log("gce: the unannounced maintenance is over");
                return true;
            }
        }
        for (const auto& kv : s.gce_values) {
            if (kv.second) set(kv.first, *kv.second);
            else if (values_.erase(kv.first)) engine_.log("gce: " + kv.first + " deleted");
        }
        return true;
    }

    testing::emulated_response handle(emulator_request& req) override {
        const http_request& request = req.http;
        const emulator_target& t = req.target;
        if (find_header(request.headers, "X-Forwarded-For")) return error_response(403, "Request had an X-Forwarded-For header.\n");
        const std::string* flavor = find_header(request.headers, "Metadata-Flavor");
        if (!flavor || trim(*flavor) != "Google") return error_response(403, "Missing Metadata-Flavor:Google header.\n");
        if (request.method != http_method::get) return error_response(405, "Method not allowed.\n");

        std::string key;
        if (t.path == "/computeMetadata/v1" || t.path == "/computeMetadata/v1/") key.clear();
        else if (t.path.compare(0, 20, "/computeMetadata/v1/") == 0) key = t.path.substr(20);
        else if (t.path == "/computeMetadata" || t.path == "/computeMetadata/") return with_flavor(emulator_text_response(200, "v1/\n", "application/text"));
        else return error_response(404, "Not found.\n");

        auto flag = [&](const char* name, bool& out) -> bool {
            const std::string* v = t.param(name);
            if (!v) return true;
            if (*v == "true" || *v == "True" || *v == "1") out = true;
            else if (*v == "false" || *v == "False" || *v == "0" || v->empty()) out = false;
            else return false;
            return true;
        };
        bool recursive = false, wait = false;
        if (!flag("recursive", recursive) || !flag("wait_for_change", wait)) return error_response(400, "Invalid request.\n");
        std::string alt;
        if (const auto* a = t.param("alt")) {
            if (*a != "json" && *a != "text") return error_response(400, "Invalid alt parameter.\n");
            alt = *a;
        }
        std::optional<std::int64_t> timeout_sec;
        if (const auto* ts = t.param("timeout_sec")) {
            std::int64_t v = 0;
            if (ts->empty() || ts->size() > 9) return error_response(400, "Invalid timeout_sec: an integer number of seconds.\n");
            for (const char c : *ts) {
                if (c < '0' || c > '9') return error_response(400, "Invalid timeout_sec: an integer number of seconds.\n");
                v = v * 10 + (c - '0');
            }
            timeout_sec = v;
        }

        leaves all = leaves_of(*req.vm);
        if (!key.empty() && key.back() != '/' && !all.count(key) && is_directory(all, key + "/")) {
            // a directory named without its slash: the real server redirects
            testing::emulated_response r = error_response(301, "");
            std::string location = t.path + "/";
            const auto q = req.entry.target.find('?');
            if (q != std::string::npos) location += req.entry.target.substr(q);
            r.headers.push_back({"Location", location});
            return r;
        }
        auto value = content(all, key);
        if (!value) return error_response(404, "Not found.\n");
        // Before its first notification the real server answers upcoming-maintenance with a 503.
        if (key == emulator_gce_upcoming_key && *value == emulator_gce_no_notifications_body)
            return with_flavor(emulator_text_response(503, *value, "application/json"));
        if (key == "instance/maintenance-event" || ((key.empty() || key == "instance/") && recursive)) maintenance_read_ = true;

        // Faults come before the hang: a 503 answers at once, as the real server's would.
        std::optional<testing::fault_spec> fault = engine_.take_fault(req);
        if (wait && (!fault || fault->what == testing::fault_spec::kind::delay)) {
            if (auto ended = hang(req, key, timeout_sec, all, value)) return *ended;
        }

        testing::emulated_response r = answer(key, recursive, alt, all, *value);
        r.headers.push_back({"Metadata-Flavor", "Google"});
        r.headers.push_back({"ETag", emulator_etag(*value)});
        r.headers.push_back({"Server", "Metadata Server for VM"});
        if (fault) emulator_faults::apply(*fault, r, req.entry);
        return r;
    }

    std::optional<testing::emulated_response> control(const std::string& route, const std::string& method,
                                                      const emulator_request& req) override {
        if (route == "gce/compute/fault" && method == "POST") {
            auto doc = parse_json(req.http.body.empty() ? std::string_view("{}") : std::string_view(req.http.body));
            if (!doc || !doc->IsObject()) return emulator_control_error(400, "expected a JSON object");
            const auto* code = json_member(*doc, "status");
            if (!code || !code->IsInt() || (code->GetInt() != 403 && code->GetInt() != 400 && code->GetInt() != 429 &&
                                            code->GetInt() != 503))
                return emulator_control_error(400, "status must be 400, 403, 429 or 503", "status");
            int times = 1;
            if (const auto* t = json_member(*doc, "times")) {
                if (!t->IsInt() || t->GetInt() < 1 || t->GetInt() > 100) return emulator_control_error(400, "times must be 1..100", "times");
                times = t->GetInt();
            }
            for (int i = 0; i < times; ++i) compute_faults_.push_back(code->GetInt());
            return emulator_control_ok();
        }
        if (route != "gce" || method == "GET") return std::nullopt;
        auto doc = parse_json(req.http.body.empty() ? std::string_view("{}") : std::string_view(req.http.body));
        if (!doc) return emulator_control_error(400, doc.error().describe());
        auto values = emulator_parse_gce_values(*doc, "gce");
        if (!values) return emulator_control_error(400, values.error().describe(), values.error().field);
        testing::scenario_step s;
        s.what = testing::scenario_step::kind::gce_set;
        s.gce_values = std::move(*values);
        apply_step(s, engine_.timeline().now());
        engine_.notify();
        return emulator_control_ok();
    }

    // ---- Compute's performMaintenance (emulator_gce_compute routes it here) ----

    /// One performMaintenance the emulated Compute received.
    struct compute_call {
        std::string path, request_id;
        bool token_valid = false;
        int status = 0;
        duration at{0};
    };
    const std::vector<compute_call>& compute_calls() const noexcept { return compute_calls_; }
    /// The next `times` calls answer `status` (400, 403, 429 or 503).
    void compute_fault(int status, int times) {
        for (int i = 0; i < times; ++i) compute_faults_.push_back(status);
    }

    testing::emulated_response compute(emulator_request& req, const testing::vm_identity& vm) {
        compute_call call;
        call.at = engine_.timeline().now();
        call.path = req.target.path;
        if (const auto* id = req.target.param("requestId")) call.request_id = *id;
        auto done = [&](int status, const std::string& body) {
            call.status = status;
            compute_calls_.push_back(call);
            engine_.log("gce: Compute performMaintenance -> " + std::to_string(status));
            return emulator_json_response(status, body);
        };
        auto google_error = [&](int status, const std::string& message, const std::string& reason) {
            json_writer w;
            w.begin_object();
            w.key("error");
            w.begin_object();
            w.key("code");
            w.int64(status);
            w.key("message");
            w.string(message);
            w.key("errors");
            w.begin_array();
            w.begin_object();
            w.key("message");
            w.string(message);
            w.key("domain");
            w.string("global");
            w.key("reason");
            w.string(reason);
            w.end_object();
            w.end_array();
            w.end_object();
            w.end_object();
            return done(status, w.str());
        };
        const auto* auth = find_header(req.http.headers, "Authorization");
        call.token_valid = auth && *auth == "Bearer " + std::string(emulator_gce_token);
        if (!call.token_valid)
            return google_error(401, "Request had invalid authentication credentials. Expected OAuth 2 access token.", "authError");
        if (req.http.method != http_method::post) return google_error(405, "Method not allowed.", "httpMethodNotAllowed");
        const auto all = leaves_of(vm);
        const auto scopes = all.count(std::string(emulator_gce_scopes_key)) ? all.at(std::string(emulator_gce_scopes_key)) : "";
        if (scopes.find("/auth/cloud-platform") == std::string::npos && scopes.find("/auth/compute") == std::string::npos)
            return google_error(403, "Request had insufficient authentication scopes.", "insufficientPermissions");
        if (!compute_faults_.empty()) {
            const int status = compute_faults_.front();
            compute_faults_.pop_front();
            if (status == 403)
                return google_error(403, "Required 'compute.instances.performMaintenance' permission for 'projects/" +
                                             all.at("project/project-id") + "/zones/" + zone_of(vm) + "/instances/" + vm.name + "'",
                                    "forbidden");
            if (status == 400) return google_error(400, "Invalid resource usage: 'Machine type does not support performMaintenance.'",
                                                   "invalid");
            if (status == 429) return google_error(429, "Rate Limit Exceeded", "rateLimitExceeded");
            return google_error(503, "The service is currently unavailable.", "backendError");
        }
        const std::string want = "/compute/v1/projects/" + all.at("project/project-id") + "/zones/" + zone_of(vm) +
                                 "/instances/" + vm.name + "/performMaintenance";
        if (call.path != want)
            return google_error(404, "The resource '" + call.path + "' was not found", "notFound");
        // The window must be one that can be rescheduled, still ahead.
        auto& window = values_[std::string(emulator_gce_upcoming_key)];
        auto doc = parse_json(window.empty() ? std::string_view("{}") : std::string_view(window));
        const rapidjson::Value* can = doc && doc->IsObject() ? json_member(*doc, "can_reschedule") : nullptr;
        const rapidjson::Value* st = doc && doc->IsObject() ? json_member(*doc, "maintenance_status") : nullptr;
        const bool reschedulable = can && ((can->IsString() && json_string_view(*can) == "true") || (can->IsBool() && can->GetBool()));
        if (!reschedulable || !st || !st->IsString() || json_string_view(*st) != "PENDING")
            return google_error(400, "Invalid resource usage: 'Instance does not have an upcoming maintenance that can be "
                                     "rescheduled.'", "invalid");
        // Accepted: the window starts (ONGOING), which the notice then shows.
        (*doc)["maintenance_status"].SetString("ONGOING", doc->GetAllocator());
        rapidjson::StringBuffer text;
        rapidjson::Writer<rapidjson::StringBuffer> out(text);
        doc->Accept(out);
        set(std::string(emulator_gce_upcoming_key), text.GetString());
        json_writer w;
        w.begin_object();
        w.key("kind");
        w.string("compute#operation");
        w.key("name");
        w.string("operation-emulator-" + std::to_string(compute_calls_.size() + 1));
        w.key("operationType");
        w.string("performMaintenance");
        w.key("status");
        w.string("RUNNING");
        w.key("targetLink");
        w.string("https://www.googleapis.com" + want.substr(0, want.rfind('/')));
        w.end_object();
        return done(200, w.str());
    }

    void write_state(json_writer& w) const override {
        w.key("gce_compute");
        w.begin_array();
        for (const auto& c : compute_calls_) {
            w.begin_object();
            w.key("path");
            w.string(c.path);
            w.key("request_id");
            w.string(c.request_id);
            w.key("token_valid");
            w.boolean(c.token_valid);
            w.key("status");
            w.int64(c.status);
            w.key("at_ms");
            w.int64(std::chrono::duration_cast<std::chrono::milliseconds>(c.at).count());
            w.end_object();
        }
        w.end_array();
        w.key("gce");
        w.begin_object();
        for (const auto& kv : leaves_of(engine_.config().vms.front())) {
            w.key(kv.first);
            w.begin_object();
            w.key("value");
            w.string(kv.second);
            w.key("etag");
            w.string(emulator_etag(kv.second));
            w.end_object();
        }
        w.end_object();
    }

private:
    leaves leaves_of(const testing::vm_identity& vm) const {
        leaves all;
        all["instance/name"] = vm.name;
        all["instance/id"] = vm.gce_id;
        all["instance/hostname"] = vm.hostname.empty() ? vm.name + ".c.forewarn-test.internal" : vm.hostname;
        all["instance/zone"] = vm.gce_zone;
        all["instance/machine-type"] = vm.machine_type;
        for (const auto& kv : values_) all[kv.first] = kv.second;
        return all;
    }

    static bool is_directory(const leaves& all, const std::string& prefix) {
        if (prefix.empty()) return true;
        const auto it = all.lower_bound(prefix);
        return it != all.end() && it->first.compare(0, prefix.size(), prefix) == 0;
    }

    // The directory as GCE's recursive JSON: nested objects, camelCase keys.
    static void write_directory(json_writer& w, const leaves& all, const std::string& prefix) {
        w.begin_object();
        std::string last_dir;
        for (auto it = all.lower_bound(prefix); it != all.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
            const std::string rest = it->first.substr(prefix.size());
            const auto slash = rest.find('/');
            if (slash == std::string::npos) {
                w.key(emulator_camel_case(rest));
                w.string(it->second);
            } else {
                const std::string dir = rest.substr(0, slash);
                if (dir == last_dir) continue;
                last_dir = dir;
                w.key(emulator_camel_case(dir));
                write_directory(w, all, prefix + dir + "/");
            }
        }
        w.end_object();
    }

    // What an ETag covers: a leaf's value, or a directory's recursive JSON.
    static std::optional<std::string> content(const leaves& all, const std::string& key) {
        if (key.empty() || key.back() == '/') {
            if (!is_directory(all, key)) return std::nullopt;
            json_writer w;
            write_directory(w, all, key);
            return w.str();
        }
        const auto it = all.find(key);
        if (it == all.end()) return std::nullopt;
        return it->second;
    }

    static testing::emulated_response with_flavor(testing::emulated_response r) {
        r.headers.push_back({"Metadata-Flavor", "Google"});
        return r;
    }
    static testing::emulated_response error_response(int status, std::string body) {
        return with_flavor(emulator_text_response(status, std::move(body)));
    }

    /**
     * wait_for_change: holds the request (the engine's lock released while it waits) until the
     * ETag differs from last_etag (default: the current one), timeout_sec passes (then the
     * unchanged value is the answer), the request's own timeout passes, it is cancelled, or the
     * engine shuts down. Nothing when the caller answers with the (new) `value`; else the answer.
     */
    std::optional<testing::emulated_response> hang(emulator_request& req, const std::string& key,
                                                   std::optional<std::int64_t> timeout_sec, leaves& all,
                                                   std::optional<std::string>& value) {
        const std::string* last_etag = req.target.param("last_etag");
        const std::string base = last_etag ? *last_etag : emulator_etag(*value);
        const duration start = engine_.timeline().now();
        std::optional<duration> deadline;
        if (timeout_sec) deadline = start + std::chrono::seconds(*timeout_sec);
        std::optional<duration> request_deadline;
        if (req.http.timeout.count() > 0 && req.http.timeout < std::chrono::hours(24 * 365))
            request_deadline = start + req.http.timeout;
        const emulator_engine::hanging_request counted(engine_);
        for (;;) {
            if (emulator_etag(*value) != base) return std::nullopt;
            if (req.cancelled && req.cancelled->load()) {
                testing::emulated_response r;
                r.what = testing::emulated_response::action::cancelled;
                return r;
            }
            if (engine_.shutting_down()) return error_response(503, "Server shutting down.\n");
            const duration now = engine_.timeline().now();
            if (deadline && now >= *deadline) return std::nullopt;
            if (request_deadline && now >= *request_deadline) {
                testing::emulated_response r;
                r.what = testing::emulated_response::action::timed_out;
                return r;
            }
            std::optional<duration> until = deadline;
            if (request_deadline && (!until || *request_deadline < *until)) until = request_deadline;
            engine_.wait(req.lock, until);
            engine_.sync();
            all = leaves_of(*req.vm);
            value = content(all, key);
            if (!value) return error_response(404, "Not found.\n");  // deleted while waiting
        }
    }

    // The answer to a GET of `key` whose content is `value`: a leaf, a directory listing, or
    // recursive JSON or text.
    static testing::emulated_response answer(const std::string& key, bool recursive, const std::string& alt,
                                             const leaves& all, const std::string& value) {
        const bool directory = key.empty() || key.back() == '/';
        // upcoming-maintenance's value is JSON (or one of its odd answers), sent as it is.
        if (key == emulator_gce_upcoming_key) return emulator_text_response(200, value, "application/json");
        if (!directory) {
            if (alt != "json") return emulator_text_response(200, value, "application/text");
            json_writer w;
            w.string(value);
            return emulator_text_response(200, w.str(), "application/json");
        }
        const auto begin = all.lower_bound(key);
        auto in_dir = [&](leaves::const_iterator it) { return it != all.end() && it->first.compare(0, key.size(), key) == 0; };
        if (recursive) {
            if (alt != "text") return emulator_text_response(200, value, "application/json");
            std::string body;
            for (auto it = begin; in_dir(it); ++it) body += it->first.substr(key.size()) + " " + it->second + "\n";
            return emulator_text_response(200, std::move(body), "application/text");
        }
        std::vector<std::string> children;
        for (auto it = begin; in_dir(it); ++it) {
            const std::string rest = it->first.substr(key.size());
            const auto slash = rest.find('/');
            std::string child = slash == std::string::npos ? rest : rest.substr(0, slash + 1);
            if (children.empty() || children.back() != child) children.push_back(std::move(child));
        }
        if (alt == "json") {
            json_writer w;
            w.begin_array();
            for (const auto& c : children) w.string(c);
            w.end_array();
            return emulator_text_response(200, w.str(), "application/json");
        }
        std::string body;
        for (const auto& c : children) body += c + "\n";
        return emulator_text_response(200, std::move(body), "application/text");
    }

    static std::string zone_of(const testing::vm_identity& vm) { return vm.gce_zone.substr(vm.gce_zone.rfind('/') + 1); }

    emulator_engine& engine_;
    std::vector<compute_call> compute_calls_;
    std::deque<int> compute_faults_;
    std::map<std::string, std::string> values_;  // the scenario's keys (the VM's own come from its identity)
    bool maintenance_read_ = false;  // maintenance-event read since the last maintenance
    bool skipped_warning_ = false;   // the current maintenance came without its warning
};

/// Compute's API in the emulator: POST /compute/v1/projects/P/zones/Z/instances/N/performMaintenance
/// (the stand-in for compute.googleapis.com), answered by the GCE service.
class emulator_gce_compute final : public emulator_service {
public:
    explicit emulator_gce_compute(emulator_gce& gce) : gce_(gce) {}
    std::string_view name() const noexcept override { return "gce-compute"; }
    bool serves(std::string_view path) const noexcept override { return path.substr(0, 12) == "/compute/v1/"; }
    testing::emulated_response handle(emulator_request& req) override { return gce_.compute(req, *req.vm); }
    void restart() override {}  // the GCE service's state

private:
    emulator_gce& gce_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
