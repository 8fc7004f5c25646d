// SPDX-License-Identifier: MIT
#pragma once

// The Azure Scheduled Events client. It names its default transport only through fwd.hpp: include
// <forewarn/transport/default.hpp> (or <forewarn/forewarn.hpp>) to use it, so
// that a program with its own transport never pulls in libcurl.

#include <forewarn/azure/client_options.hpp>
#include <forewarn/azure/endpoint.hpp>
#include <forewarn/azure/parse.hpp>
#include <forewarn/detail/client_base.hpp>  // with detail/http.hpp, result.hpp, transport.hpp
#include <forewarn/detail/strings.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/poller/notice_source.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace azure {

/**
 * Azure Scheduled Events over a Transport, a notice source: next() gives the document once a
 * poll interval, approve() starts events, identity() says who this VM is. Every request carries
 * `Metadata: true` (and never X-Forwarded-For, which IMDS rejects), takes a token from the
 * per-host rate limit, and is retried under Azure's rules with a backoff that cancel() cuts
 * short; every wait is on `client_options::clock`. One thread uses a client at a time; wake(),
 * cancel() and reset() may come from any thread.
 *
 * @code
 * #include <forewarn/forewarn.hpp>
 * forewarn::azure::scheduled_events_client client;  // http://169.254.169.254, 2020-07-01
 * if (auto doc = client.fetch())
 *     for (const auto& e : doc->events) std::cout << e.id << ' ' << e.raw_type << '\n';
 * else
 *     std::cerr << doc.error().describe() << '\n';
 * @endcode
 */
template <class Transport = default_transport>
class basic_scheduled_events_client
    : public forewarn::detail::client_base<basic_scheduled_events_client<Transport>, Transport, instance_identity, cloud::azure,
                                           client_options> {
    using base_type = typename basic_scheduled_events_client::client_base;
    friend base_type;

public:
    explicit basic_scheduled_events_client(client_options options = {}, Transport transport = Transport());
    FOREWARN_CLIENT_MOVABLE(basic_scheduled_events_client);

    /// The full Scheduled Events URL, api-version included.
    std::string url() const { return this->endpoint_ + "/metadata/scheduledevents?api-version=" + this->options_.api_version; }
    /// The incarnation of the last document fetched, if any.
    const std::optional<std::string>& last_incarnation() const noexcept { return last_incarnation_; }

    /// Azure takes approvals: true.
    bool can_approve() const noexcept { return true; }

    // next() (every `poll_interval`) and fetch() come from the base: one GET of the document. Only
    // a 200 with a well-formed document succeeds; 400 is errc::http_status (missing header or
    // api-version), 404 errc::not_found, any other status errc::http_status with it, after the
    // retries Azure's rules allow. An error's message carries what the service said.

    /**
     * Approves (starts) events: one POST with every id; any 2xx is success. An empty list sends
     * nothing. An approved event starts for every VM in its Resources (leader.hpp). Approving is
     * idempotent on Azure's side (200 even when another VM approved already), so retries are
     * safe. On the 2017-03-01 preview the body carries the last fetched DocumentIncarnation; when
     * there is none yet, a fetch() comes first.
     */
    result<void> approve(const std::vector<std::string>& ids);

    // identity() comes from the base: the instance metadata (compute), asked once and cached, or
    // options().self_name.

private:
    static constexpr std::size_t key_count = 1;
    static constexpr bool may_hang = false;

    static client_options settled(client_options o) {
        o.poll_interval = (std::max)(o.poll_interval, std::chrono::milliseconds(200));
        return o;
    }
    static std::chrono::milliseconds error_pause(const client_options& o) { return o.poll_interval; }

    forewarn::detail::key_plan plan(std::size_t) const { return forewarn::detail::key_plan::poll(this->options_.poll_interval); }
    std::string event_owner() const { return {}; }  // Azure's events name their VMs

    // One exchange with retries on the caller's lane. A 200 is an answer (any 2xx when
    // `any_2xx`: an approval has no body to read); the caller reads the body.
    result<http_response> request(http_method method, std::string url, std::string body, std::string_view what,
                                  bool any_2xx = false) {
        const client_options& o = this->options_;
        http_request req = forewarn::detail::metadata_request(method, std::move(url), answered_ ? o.poll_timeout : o.first_call_timeout,
                                                              o.connect_timeout, o.max_body);
        req.headers.push_back({std::string(metadata_header), std::string(metadata_header_value)});
        if (method == http_method::post) req.headers.push_back({"Content-Type", "application/json"});
        req.body = std::move(body);
        return this->x_.send(0, req, [&](http_response& r) -> result<http_response> {
            if (r.status != 200 && !(any_2xx && r.status > 200 && r.status <= 299))
                return forewarn::detail::azure_status_error(r.status, what, r.body, o.api_version).at_url(req.url);
            answered_ = true;
            return std::move(r);
        });
    }

    // The one key: the document, read plainly (Scheduled Events cannot hang).
    result<forewarn::detail::key_reading> read_key(std::size_t, std::size_t, std::optional<std::chrono::seconds>) {
        auto answer = request(http_method::get, url(), {}, "GET scheduledevents");
        if (!answer) return std::move(answer).error();
        auto doc = parse_document(answer->body, this->options_.api_version);
        if (!doc) return std::move(doc).error().at_url(url());
        return forewarn::detail::key_reading{std::move(doc->events), std::move(doc->incarnation),
                                             forewarn::detail::service_time_of(*answer)};
    }

    void finish(document& doc) { last_incarnation_ = doc.incarnation; }
    std::string key_url(std::size_t) const { return url(); }
    result<instance_identity> read_identity();

    std::optional<std::string> last_incarnation_;
    bool answered_ = false;
};

