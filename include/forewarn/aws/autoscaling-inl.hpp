// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/aws/autoscaling.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/aws/autoscaling.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace aws {
namespace detail_xml {

// The text of the first <tag>...</tag> in `xml`, entities decoded, at most 1 KiB; nothing when
// absent or unclosed.
inline std::optional<std::string> element(std::string_view xml, std::string_view tag) {
    const std::string open = "<" + std::string(tag) + ">";
    const std::string close = "</" + std::string(tag) + ">";
    const auto at = xml.find(open);
    if (at == std::string_view::npos) return std::nullopt;
    const auto from = at + open.size();
    const auto to = xml.find(close, from);
    if (to == std::string_view::npos) return std::nullopt;
    const auto raw = xml.substr(from, to - from);
    std::string out;
    for (std::size_t i = 0; i < raw.size() && out.size() < 1024; ++i) {
        if (raw[i] != '&') {
            out += raw[i];
            continue;
        }
        const auto semi = raw.find(';', i);
        const auto name = semi == std::string_view::npos ? std::string_view{} : raw.substr(i + 1, semi - i - 1);
        char c = 0;
        if (name == "lt") c = '<';
        else if (name == "gt") c = '>';
        else if (name == "amp") c = '&';
        else if (name == "quot") c = '"';
        else if (name == "apos") c = '\'';
        else if (name.size() > 1 && name.size() < 8 && name[0] == '#') {
            unsigned long v = 0;
            bool ok = true;
            const bool hex = name[1] == 'x' || name[1] == 'X';
            for (std::size_t k = hex ? 2 : 1; k < name.size(); ++k) {
                const char d = name[k];
                int digit = d >= '0' && d <= '9' ? d - '0' : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                                                          : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10 : -1;
                if (digit < 0) ok = false;
                else v = v * (hex ? 16 : 10) + static_cast<unsigned long>(digit);
            }
            // ASCII only, printable: anything else becomes '?' (a message, not a document).
            c = ok && v >= 0x20 && v < 0x7f ? static_cast<char>(v) : '?';
        }
        if (c == 0) {  // not an entity: kept as it is
            out += '&';
            continue;
        }
        out += c;
        i = semi;
    }
    return out;
}

}  // namespace detail_xml

FOREWARN_INLINE std::string autoscaling_endpoint(std::string_view region) {
    const bool china = region.size() > 3 && region.substr(0, 3) == "cn-";
    return "https://autoscaling." + std::string(region) + (china ? ".amazonaws.com.cn/" : ".amazonaws.com/");
}

FOREWARN_INLINE std::optional<api_error> parse_error_response(std::string_view body) {
    const auto xml = body.substr(0, std::size_t(64) << 10);
    if (xml.find("<ErrorResponse") == std::string_view::npos && xml.find("<Error>") == std::string_view::npos)
        return std::nullopt;
    auto code = detail_xml::element(xml, "Code");
    if (!code || code->empty()) return std::nullopt;
    api_error e;
    e.code = std::move(*code);
    e.message = detail_xml::element(xml, "Message").value_or("");
    e.type = detail_xml::element(xml, "Type").value_or("");
    e.request_id = detail_xml::element(xml, "RequestId").value_or("");
    return e;
}

FOREWARN_INLINE std::string query_body(std::string_view action,
                                       std::initializer_list<std::pair<std::string_view, std::string_view>> params) {
    std::string out = "Action=" + uri_encode(action) + "&Version=2011-01-01";
    for (const auto& p : params) {
        out += '&';
        out += uri_encode(p.first);
        out += '=';
        out += uri_encode(p.second);
    }
    return out;
}

}  // namespace aws

