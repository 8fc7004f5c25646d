// SPDX-License-Identifier: MIT
// `forewarn-watch check`: the chain from this VM to its maintenance notices walked once, one line
// per step (✔, ! a warning, ✘ a failure, - a step that does not apply), each failure with its
// likely cause and its fix; or, with --json, one JSON object (docs/operators.md). Within a bound
// (--timeout, 15 s by default) whatever the network does. Nothing here approves, writes the state
// file or runs a hook. check.hpp declares the one entry, check_main().

#include "check.hpp"

#include <forewarn/detect.hpp>
#include <forewarn/etcd/client.hpp>
#include <forewarn/etcd/maintenance_budget.hpp>
#include <forewarn/clouds.hpp>
#include <forewarn/platform/files.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport/default.hpp>

#include "lines.hpp"
#include "etcd_options.hpp"
#include "json.hpp"
#include "metrics.hpp"
#include "node_side.hpp"
#include "options.hpp"
#include "platform/arguments.hpp"
#include "platform/etcd_transport.hpp"
#include "platform/process.hpp"
#include "source.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>


namespace watch {
namespace check {

using std::chrono::milliseconds;

// A row of the report (check_row.hpp), as every step words it.
using outcome = check_result;
using step = check_row;

class report {
public:
    step& add(std::string name, outcome o, std::string saw, std::string cause = {}, std::string fix = {}) {
        steps_.push_back({std::move(name), o, std::move(saw), std::move(cause), std::move(fix)});
        return steps_.back();
    }
    step& add(step row) {
        steps_.push_back(std::move(row));
        return steps_.back();
    }
    const std::vector<step>& steps() const noexcept { return steps_; }
    bool failed() const {
        return std::any_of(steps_.begin(), steps_.end(), [](const step& s) { return s.result == outcome::fail; });
    }
    std::size_t count(outcome o) const {
        return static_cast<std::size_t>(std::count_if(steps_.begin(), steps_.end(), [o](const step& s) { return s.result == o; }));
    }
    /// 2 once usage() was called (a bad flag, a malformed --endpoint), else 1 when a step failed, else 0.
    int exit_code() const { return usage_ ? 2 : failed() ? 1 : 0; }
    void usage() noexcept { usage_ = true; }

    std::string text(milliseconds bound) const {
        std::string out = "forewarn-watch check: from this VM to its maintenance notices, within " +
                          std::to_string(bound.count() / 1000) + " s\n";
        for (const auto& s : steps_) {
            const char* mark = s.result == outcome::ok ? "\u2714" : s.result == outcome::warn ? "!" : s.result == outcome::fail ? "\u2718" : "-";
            std::string name = s.step;
            name.resize((std::max)(name.size(), std::size_t(13)), ' ');
            out += std::string(mark) + " " + name + " " + blank_controls(s.saw) + "\n";
            if (!s.cause.empty()) out += "                likely cause: " + blank_controls(s.cause) + "\n";
            if (!s.fix.empty()) out += "                fix: " + blank_controls(s.fix) + "\n";
        }
        out += "check: " + std::to_string(count(outcome::fail)) + " failed, " + std::to_string(count(outcome::warn)) +
               " warnings (exit " + std::to_string(exit_code()) + ")\n";
        return out;
    }