template <class Transport>
FOREWARN_COLD basic_scheduled_events_client<Transport>::basic_scheduled_events_client(client_options options, Transport transport)
    : base_type(std::move(options), std::move(transport), retry_rules::azure) {
    if (this->resolved(forewarn::detail::azure_resolve_endpoint(this->options_.endpoint, "azure::client_options::endpoint")))
        if (auto v = validate_api_version(this->options_.api_version); !v) this->x_.set_config_error(std::move(v).error());
}

template <class Transport>
FOREWARN_COLD result<void> basic_scheduled_events_client<Transport>::approve(const std::vector<std::string>& ids) {
    if (auto v = this->validate(); !v) return v;
    if (ids.empty()) return {};
    std::optional<std::string> incarnation;
    if (is_preview_api_version(this->options_.api_version)) {
        if (!last_incarnation_) {
            auto doc = this->fetch();
            if (!doc) return std::move(doc).error();
        }
        incarnation = last_incarnation_;
    }
    auto body = write_start_requests(ids, incarnation);
    if (!body) return std::move(body).error();
    auto answer = request(http_method::post, url(), std::move(*body), "POST StartRequests", true);
    if (!answer) {
        std::string joined;
        for (const auto& id : ids) joined += (joined.empty() ? "" : ",") + id;
        return std::move(answer).error().for_event(joined);
    }
    return {};
}

template <class Transport>
FOREWARN_COLD result<instance_identity> basic_scheduled_events_client<Transport>::read_identity() {
    const std::string u = detail::cat({this->endpoint_, "/metadata/instance/compute?api-version=", instance_api_version});
    auto answer = request(http_method::get, u, {}, "GET instance/compute");
    if (!answer) return std::move(answer).error();
    auto id = forewarn::detail::azure_parse_instance_identity(answer->body);
    if (!id) return std::move(id).error().at_url(u);
    return id;
}

FOREWARN_CLIENT_MOVABLE_DEFAULTS(basic_scheduled_events_client);

/// The client over the default transport (WinHTTP on Windows, libcurl elsewhere). Include
/// <forewarn/transport/default.hpp> to use it.
using scheduled_events_client = basic_scheduled_events_client<>;

}  // namespace azure
FOREWARN_END_NAMESPACE

#define FOREWARN_AZURE_CLIENT_DEFINED
#include <forewarn/detail/extern_templates.hpp>