namespace detail {
using aws::query_body;

FOREWARN_INLINE std::string aws_lifecycle_body(std::string_view action, const aws::lifecycle_action& a, std::string_view result) {
    if (result.empty())
        return query_body(action, {{"AutoScalingGroupName", a.group}, {"InstanceId", a.instance_id}, {"LifecycleHookName", a.hook}});
    return query_body(action, {{"AutoScalingGroupName", a.group},
                               {"InstanceId", a.instance_id},
                               {"LifecycleActionResult", result},
                               {"LifecycleHookName", a.hook}});
}

FOREWARN_INLINE result<void> aws_autoscaling_call(forewarn::detail::function_ref<result<http_response>(const http_request&)> send,
                                              const aws::autoscaling_options& o, const aws::credentials_source& creds,
                                              interruptible_sleep& sleep, std::string_view action, const std::string& body) {
    const std::string what = "Auto Scaling " + std::string(action);
    retry_options ro;
    ro.max_attempts = o.max_attempts;
    ro.initial_backoff = o.initial_backoff;
    ro.max_backoff = std::chrono::seconds(8);
    // The attempts bound the call (each try within o.timeout, each pause at most 8 s), not the
    // policy's time or budget.
    ro.max_elapsed = std::chrono::hours(1);
    ro.budget_capacity = static_cast<double>(o.max_attempts);
    const retry_policy policy(retry_rules::aws, ro);
    bool refreshed = false;
    // How the last try failed: on the network, or with Auto Scaling's answer (its ErrorResponse's
    // code); neither when it failed here (credentials, signing), which another try would not mend.
    bool network = false, answered = false;
    std::string code;
    // One try: the credentials, the signed POST, its answer. Expired credentials are read again
    // and sent once more at once, within the same try.
    auto attempt = [&]() -> result<void> {
        for (bool refresh = false;; refresh = true) {
            network = answered = false;  // of this send: a refresh's failure is the credentials'
            code.clear();
            if (!creds) return error(errc::invalid_argument, what + ": no source of credentials");
            auto c = creds(refresh);
            if (!c) {
                error e = std::move(c).error();
                e.message = what + ": no credentials: " + e.message;
                return e;
            }
            http_request req;
            req.method = http_method::post;
            req.url = o.endpoint;
            req.headers.push_back({"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"});
            req.body = body;
            req.timeout = o.timeout;
            req.connect_timeout = o.connect_timeout;
            req.max_body = std::size_t(256) << 10;
            aws::sigv4_options so;
            so.region = o.region;
            so.service = "autoscaling";
            if (auto s = aws::sign_v4(req, *c, so, o.clock.wall_now()); !s) {
                error e = std::move(s).error();
                e.message = what + ": " + e.message;
                return e;
            }
            auto r = send(req);
            if (!r) {
                error e = std::move(r).error();
                if (e.code == errc::cancelled) return e;
                e.message = what + ": " + e.message;
                if (e.url.empty()) e.url = o.endpoint;
                network = true;
                return e;
            }
            if (r->status >= 200 && r->status < 300) {
                if (o.log.enabled(log_level::debug)) o.log(log_level::debug, what + ": done", o.endpoint);
                return {};
            }
            answered = true;
            const auto ae = aws::parse_error_response(r->body);
            error e(errc::http_status,
                    what + ": " + std::to_string(r->status) + " " +
                        (ae ? ae->code + (ae->message.empty() ? "" : ": " + ae->message) : std::string("(no ErrorResponse)")),
                    r->status);
            e.url = o.endpoint;
            code = ae ? ae->code : std::string();
            if ((code == "ExpiredToken" || code == "ExpiredTokenException") && !refreshed) {
                refreshed = true;
                if (o.log.enabled(log_level::info)) o.log(log_level::info, e.describe() + ": reading the credentials again", o.endpoint);
                continue;
            }
            return e;
        }
    };
    // Auto Scaling's rules: the network, 429 and 5xx, and its throttling codes, which come on a 400.
    auto retryable = [&](const error& e) {
        if (network) return true;
        return answered && (e.http_status >= 500 || e.http_status == 429 || code == "Throttling" ||
                            code == "ThrottlingException" || code == "RequestLimitExceeded");
    };
    auto r = policy.run(attempt, sleep, o.log, [] { return std::chrono::milliseconds(0); }, retryable);
    if (!r && r.error().code == errc::cancelled && r.error().message == retry_policy::cancelled_message)
        return error(errc::cancelled, what + ": " + r.error().message);
    return r;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
