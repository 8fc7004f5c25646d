// SPDX-License-Identifier: MIT
#include "api.hpp"

#include "../json.hpp"

#include <forewarn/transport/curl.hpp>

#include <algorithm>
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

bool retried(int status) { return status == 429 || (status >= 500 && status <= 504); }

bool retried(const error& e) {
    return e.code == errc::transport || e.code == errc::timeout;
}

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
    const int attempts = std::max(1, options_.attempts);
    auto pause = options_.backoff;
    bool renewed = false;
    for (int attempt = 1;; ++attempt) {
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
            --attempt;
            continue;
        }
        const bool again = r ? retried(r->status) && !(answer_429 && r->status == 429) : retried(r.error());
        if (!again || attempt >= attempts) {
            if (!r) return error(r.error().code, std::string(forewarn::to_string(method)) + " " + path + ": " + r.error().message);
            return api_answer{r->status, std::move(r->body)};
        }
        auto wait = pause;
        if (r) {
            // Retry-After in seconds, as the API server sends with a 429, within the same cap.
            if (const std::string* after = r->header("Retry-After")) {
                long seconds = 0;
                bool digits = !after->empty() && after->size() < 4;
                for (char ch : *after) digits = digits && ch >= '0' && ch <= '9';
                if (digits) seconds = std::stol(*after);
                if (digits) wait = std::min<std::chrono::milliseconds>(std::chrono::seconds(seconds), std::chrono::seconds(4));
            }
        }
        if (!sleep_.sleep_for(wait)) return error(errc::cancelled, std::string(forewarn::to_string(method)) + " " + path + ": stopped");
        pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::seconds(4));
    }
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
