// SPDX-License-Identifier: MIT
#pragma once

// One request as the emulator's parts see it, and the answers they build: the target split into
// path and query, the VM it is answered as, its log entry; text, JSON and control-API answers.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/transport.hpp>

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The header a request may carry to be answered as one of the scenario's VMs (default: the first).
inline constexpr std::string_view emulator_vm_header = "X-Forewarn-Vm";
/// The path prefix that does the same for a client that sends no header of its own: an endpoint
/// of http://HOST:PORT/emulator/vm/NAME is answered as the VM NAME (a forewarn-watch per VM).
inline constexpr std::string_view emulator_vm_path = "/emulator/vm/";

/// The VM a path names by emulator_vm_path ("" when it names none); the path loses the prefix
/// ("/emulator/vm/b/metadata/x" becomes "/metadata/x", "/emulator/vm/b" becomes "/").
inline std::string emulator_take_vm_path(std::string& path) {
    if (path.compare(0, emulator_vm_path.size(), emulator_vm_path) != 0) return {};
    const auto slash = path.find('/', emulator_vm_path.size());
    std::string name = path.substr(emulator_vm_path.size(), slash == std::string::npos ? std::string::npos : slash - emulator_vm_path.size());
    if (name.empty()) return {};
    path = slash == std::string::npos ? std::string("/") : path.substr(slash);
    return name;
}

inline int emulator_hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// Percent-decoding of one query component ('+' is a space, as in forms).
inline std::string emulator_url_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] == '%' && i + 2 < s.size() && emulator_hex_value(s[i + 1]) >= 0 &&
                   emulator_hex_value(s[i + 2]) >= 0) {
            out += static_cast<char>(emulator_hex_value(s[i + 1]) * 16 + emulator_hex_value(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

/// The origin form ("/p?q") of an absolute URL ("http://host/p?q"); an origin form as it is.
inline std::string_view emulator_origin_form(std::string_view url) noexcept {
    const auto scheme = url.find("://");
    if (scheme != std::string_view::npos && scheme < url.find_first_of("/?")) {
        url.remove_prefix(scheme + 3);
        const auto slash = url.find_first_of("/?");
        url = slash == std::string_view::npos ? std::string_view("/") : url.substr(slash);
    }
    return url;
}

/// A request target split into its decoded path and query parameters (in order, repeats kept).
struct emulator_target {
    std::string path;
    std::vector<std::pair<std::string, std::string>> query;

    const std::string* param(std::string_view name) const noexcept {
        for (const auto& kv : query)
            if (kv.first == name) return &kv.second;
        return nullptr;
    }
};

/// Accepts an absolute URL ("http://host/p?q") or an origin-form target ("/p?q").
inline emulator_target emulator_parse_target(std::string_view url) {
    url = emulator_origin_form(url);
    const auto hash = url.find('#');
    if (hash != std::string_view::npos) url = url.substr(0, hash);
    emulator_target t;
    const auto q = url.find('?');
    t.path = emulator_url_decode(url.substr(0, q));
    if (t.path.empty() || t.path.front() != '/') t.path.insert(t.path.begin(), '/');
    if (q != std::string_view::npos) {
        std::string_view rest = url.substr(q + 1);
        while (!rest.empty()) {
            const auto amp = rest.find('&');
            const std::string_view part = rest.substr(0, amp);
            if (!part.empty()) {
                const auto eq = part.find('=');
                t.query.emplace_back(emulator_url_decode(part.substr(0, eq)),
                                     eq == std::string_view::npos ? std::string() : emulator_url_decode(part.substr(eq + 1)));
            }
            if (amp == std::string_view::npos) break;
            rest.remove_prefix(amp + 1);
        }
    }
    return t;
}

/// The method as the request log and the control API name it: a DELETE reaches the engine as a
/// POST carrying `X-Http-Method: DELETE` (the engine's request model has no DELETE).
inline std::string emulator_method_name(const http_request& request) {
    if (const auto* m = find_header(request.headers, "X-Http-Method")) return *m;
    return std::string(to_string(request.method));
}

/// What a part is handed for one request. Parts run with the engine's lock held (`lock`), which a
/// part that waits (GCE's hanging GET) releases while it waits, through the engine.
struct emulator_request {
    const http_request& http;
    const emulator_target& target;
    /// The VM the request is answered as; never null for a service (the router answers a request
    /// naming an unknown VM itself), null for the control API when the header names no VM.
    const testing::vm_identity* vm;
    testing::logged_request& entry;  ///< its log entry: a part notes the fault it applied
    std::unique_lock<std::mutex>& lock;
    const std::atomic<bool>* cancelled;  ///< the caller's cancel flag (in-process), or null
};

inline testing::emulated_response emulator_text_response(int status, std::string body,
                                                         std::string type = "text/plain; charset=utf-8") {
    testing::emulated_response r;
    r.status = status;
    r.body = std::move(body);
    r.headers.push_back({"Content-Type", std::move(type)});
    return r;
}

inline testing::emulated_response emulator_json_response(int status, std::string body) {
    return emulator_text_response(status, std::move(body), "application/json; charset=utf-8");
}

/// A control-API error: `{"error": "...", "field": "..."}`.
inline testing::emulated_response emulator_control_error(int status, std::string_view message, std::string_view field = {}) {
    json_writer w(true);
    w.begin_object();
    w.key("error");
    w.string(message);
    if (!field.empty()) {
        w.key("field");
        w.string(field);
    }
    w.end_object();
    return emulator_json_response(status, w.str());
}

inline testing::emulated_response emulator_control_ok() { return emulator_json_response(200, "{\"ok\":true}"); }

}  // namespace detail
FOREWARN_END_NAMESPACE