    std::string json(milliseconds bound) const {
        std::string list = "[";
        for (const auto& s : steps_) {
            json_object o;
            o.string("step", s.step).string("result", to_string(s.result)).string("saw", s.saw);
            if (!s.cause.empty()) o.string("cause", s.cause);
            if (!s.fix.empty()) o.string("fix", s.fix);
            list += (list.size() > 1 ? "," : "") + o.str();
        }
        return json_object()
            .string("check", "forewarn-watch")
            .string("version", FOREWARN_VERSION_STRING)
            .integer("bound_ms", bound.count())
            .boolean("ok", !failed())
            .integer("exit", exit_code())
            .integer("failed", static_cast<std::int64_t>(count(outcome::fail)))
            .integer("warnings", static_cast<std::int64_t>(count(outcome::warn)))
            .raw("steps", list + "]")
            .str();
    }

private:
    // Network text on one line and harmless to a terminal: a service's answer may hold line
    // breaks or escape sequences; each control byte becomes a space (for a person reading the
    // report; the log's one_line() writes them as escapes instead, for a machine).
    static std::string blank_controls(std::string s) {
        for (auto& c : s)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
        return s;
    }
    std::vector<step> steps_;
    bool usage_ = false;
};

/// The time left of the check's bound.
class budget {
public:
    explicit budget(milliseconds total) : end_(std::chrono::steady_clock::now() + total) {}
    milliseconds left() const {
        const auto l = std::chrono::duration_cast<milliseconds>(end_ - std::chrono::steady_clock::now());
        return (std::max)(l, milliseconds(0));
    }
    /// A request's timeout: at most `cap` and what is left, at least 1 ms.
    milliseconds request(milliseconds cap) const { return (std::max)(milliseconds(1), (std::min)(cap, left())); }
    bool spent() const { return left().count() == 0; }
    std::chrono::steady_clock::time_point end() const { return end_; }

private:
    std::chrono::steady_clock::time_point end_;
};

/// `f()` with `c` cancelled when the bound ends (its requests and backoff return cancelled).
template <class Cancellable, class F>
auto within(Cancellable& c, const budget& b, F f) -> decltype(f()) {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread dog([&] {
        std::unique_lock<std::mutex> lock(m);
        if (!cv.wait_until(lock, b.end(), [&] { return done; })) c.cancel();
    });
    auto r = f();
    {
        std::lock_guard<std::mutex> lock(m);
        done = true;
    }
    cv.notify_all();
    dog.join();
    return r;
}

/// The words for a request that failed below HTTP: what it was, its likely cause, its fix.
struct diagnosis {
    std::string saw, cause, fix;
};

/// The cloud's name in a sentence (its facts' display_name).
inline std::string display_name(std::string_view cloud) {
    if (const auto* f = forewarn::find_cloud(cloud)) return std::string(f->display_name);
    return cloud.empty() ? std::string("cloud") : std::string(cloud);
}

/// A URL's authority as its host ("[v6]" whole) and its port ("" when it names none).
inline std::pair<std::string_view, std::string_view> host_and_port_of(std::string_view url) {
    if (const auto at = url.find("://"); at != std::string_view::npos) url.remove_prefix(at + 3);
    url = url.substr(0, url.find_first_of("/?#"));
    const auto colon = url.rfind(':');
    if (colon == std::string_view::npos || url.find(']', colon) != std::string_view::npos) return {url, {}};
    return {url.substr(0, colon), url.substr(colon + 1)};
}

/// The host of a URL: "http://metadata.example.internal." -> "metadata.example.internal".
inline std::string host_of(std::string_view url) {
    auto host = host_and_port_of(url).first;
    while (!host.empty() && host.back() == '.') host.remove_suffix(1);
    return std::string(host);
}

/// A URL's host and port as a firewall rule names them: "http://169.254.169.254/x" -> "169.254.169.254
/// port 80" (the scheme's port when the URL names none).
inline std::string host_and_port(std::string_view url) {
    const auto [host, port] = host_and_port_of(url);
    const char* by_scheme = url.rfind("https://", 0) == 0 ? "443" : "80";
    return std::string(host) + " port " + (port.empty() ? std::string(by_scheme) : std::string(port));
}

/// `cloud_name` empty: `what` is not the metadata service (a webhook's receiver, etcd).
inline diagnosis network_diagnosis(const forewarn::error& e, const std::string& what, std::string_view cloud_name) {
    if (cloud_name.empty()) {
        diagnosis d;
        d.saw = e.describe();
        switch (e.network) {
        case forewarn::network_failure::refused: d.cause = "nothing listens at " + what + ", or a firewall rejects the port"; break;
        case forewarn::network_failure::connect_timeout: d.cause = "packets to " + what + " are dropped on the way (a firewall, a network policy)"; break;
        case forewarn::network_failure::reset: d.cause = "the connection to " + what + " was reset or closed before an answer"; break;
        case forewarn::network_failure::name_not_resolved: d.cause = "the host name in " + what + " does not resolve from here"; break;
        case forewarn::network_failure::unreachable: d.cause = "no route to " + what + " from here"; break;
        case forewarn::network_failure::none: d.cause = "the request to " + what + " failed"; break;
        }
        d.fix = "correct the URL, or open the way to it from this host";
        return d;
    }
    const std::string on = display_name(cloud_name);
    const std::string vm = (std::string_view("AEIOU").find(on[0]) != std::string_view::npos ? "an " : "a ") + on + " VM";
    diagnosis d;
    d.saw = e.describe();
    switch (e.network) {
    case forewarn::network_failure::refused:
        d.cause = "nothing listens at " + what + ": this is not " + vm + ", --endpoint is wrong, or a firewall rejects the port";
        d.fix = "run it on " + vm + ", or correct --endpoint (FOREWARN_ENDPOINT)";
        break;
    case forewarn::network_failure::connect_timeout:
        d.cause = "packets to " + what + " are dropped on the way: a firewall or a network policy blocks the metadata address, "
                  "or a container without host networking cannot reach it";
        d.fix = "allow egress to the metadata address (" + host_and_port(what) + ") in the firewall and the NetworkPolicy, or "
                "run the agent with host networking (Kubernetes: hostNetwork: true)";
        break;
    case forewarn::network_failure::reset:
        d.cause = "the connection to " + what + " was reset or closed before an answer: a proxy, firewall or sidecar in the "
                  "path ends it";
        d.fix = "reach the metadata service directly: no transparent proxy or service mesh for the metadata address";
        break;
    case forewarn::network_failure::name_not_resolved:
        d.cause = "the name in " + what + " does not resolve here: it resolves on " + vm + " only, or DNS is not set up";
        d.fix = "run it on " + vm + ", or give --endpoint with the IP address (http://169.254.169.254)";
        break;
    case forewarn::network_failure::unreachable:
        d.cause = "no route to " + what + ": the link-local network is not routed from here (not " + vm + ", or a network namespace without it)";
        d.fix = "run it on " + vm + ", or with host networking";
        break;
    case forewarn::network_failure::none:
        if (e.code == forewarn::errc::timeout) {
            d.cause = what + " took the connection but did not answer in time: the service is overloaded, or something in "
                             "the path holds the request";
            d.fix = "try again; if it persists, look for a proxy or firewall in the path";
        } else {
            d.cause = "the request to " + what + " failed";
            d.fix = "see the error above";
        }
        break;
    }
    return d;
}

/// A request with the check's bound.
inline forewarn::http_request request(forewarn::http_method m, std::string url, const budget& b, milliseconds cap,
                                      forewarn::http_headers headers = {}) {
    forewarn::http_request r;
    r.method = m;
    r.url = std::move(url);
    r.headers = std::move(headers);
    r.timeout = b.request(cap);
    r.connect_timeout = b.request((std::min)(cap, milliseconds(2000)));
    r.max_body = 256 * 1024;
    return r;
}

/// The first line of an answer's body, at most 160 bytes, for a message.
inline std::string said(const forewarn::http_response& r) {
    std::string s = r.body.substr(0, r.body.find('\n'));
    if (s.size() > 160) s = s.substr(0, 160) + "...";
    return s.empty() ? std::string("(no body)") : s;
}

inline bool mentions_forwarded_for(const forewarn::http_response& r) {
    std::string b = r.body;
    std::transform(b.begin(), b.end(), b.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return b.find("x-forwarded-for") != std::string::npos || b.find("forwarded") != std::string::npos;
}

constexpr const char* proxy_cause = "a proxy in the path adds X-Forwarded-For, and the metadata service refuses any "
                                    "request that carries it (it must be reached directly)";
constexpr const char* proxy_fix = "take the proxy out of the path to the metadata address (no transparent proxy, sidecar "
                                  "or service mesh capture for 169.254.169.254)";

/// A 429 or 503 answer: the service throttles or is not ready, and what the agent does about it.
inline void storm(report& rep, const std::string& name, int status, const std::string& saw) {
    rep.add(name, outcome::fail, saw,
            "the service keeps answering " + std::to_string(status) +
                ": it is throttling (too many requests from this VM: another agent or SDK polling it too?) or not ready "
                "yet (just after boot)",
            "wait, and look for other programs polling the metadata service; forewarn-watch itself retries with a growing "
            "pause, keeps the events it knows, and /healthz says so until an answer comes");
}

inline bool throttled(const forewarn::http_response& r) { return r.status == 429 || r.status == 503; }

// ---- 1. which cloud ----------------------------------------------------------------------------

inline std::optional<std::string> which_cloud(report& rep, const settings& s, const budget& b) {
    if (s.cloud != "auto") {
        rep.add("cloud", outcome::ok, s.cloud + " (named by --cloud)");
        return s.cloud;
    }
    auto found = detect_cloud(s, b.request(milliseconds(2000)));
    if (!found) {
        if (found.error().code == forewarn::errc::invalid_argument) {
            rep.add("cloud", outcome::fail, "--endpoint: " + found.error().describe(), "the endpoint is malformed",
                    "give --endpoint as http://HOST[:PORT]");
            rep.usage();
        } else {
            rep.add("cloud", outcome::fail, found.error().describe(), "the probes could not run", "name the cloud with --cloud");
        }
        return std::nullopt;
    }
    const std::string evidence = detection_evidence(*found);
    if (found->found == forewarn::cloud::none) {
        rep.add("cloud", outcome::fail, "no metadata service answered (" + evidence + ")",
                "not a cloud VM, or the metadata address is blocked from here (a firewall, a network policy, a container "
                "without host networking)",
                "run on a VM of " + clouds_in_words(&forewarn::cloud_facts::display_name, "or") +
                    ", or name the cloud with --cloud to see where it fails");
        return std::nullopt;
    }
    const std::string name(forewarn::to_string(found->found));
    rep.add("cloud", outcome::ok, name + ", detected (" + evidence + ")");
    return name;
}

inline void proxies(report& rep) {
    std::string set;
    for (const char* v : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"})
        if (auto value = platform::environment(v); value && !value->empty()) set += (set.empty() ? "" : ", ") + std::string(v);
    if (set.empty())
        rep.add("proxies", outcome::ok, "none set in the environment");
    else
        rep.add("proxies", outcome::ok,
                set + " set: forewarn never uses a proxy for the metadata service (it refuses proxied requests); the "
                      "webhook and etcd are reached directly too");
}

// ---- 2. reaching the service; 3. its handshake --------------------------------------------------

/// One request to `endpoint`; where the cloud's default endpoint is a name with a fallback address
/// (its facts' fallback_endpoint), a name that does not resolve or connect falls back to it, as the client does
/// (`endpoint` then names the address). Whether it answered.
inline bool reach(report& rep, std::string& endpoint, const forewarn::cloud_facts& f, const budget& b) {
    forewarn::default_transport t;
    const auto started = std::chrono::steady_clock::now();
    auto r = t.send(request(forewarn::http_method::get, endpoint + "/", b, milliseconds(3000)));
    if (!r && !f.fallback_endpoint.empty() && endpoint == f.default_endpoint &&
        (r.error().code == forewarn::errc::transport || r.error().network == forewarn::network_failure::name_not_resolved)) {
        rep.add("connect", outcome::warn, endpoint + ": " + r.error().describe(),
                "the server's name does not resolve or connect here (a resolver that does not serve " + host_of(f.default_endpoint) + ")",
                "nothing, if the IP answers (next line): the agent falls back to it as check does");
        endpoint = std::string(f.fallback_endpoint);
        r = t.send(request(forewarn::http_method::get, endpoint + "/", b, milliseconds(3000)));
    }
    const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (r) {
        rep.add("connect", outcome::ok, endpoint + " answered (HTTP " + std::to_string(r->status) + ") in " + std::to_string(took) + " ms");
        return true;
    }
    auto d = network_diagnosis(r.error(), endpoint, f.name);
    rep.add("connect", outcome::fail, d.saw, d.cause, d.fix);
    return false;
}

/// The request header the probe sends, as "Name: value".
inline std::string probe_header(const forewarn::cloud_facts& f) {
    return std::string(f.probe_header.name) + ": " + std::string(f.probe_header.value);
}
inline forewarn::http_headers probe_headers(const forewarn::cloud_facts& f) {
    if (f.probe_header.name.empty()) return {};
    return {{std::string(f.probe_header.name), std::string(f.probe_header.value)}};
}

/// A service that sends no header of its own (probe_recognition::json_object): its notices' URL (the client's first key,
/// with its api-version) with the probe's header.
inline bool json_handshake(report& rep, const forewarn::cloud_facts& f, const std::string& endpoint, const std::string& url,
                           const std::string& api_version, const budget& b) {
    forewarn::default_transport t;
    auto r = t.send(request(forewarn::http_method::get, url, b, milliseconds(5000), probe_headers(f)));
    if (!r) {
        auto d = network_diagnosis(r.error(), url, f.name);
        rep.add("handshake", outcome::fail, d.saw, d.cause, d.fix);
        return false;
    }
    if (throttled(*r)) {
        storm(rep, "handshake", r->status, "HTTP " + std::to_string(r->status) + ": " + said(*r));
        return false;
    }
    if (r->status == 200) {
        rep.add("handshake", outcome::ok, probe_header(f) + " accepted, api-version " + api_version + " answered (HTTP 200)");
        return true;
    }
    if (r->status == 400 && mentions_forwarded_for(*r)) {
        rep.add("handshake", outcome::fail, "HTTP 400: " + said(*r), proxy_cause, proxy_fix);
        return false;
    }
    if (r->status == 400)
        rep.add("handshake", outcome::fail, "HTTP 400: " + said(*r),
                "IMDS refused the request as malformed: an api-version it does not know, or a header taken off on the way",
                "use forewarn-watch's own api-version (do not set one of your own), and reach IMDS directly");
    else
        rep.add("handshake", outcome::fail, "HTTP " + std::to_string(r->status) + ": " + said(*r),
                "something other than " + std::string(f.service_name) + " answers at " + endpoint,
                "correct --endpoint, or --cloud if this is not " + std::string(f.display_name));
    return false;
}

/// The instance id asked for as `check` probes a service (the cloud's probe headers); a network
/// failure reported, and nothing.
inline std::optional<forewarn::http_response> probe_instance_id(report& rep, const forewarn::cloud_facts& f,
                                                                 const std::string& endpoint, const budget& b) {
    forewarn::default_transport t;
    const std::string url = endpoint + std::string(f.instance_id.path);
    auto r = t.send(request(forewarn::http_method::get, url, b, milliseconds(5000), probe_headers(f)));
    if (r) return std::move(*r);
    auto d = network_diagnosis(r.error(), url, f.name);
    rep.add("handshake", outcome::fail, d.saw, d.cause, d.fix);
    return std::nullopt;
}

/// A service that names itself with the header it is asked with (echoed_header): the instance id, the
/// header both ways.
inline bool flavor_handshake(report& rep, const forewarn::cloud_facts& f, const std::string& endpoint, const budget& b) {
    const auto r = probe_instance_id(rep, f, endpoint, b);
    if (!r) return false;
    const auto* flavor = r->header(f.probe_header.name);
    if (throttled(*r)) {
        storm(rep, "handshake", r->status, "HTTP " + std::to_string(r->status) + ": " + said(*r));
        return false;
    }
    if (r->status == 403 && mentions_forwarded_for(*r)) {
        rep.add("handshake", outcome::fail, "HTTP 403: " + said(*r), proxy_cause, proxy_fix);
        return false;
    }
    if (!flavor || *flavor != f.probe_header.value) {
        rep.add("handshake", outcome::fail,
                "HTTP " + std::to_string(r->status) + " without " + probe_header(f) + " (" + said(*r) + ")",
                "something other than the " + std::string(f.service_name) + " answers at " + endpoint + " (a proxy, another service)",
                "correct --endpoint, or --cloud if this is not " + std::string(f.display_name));
        return false;
    }
    if (r->status != 200) {
        rep.add("handshake", outcome::fail, "HTTP " + std::to_string(r->status) + ": " + said(*r),
                "the metadata server refused instance/id", "see the answer above");
        return false;
    }
    rep.add("handshake", outcome::ok, probe_header(f) + " answered both ways (HTTP 200)");
    return true;
}

/// A session token (session_token): the token PUT, and what a GET without one says when the
/// PUT gets no answer.
inline bool token_handshake(report& rep, const forewarn::cloud_facts& f, const std::string& endpoint, const budget& b) {
    forewarn::default_transport t;
    const std::string url = endpoint + std::string(f.token.path);
    auto r = t.send(request(forewarn::http_method::put, url, b, milliseconds(3000), {{std::string(f.token.ttl_header), "21600"}}));
    if (r && r->status == 200 && !r->body.empty()) {
        rep.add("handshake", outcome::ok, "session token issued (PUT " + std::string(f.token.path) + ", HTTP 200)");
        return true;
    }
    if (r && throttled(*r)) {
        storm(rep, "handshake", r->status, "the token PUT answered HTTP " + std::to_string(r->status) + ": " + said(*r));
        return false;
    }
    if (r && r->status == 403) {
        rep.add("handshake", outcome::fail, "the token PUT was refused (HTTP 403: " + said(*r) + ")",
                std::string(proxy_cause) + "; or the instance metadata service is turned off for this instance",
                std::string(proxy_fix) + "; or turn the metadata service on (HttpEndpoint enabled)");
        return false;
    }
    if (r) {
        rep.add("handshake", outcome::fail, "the token PUT answered HTTP " + std::to_string(r->status) + ": " + said(*r),
                "something other than the instance metadata service answers at " + endpoint,
                "correct --endpoint, or --cloud if this is not " + std::string(f.display_name));
        return false;
    }
    if (r.error().code == forewarn::errc::timeout && r.error().network != forewarn::network_failure::connect_timeout) {
        // The hop-limit signature: the PUT's answer never arrives, a GET without a token is refused at once.
        auto g = t.send(request(forewarn::http_method::get, endpoint + "/latest/meta-data/", b, milliseconds(2000)));
        if (g && g->status == 401) {
            rep.add("handshake", outcome::fail,
                    "the token PUT got no answer (" + r.error().describe() + ") while a GET without a token got HTTP 401 at once",
                    "the hop-limit signature: the token's answer is sent with an IP hop limit of 1 and dies one hop short, "
                    "inside a container behind a bridge",
                    std::string(f.token_hop_fix));
            return false;
        }
    }
    auto d = network_diagnosis(r.error(), url, f.name);
    rep.add("handshake", outcome::fail, "the token PUT failed: " + d.saw, d.cause, d.fix);
    return false;
}

/// A service without a token recognised by its instance ids (instance_id): the id, of its form.
inline bool instance_id_handshake(report& rep, const forewarn::cloud_facts& f, const std::string& endpoint, const budget& b) {
    const auto r = probe_instance_id(rep, f, endpoint, b);
    if (!r) return false;
    if (throttled(*r)) {
        storm(rep, "handshake", r->status, "HTTP " + std::to_string(r->status) + ": " + said(*r));
    } else if (r->status == 200 && r->body.rfind(f.instance_id.prefix, 0) == 0) {
        rep.add("handshake", outcome::ok, "instance-id answered (HTTP 200)");
        return true;
    } else {
        rep.add("handshake", outcome::fail, "instance-id answered HTTP " + std::to_string(r->status) + ": " + said(*r),
                "something other than " + std::string(f.service_name) + " answers at " + endpoint, "correct --endpoint or --cloud");
    }
    return false;
}

// ---- 4. identity; 5. the notices and the clock ----------------------------------------------

inline void identity(report& rep, source& client, const settings& s, const budget& b) {
    std::string name = s.self;
    if (!name.empty()) {
        rep.add("identity", outcome::ok, "--self " + name + " (the metadata is not asked)");
    } else {
        auto id = within(client, b, [&] { return client.identity(); });
        client.reset();
        if (id) {
            name = id->name;
            rep.add("identity", outcome::ok, "this VM is " + name + " in the events' resources (from the metadata)");
        } else {
            rep.add("identity", outcome::fail, id.error().describe(), "the metadata service did not give this VM's name",
                    "give it with --self NAME (FOREWARN_SELF)");
        }
    }
    if (s.approve == forewarn::approval_scope::never) return;
    const std::string scope = s.approve == forewarn::approval_scope::own      ? "own"
                              : s.approve == forewarn::approval_scope::leader ? "leader"
                                                                              : "all";
    if (!client.can_approve()) {
        const auto why = client.cannot_approve();
        const std::string who = why.saw == "takes no approvals" ? display_name(forewarn::to_string(client.cloud())) + " " : "";
        rep.add(why.step, why.result, "--approve " + scope + ": " + who + why.saw, why.cause, why.fix);
    }
    else if (name.empty() && s.approve != forewarn::approval_scope::all)
        rep.add("approvals", outcome::fail, "--approve " + scope + " needs this VM's name, and it is not known",
                "nothing is approved until the name is known", "give it with --self NAME");
    else
        rep.add("approvals", outcome::ok,
                "--approve " + scope + (s.approve == forewarn::approval_scope::all ? std::string(": every event seen")
                                                                                   : ": events that name " + name) +
                    (s.dry_run ? " (dry run: nothing is sent)" : ""));
}

inline void clock_skew(report& rep, const forewarn::document& d, const forewarn::cloud_facts* f) {
    if (!d.service_time) {
        rep.add("clock", outcome::skip, "the service sent no Date header to compare with");
        return;
    }
    const auto ours = std::chrono::system_clock::now();
    const auto skew = std::chrono::duration_cast<std::chrono::seconds>(ours - *d.service_time);
    const long long off = skew.count() < 0 ? -skew.count() : skew.count();
    const std::string saw = "the service's Date " + forewarn::format_iso8601(*d.service_time) + " is " + std::to_string(off) +
                            " s " + (skew.count() < 0 ? "ahead of" : "behind") + " this VM's clock";
    const char* cause = "this VM's clock (or the service's) is off: a notice's NotBefore is judged against both";
    const std::string fix = "sync the clock (chrony or systemd-timesyncd" +
                            (f && !f->time_source.empty() ? "; the cloud's own time source: " + std::string(f->time_source) : "") + ")";
    if (off > 300)
        rep.add("clock", outcome::fail, saw, cause, fix);
    else if (off > 30)
        rep.add("clock", outcome::warn, saw, cause, fix);
    else
        rep.add("clock", outcome::ok, saw);
}

inline void notices(report& rep, source& client, const budget& b) {
    auto doc = within(client, b, [&] { return client.fetch(); });
    client.reset();
    if (!doc) {
        const auto& e = doc.error();
        if (e.code == forewarn::errc::http_status && (e.http_status == 503 || e.http_status == 429))
            storm(rep, "notices", e.http_status, e.describe());
        else if (e.code == forewarn::errc::cancelled)
            rep.add("notices", outcome::fail, "no answer within the check's bound (" + e.describe() + ")",
                    "the service is slow to answer, or retries after errors took the time",
                    "run check again with a longer --timeout; look at the steps above");
        else if (e.network != forewarn::network_failure::none || e.code == forewarn::errc::timeout) {
            auto d = network_diagnosis(e, e.url.empty() ? client.endpoint() : e.url, forewarn::to_string(client.cloud()));
            rep.add("notices", outcome::fail, d.saw, d.cause, d.fix);
        } else
            rep.add("notices", outcome::fail, e.describe(), "the service's answer is not what forewarn reads",
                    "see the error above; correct --endpoint or --cloud if another service answers there");
        return;
    }
    for (const auto& url : client.key_urls()) {
        const auto failed = std::find_if(doc->key_errors.begin(), doc->key_errors.end(),
                                         [&](const forewarn::error& e) { return e.url.rfind(url, 0) == 0; });
        if (failed == doc->key_errors.end())
            rep.add("key", outcome::ok, url + " read");
        else
            rep.add("key", outcome::fail, url + ": " + failed->describe(),
                    "this key's answer is refused (its other keys answer: their notices are still heard)",
                    "see the error; report it with the answer if the service sends it");
    }
    if (doc->events.empty()) {
        rep.add("notices", outcome::ok, "no maintenance announced now");
    } else {
        std::string list;
        for (const auto& e : doc->events) {
            list += (list.empty() ? "" : "; ") + e.id + " (" + std::string(forewarn::to_string(e.type)) + ", " +
                    std::string(forewarn::to_string(e.status));
            if (e.not_before) list += ", not before " + forewarn::format_iso8601(*e.not_before);
            list += ")";
        }
        rep.add("notices", outcome::ok, std::to_string(doc->events.size()) + " announced now: " + list);
    }
    clock_skew(rep, *doc, forewarn::find_cloud(forewarn::to_string(client.cloud())));
}

// ---- 6. the agent's surroundings ------------------------------------------------------------------

inline void state_directory(report& rep, const settings& s) {
    if (s.state_file.empty()) {
        rep.add("state", outcome::skip, "no --state-file: nothing is remembered across restarts");
        return;
    }
    const auto file = forewarn::platform::path_from_utf8(s.state_file);
    auto dir = file.parent_path();
    if (dir.empty()) dir = ".";
    const std::string where = forewarn::platform::utf8_name(dir);
    const auto probe = dir / (".forewarn-check-" + std::to_string(process_id()));
    auto w = forewarn::platform::write_file_atomically(probe, "forewarn-watch check\n");
    std::error_code ec;
    std::filesystem::remove(probe, ec);
    if (!w) {
        rep.add("state", outcome::fail, "cannot write in " + where + ": " + w.error().message,
                "the directory does not exist, or the user the agent runs as cannot write it",
                "create " + where + " writable by that user (the systemd unit's StateDirectory=forewarn does; in a container, "
                                    "mount a writable volume there)");
        return;
    }
    auto existing = forewarn::platform::read_small_file(file);
    if (existing)
        rep.add("state", outcome::ok, where + " is writable; " + s.state_file + " is there (" + std::to_string(existing->size()) +
                                          " bytes, not changed)");
    else if (existing.error().code == forewarn::errc::not_found)
        rep.add("state", outcome::ok, where + " is writable; " + s.state_file + " is made at the first change");
    else
        rep.add("state", outcome::fail, where + " is writable but " + existing.error().describe(),
                "the state file cannot be read by the user the agent runs as", "fix its owner and mode");
}

/// The program a hook command starts: its first word, when it is a path or found on PATH.
inline void hook(report& rep, const char* which, const std::string& command) {
    if (command.empty()) return;
    std::string word = command.substr(0, command.find_first_of(" \t"));
    if (word.size() >= 2 && (word.front() == '\'' || word.front() == '"') && word.back() == word.front())
        word = word.substr(1, word.size() - 2);
    const std::string name = std::string("--") + which;
    if (word.find('/') != std::string::npos || word.find('\\') != std::string::npos) {
        const auto p = forewarn::platform::path_from_utf8(word);
        std::error_code ec;
        if (!std::filesystem::exists(p, ec))
            rep.add("hook", outcome::fail, name + ": " + word + " does not exist", "the path is wrong, or the file is not installed here",
                    "install it, or correct " + name);
        else if (!runnable(p))
            rep.add("hook", outcome::fail, name + ": " + word + " is not executable", "its mode lacks the execute bit for this user",
                    "chmod +x " + word);
        else
            rep.add("hook", outcome::ok, name + ": " + word + " is executable (not run)");
        return;
    }
    if (auto found = find_on_path(word)) {
        rep.add("hook", outcome::ok, name + ": " + word + " found on PATH at " + forewarn::platform::utf8_name(*found) + " (not run)");
        return;
    }
    rep.add("hook", outcome::warn, name + ": " + word + " is not a file on PATH",
            "a shell builtin or function (fine), or a program not installed for the agent's PATH",
            "give the program's full path in " + name);
}

inline void metrics_port(report& rep, const settings& s) {
    if (s.metrics_listen.empty()) return;
    metrics_server server([](std::string_view) { return std::make_pair(404, std::string()); });
    const std::string e = server.start(s.metrics_listen);
    server.stop();
    if (e.empty())
        rep.add("metrics", outcome::ok, s.metrics_listen + " is free to bind");
    else if (e.find("in use") != std::string::npos || e.find("Only one usage") != std::string::npos ||
             e.find("(10048)") != std::string::npos)  // WSAEADDRINUSE, whose text Wine leaves out
        rep.add("metrics", outcome::warn, e, "another program listens there: the running agent itself is fine, anything else is not",
                "stop the other program, or choose another --metrics-listen");
    else
        rep.add("metrics", outcome::fail, e, "the address cannot be bound by this user", "choose another --metrics-listen");
}

// --lb-drain: the approval waits for the load balancer to take this VM out. A warning when the
// agent approves and tells a load balancer (/readyz, --ready-file) without it.
inline void lb_drain(report& rep, const settings& s) {
    if (s.approve == forewarn::approval_scope::never) return;
    const bool told = !s.metrics_listen.empty() || !s.ready_file.empty();
    if (s.lb_drain.count() > 0)
        rep.add("load balancer", outcome::ok,
                "--lb-drain " + std::to_string(s.lb_drain.count()) +
                    " s: an event is approved once /readyz and --ready-file have said not ready that long");
    else if (told)
        rep.add("load balancer", outcome::warn,
                "--approve with " + std::string(s.metrics_listen.empty() ? "--ready-file" : "/readyz (--metrics-listen)") +
                    " and --lb-drain 0",
                "the approval is sent as soon as the prepare hook is done, before a load balancer has taken this VM out: "
                "requests still sent to it are lost",
                "set --lb-drain to the load balancer's check interval times the failures it waits for, plus a margin");
}

inline void webhook_reachable(report& rep, const settings& s, const budget& b) {
    if (s.webhook.empty()) return;
    forewarn::default_transport t;
    auto r = t.send(request(forewarn::http_method::head, s.webhook, b, milliseconds(3000)));
    if (r) {
        rep.add("webhook", outcome::ok, s.webhook + " answered a HEAD (HTTP " + std::to_string(r->status) + "; nothing was posted)");
        return;
    }
    auto d = network_diagnosis(r.error(), s.webhook, "");
    rep.add("webhook", outcome::fail, d.saw, "the webhook's receiver cannot be reached: " + d.cause,
            "correct --webhook, or open the way to it from this host");
}

inline void etcd_budget(report& rep, const settings& s, const budget& b) {
    if (s.etcd.empty()) return;
    auto transport = etcd_transport(s.etcd_ca, s.etcd_cert, s.etcd_key);
    if (!transport) {
        rep.add("etcd", outcome::fail, transport.error().describe(), "the TLS settings cannot be used", "see --help for --etcd-ca");
        return;
    }
    forewarn::etcd::client_options o = etcd_client_options(s);
    o.request_timeout = b.request(milliseconds(3000));
    o.connect_timeout = b.request(milliseconds(1000));
    forewarn::etcd::basic_client<forewarn::default_transport> c(o, std::move(*transport));
    if (auto v = c.validate(); !v) {
        rep.add("etcd", outcome::fail, v.error().describe(), "--etcd is malformed", "give http:// or https:// URLs");
        return;
    }
    auto version = within(c, b, [&] { return c.version(); });
    if (!version) {
        auto d = network_diagnosis(version.error(), s.etcd, "");
        rep.add("etcd", outcome::fail, d.saw, "etcd cannot be reached: " + d.cause, "correct --etcd, or open the way to the cluster from this host");
        return;
    }
    const std::string prefix = forewarn::etcd::budget_options{}.key_prefix + "fleet/";
    auto keys = within(c, b, [&] { return c.range_prefix(prefix); });
    if (!keys) {
        rep.add("etcd", outcome::fail, "etcd " + version->server + " answered, but reading " + prefix + " failed: " + keys.error().describe(),
                "the user or password is wrong, or the user may not read the budget's keys",
                "check --etcd-user and FOREWARN_ETCD_PASSWORD, and the user's role on " + prefix);
        return;
    }
    rep.add("etcd", outcome::ok,
            "etcd " + version->server + " answered" + (s.etcd_user.empty() ? "" : " as " + s.etcd_user) + "; " + prefix + " is readable (" +
                std::to_string(keys->kvs.size()) + " keys; group " + s.fleet_group + ", at most " + std::to_string(s.fleet_max) +
                " in maintenance)");
}

// ---- the whole walk -------------------------------------------------------------------------------

// The steps of the cloud's lever for approving through its own API (source::lever_steps, from clients.cpp).
inline void lever(report& rep, source& client, const settings& s, const budget& b) {
    const auto steps = within(client, b, [&] { return client.lever_steps(s); });
    client.reset();
    for (const auto& l : steps) rep.add(l);
}

inline void cloud_steps(report& rep, source& client, const settings& s, const budget& b) {
    std::string endpoint = client.endpoint();
    rep.add("endpoint", outcome::ok, endpoint);
    proxies(rep);
    const forewarn::cloud_facts* f = forewarn::find_cloud(client.cloud());
    if (!f) return;  // every source is one of the clouds
    if (!reach(rep, endpoint, *f, b)) {
        for (const char* n : {"handshake", "identity", "notices"}) rep.add(n, outcome::skip, "the service cannot be reached");
        return;
    }
    bool shook = false;
    switch (f->recognition) {
    case forewarn::probe_recognition::json_object: {
        const auto urls = client.key_urls();
        shook = json_handshake(rep, *f, endpoint, urls.empty() ? endpoint : urls.front(), client.api_version(), b);
        break;
    }
    case forewarn::probe_recognition::echoed_header: shook = flavor_handshake(rep, *f, endpoint, b); break;
    case forewarn::probe_recognition::session_token: shook = token_handshake(rep, *f, endpoint, b); break;
    case forewarn::probe_recognition::instance_id: shook = instance_id_handshake(rep, *f, endpoint, b); break;
    }
    if (!shook) {
        for (const char* n : {"identity", "notices"}) rep.add(n, outcome::skip, "the handshake failed");
        return;
    }
    identity(rep, client, s, b);
    notices(rep, client, b);
    lever(rep, client, s, b);
}

/// `forewarn-watch check`'s flags on top of the agent's: the bound.
struct check_flags {
    milliseconds bound{15000};
};

/// Takes `--timeout SECONDS` (or `--timeout=SECONDS`) out of `args`; an error in words.
inline std::string take_flags(std::vector<std::string>& args, check_flags& f) {
    for (std::size_t i = 1; i < args.size(); ++i) {
        std::string value;
        if (args[i] == "--timeout") {
            if (i + 1 >= args.size()) return "--timeout needs a number of seconds";
            value = args[i + 1];
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        } else if (args[i].rfind("--timeout=", 0) == 0) {
            value = args[i].substr(10);
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            continue;
        }
        long long n = 0;
        if (!parse_count(value, n) || n == 0 || n > 3600) return "--timeout needs a number of seconds from 1 to 3600, not \"" + value + "\"";
        f.bound = std::chrono::seconds(n);
        --i;
    }
    return {};
}

}  // namespace check

/// `forewarn-watch check [options] [--timeout SECONDS]` (args without "check"): the report on
/// stdout, exit 0 (no failure), 1 (a step failed) or 2 (usage).
int check_main(std::vector<std::string> args) {
    check::check_flags cf;
    if (auto e = check::take_flags(args, cf); !e.empty()) {
        std::fprintf(watch::streams().log, "forewarn-watch check: %s\n", e.c_str());
        return 2;
    }
    watch::settings s;
    if (auto code = watch::parse(args, s)) return *code;
    const check::budget overall(cf.bound);
    // The surroundings' network steps (webhook, etcd) keep a quarter of the bound for themselves.
    const bool far_steps = !s.webhook.empty() || !s.etcd.empty();
    const check::budget cloud_part(far_steps ? cf.bound * 3 / 4 : cf.bound);
    check::report rep;
    if (auto cloud = check::which_cloud(rep, s, cloud_part)) {
        auto client = watch::make_source(*cloud, s);
        if (auto v = client->validate(); !v) {
            rep.add("endpoint", check::outcome::fail, v.error().describe(), "the settings can never work",
                    "correct --endpoint (or the cloud's endpoint variable)");
            if (v.error().code == forewarn::errc::invalid_argument) rep.usage();
        } else {
            check::cloud_steps(rep, *client, s, cloud_part);
        }
    }
    check::state_directory(rep, s);
    check::hook(rep, "on-prepare", s.on_prepare);
    check::hook(rep, "on-started", s.on_started);
    check::hook(rep, "on-recover", s.on_recover);
    check::metrics_port(rep, s);
    check::lb_drain(rep, s);
    check::webhook_reachable(rep, s, overall);
    check::etcd_budget(rep, s, overall);
    for (auto& row : node_side_check(s, overall.request(std::chrono::seconds(10)))) rep.add(std::move(row));
    const std::string out = s.json ? rep.json(cf.bound) + "\n" : rep.text(cf.bound);
    std::fwrite(out.data(), 1, out.size(), watch::streams().lines);
    std::fflush(watch::streams().lines);
    return rep.exit_code();
}

}  // namespace watch
