// SPDX-License-Identifier: MIT
#include "api.hpp"

#include "../json.hpp"

#include <forewarn/transport/curl.hpp>

#include <algorithm>
#include <optional>
#include <utility>

namespace watch::kubernetes {

namespace {

forewarn::curl_transport_options transport_options(const connection& c) {
    forewarn::curl_transport_options t;
    t.user_agent = "forewarn-watch/" FOREWARN_VERSION_STRING;
    t.ca_file = c.ca_file;
    t.client_cert = c.client_cert;
    t.client_key = c.client_key;
    return t;
}

/// The statuses the API server asks to be sent again (the rest are the caller's to read).
bool retried(int status) { return status == 429 || (status >= 500 && status <= 504); }

}  // namespace

api_transport curl_transport_for(const connection& c) { return api_transport::of(forewarn::curl_transport(transport_options(c))); }

api_client::api_client(connection c, api_options o) : api_client(c, curl_transport_for(c), std::move(o)) {}

api_client::api_client(connection c, api_transport t, api_options o)
    : connection_(std::move(c)), options_(std::move(o)), transport_(std::move(t)), sleep_(options_.clock) {}

void api_client::cancel() noexcept {
    sleep_.interrupt();
    transport_.cancel();
}

result<api_answer> api_client::call(http_method method, const std::string& path, const std::string& body,
                                    std::string_view content_type, bool answer_429) {
    std::lock_guard<std::mutex> lock(m_);
    // 429 and 500-504 (each turned into an error below, the rest are answers) and a failed
    // connection or a timeout tried again up to the attempts, the pause doubled from `backoff` to
    // at most 4 s, or the 429's Retry-After within the same cap (sender_retries; a drain's
    // deadline bounds its calls).
    const forewarn::retry_policy policy = sender_retries(options_.attempts, options_.backoff, std::chrono::seconds(4));
    const std::string what = std::string(forewarn::to_string(method)) + " " + path;
    bool renewed = false;
    std::optional<api_answer> retried_answer;  // the last answer a retry was asked for after
    std::chrono::milliseconds server_wait{0};  // its Retry-After
    auto attempt = [&]() -> result<api_answer> {
        retried_answer.reset();
        server_wait = std::chrono::milliseconds(0);
        for (;;) {
            forewarn::http_request req;
            req.method = method;
            req.url = connection_.server + path;
            req.timeout = options_.timeout;
            req.connect_timeout = options_.connect_timeout;
            req.max_body = options_.max_body;
            req.headers.push_back({"Accept", "application/json"});
            auto token = connection_.token.current();
            if (!token) return std::move(token).error();
            if (!token->empty()) req.headers.push_back({"Authorization", "Bearer " + *token});
            if (!content_type.empty()) req.headers.push_back({"Content-Type", std::string(content_type)});
            req.body = body;
            ++requests_;
            auto r = transport_.send(req);
            if (r && r->status == 401 && !renewed && connection_.token.from_file()) {
                renewed = true;  // a rotated token: read the file again, once, and send again
                if (auto t = connection_.token.reload(); !t) return std::move(t).error();
                continue;
            }
            if (!r) return error(r.error().code, what + ": " + r.error().message);  // retried as the policy says
            if (!retried(r->status) || (answer_429 && r->status == 429)) return api_answer{r->status, std::move(r->body)};
            // Retry-After in seconds, as the API server sends with a 429.
            if (const std::string* after = r->header("Retry-After")) {
                bool digits = !after->empty() && after->size() < 4;
                for (char ch : *after) digits = digits && ch >= '0' && ch <= '9';
                if (digits) server_wait = std::chrono::seconds(std::stol(*after));
            }
            const int status = r->status;
            retried_answer = api_answer{status, std::move(r->body)};
            return error(errc::http_status, what + ": " + std::to_string(status), status);
        }
    };
    auto answer = policy.run(attempt, sleep_, {}, [&] { return server_wait; });
    if (answer) return answer;
    if (answer.error().code == errc::http_status && retried_answer) return std::move(*retried_answer);  // retries spent: the last answer
    if (answer.error().code == errc::cancelled && answer.error().message == forewarn::retry_policy::cancelled_message)
        return error(errc::cancelled, what + ": stopped");  // during a pause
    return answer;
}

std::string status_message(std::string_view body) {
    const auto doc = parse_json(body);
    return doc ? json_string_member(*doc, "message") : std::string();
}

error answer_error(std::string_view what, const api_answer& a) {
    std::string message = std::string(what) + ": " + std::to_string(a.status);
    const std::string said = status_message(a.body);
    if (!said.empty()) message += ": " + said;
    const errc code = a.status == 404 ? errc::not_found : errc::http_status;
    return error(code, std::move(message), a.status);
}

}  // namespace watch::kubernetes
