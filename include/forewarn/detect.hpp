// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/alibaba/metadata_client.hpp>
#include <forewarn/aws/endpoint.hpp>
#include <forewarn/azure/endpoint.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/latest_metadata.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/gce/endpoint.hpp>
#include <forewarn/result.hpp>
#include <forewarn/tencent/metadata_client.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

FOREWARN_BEGIN_NAMESPACE

/// Options of detect_cloud(). Plain struct.
struct detect_options {
    /// Azure IMDS root. Empty: $FOREWARN_AZURE_ENDPOINT, else $SCHEDULEDEVENTSIP, else http://169.254.169.254.
    std::string azure_endpoint;
    /// GCE metadata root. Empty: $FOREWARN_GCE_ENDPOINT, else $GCE_METADATA_HOST, else
    /// http://169.254.169.254 (the IP, not the name: off-cloud, a DNS lookup could outlast the timeout).
    std::string gce_endpoint;
    /// AWS instance metadata root. Empty: $AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254.
    std::string aws_endpoint;
    /// The whole detection, every probe together; each probe's connect and total timeout.
    std::chrono::milliseconds timeout{1000};
    bool probe_azure = true;
    bool probe_gce = true;
    bool probe_aws = true;  ///< skipped (as not found) when $AWS_EC2_METADATA_DISABLED is true
    /// Alibaba ECS metadata root. Empty: $FOREWARN_ALIBABA_ENDPOINT, else http://100.100.100.200.
    std::string alibaba_endpoint;
    /// Tencent CVM metadata root. Empty: $FOREWARN_TENCENT_ENDPOINT, else http://metadata.tencentyun.com.
    std::string tencent_endpoint;
    bool probe_alibaba = true;
    bool probe_tencent = true;
};

/// What detect_cloud() found, and why each probe said no.
struct detection {
    /// The service that answers here: azure, gce, aws, alibaba, tencent, or none. When several
    /// answer (an emulator of them all), the first of them in that order.
    cloud found = cloud::none;
    bool azure = false;  ///< Azure IMDS answered as itself
    bool gce = false;    ///< the GCE metadata server answered as itself
    bool aws = false;    ///< AWS IMDS gave an IMDSv2 session token
    error azure_error;   ///< why the Azure probe said no (meaningful when !azure)
    error gce_error;     ///< why the GCE probe said no (meaningful when !gce)
    error aws_error;     ///< why the AWS probe said no (meaningful when !aws)
    bool alibaba = false;  ///< Alibaba's metadata gave a session token to its own header
    bool tencent = false;  ///< Tencent's metadata gave an instance id of its form ("ins-...")
    error alibaba_error;   ///< why the Alibaba probe said no (meaningful when !alibaba)
    error tencent_error;   ///< why the Tencent probe said no (meaningful when !tencent)
};

namespace detail {

/// Azure's instance metadata, the same request the Azure client's identity() makes.
inline constexpr std::string_view azure_probe_path = "/metadata/instance/compute?api-version=2021-02-01";

/// What Azure's probe answer must be: a JSON object.
result<void> azure_probe_body(std::string_view body);

// Azure answers 200 with a JSON object; it sends no header of its own that a client could check,
// so the body must be what IMDS sends. A GCE server refuses the request (no flavor header).
template <class Transport>
result<void> probe_azure(Transport& t, const std::string& base, std::chrono::milliseconds timeout) {
    auto r = t.send(metadata_request(http_method::get, base + std::string(azure_probe_path), timeout, timeout,
                                   std::size_t(256) << 10,
                                   {{std::string(azure::metadata_header), std::string(azure::metadata_header_value)}}));
    if (!r) return std::move(r).error();
    if (gce_has_google_flavor(*r))
        return error(errc::not_metadata_server, "the GCE metadata server answered at the Azure endpoint", r->status);
    if (r->status != 200)
        return error(errc::not_metadata_server, "no Azure IMDS here: HTTP " + std::to_string(r->status), r->status);
    if (const std::string* type = r->header("Content-Type"); type && type->find("json") == std::string::npos)
        return error(errc::not_metadata_server, "no Azure IMDS here: the answer is " + *type + ", not JSON", 200);
    return azure_probe_body(r->body);
}

// GCE identifies itself: the root answers 200 with `Metadata-Flavor: Google`.
template <class Transport>
result<void> probe_gce(Transport& t, const std::string& base, std::chrono::milliseconds timeout) {
    auto r = t.send(metadata_request(http_method::get, base + std::string(gce::root_path), timeout, timeout,
                                   std::size_t(256) << 10, {{std::string(gce::flavor_header), std::string(gce::flavor)}}));
    if (!r) return std::move(r).error();
    if (!gce_has_google_flavor(*r))
        return error(errc::not_metadata_server, "no GCE metadata server here: no 'Metadata-Flavor: Google' header",
                     r->status);
    if (r->status != 200)
        return error(errc::not_metadata_server, "no GCE metadata server here: HTTP " + std::to_string(r->status),
                     r->status);
    return {};
}

// A token PUT with `ttl_header` answered with 200 and a token: AWS's IMDSv2 and Alibaba's hardened
// mode, each of which refuses the other's header (Azure and GCE refuse both; GCE's flavor header
// rules it out too).
template <class Transport>
result<void> probe_token(Transport& t, const std::string& base, std::chrono::milliseconds timeout, std::string_view path,
                         std::string_view ttl_header, const char* service) {
    auto r = t.send(metadata_request(http_method::put, base + std::string(path), timeout, timeout, std::size_t(4) << 10,
                                   {{std::string(ttl_header), "60"}}));
    if (!r) return std::move(r).error();
    const std::string no = std::string("no ") + service + " here: ";
    if (gce_has_google_flavor(*r)) return error(errc::not_metadata_server, no + "the GCE metadata server answered", r->status);
    if (r->status != 200) return error(errc::not_metadata_server, no + "HTTP " + std::to_string(r->status), r->status);
    if (!latest_metadata::acceptable(trim(r->body)))
        return error(errc::not_metadata_server, no + "the answer is not a session token", 200);
    return {};
}
template <class Transport>
result<void> probe_aws(Transport& t, const std::string& base, std::chrono::milliseconds timeout) {
    return probe_token(t, base, timeout, aws::token_path, aws::token_ttl_header, "AWS IMDSv2");
}
template <class Transport>
result<void> probe_alibaba(Transport& t, const std::string& base, std::chrono::milliseconds timeout) {
    return probe_token(t, base, timeout, alibaba::token_path, alibaba::token_ttl_header, "Alibaba ECS metadata");
}

// Tencent answers its instance id without a token, "ins-" and letters or digits (AWS's and
// Alibaba's ids start "i-").
template <class Transport>
result<void> probe_tencent(Transport& t, const std::string& base, std::chrono::milliseconds timeout) {
    auto r = t.send(metadata_request(http_method::get, base + std::string(tencent::instance_id_path), timeout, timeout,
                                   std::size_t(4) << 10));
    if (!r) return std::move(r).error();
    if (r->status != 200 || gce_has_google_flavor(*r))
        return error(errc::not_metadata_server, "no Tencent CVM metadata here: HTTP " + std::to_string(r->status), r->status);
    const auto id = trim(r->body);
    constexpr std::size_t prefix = tencent::instance_id_prefix.size();
    bool shaped = id.size() > prefix && id.size() <= 64 && id.substr(0, prefix) == tencent::instance_id_prefix;
    for (const char c : id.substr((std::min)(id.size(), prefix)))
        shaped = shaped && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
    if (!shaped) return error(errc::not_metadata_server, "no Tencent CVM metadata here: not an instance id of the form ins-...", 200);
    return {};
}

}  // namespace detail

/**
 * Which metadata service answers here: Azure IMDS, the GCE metadata server, AWS IMDS, Alibaba
 * ECS's or Tencent CVM's metadata, or none. All are probed at once, each on its own copy of
 * `transport`, and each must identify itself (GCE by its `Metadata-Flavor: Google` header, Azure
 * by a 200 JSON answer to `Metadata: true`, AWS by a session token for an IMDSv2 token request,
 * Alibaba by one for its own token header, Tencent by an instance id of its form). Returns as
 * soon as a service has answered, every service preferred to it (in that order) has said no and
 * Azure's, GCE's and AWS's probes are over, so that on those clouds the probes of Alibaba's and
 * Tencent's addresses (which do not answer there) are not waited for; else within
 * `options.timeout` (plus the time a transport takes to honour cancel()) even when nothing
 * answers; an error only for a malformed endpoint option.
 *
 * @code
 * auto found = forewarn::detect_cloud();
 * if (found && found->found == forewarn::cloud::gce) { ... }
 * @endcode
 */
template <class Transport = default_transport>
result<detection> detect_cloud(const detect_options& options = {}, Transport transport = Transport()) {
    static_assert(is_transport_v<Transport>, "Transport must satisfy forewarn::is_transport");
    constexpr int n = 5;  // in the order of preference: azure, gce, aws, alibaba, tencent
    std::string bases[n];
    {
        result<std::string> resolved[n] = {
            detail::azure_resolve_endpoint(options.azure_endpoint, "detect_options::azure_endpoint"),
            error(),  // GCE's, below
            detail::aws_resolve_endpoint(options.aws_endpoint, "detect_options::aws_endpoint", false),
            detail::resolve_endpoint(options.alibaba_endpoint, "detect_options::alibaba_endpoint", {"FOREWARN_ALIBABA_ENDPOINT"},
                                     alibaba::default_endpoint),
            detail::resolve_endpoint(options.tencent_endpoint, "detect_options::tencent_endpoint", {"FOREWARN_TENCENT_ENDPOINT"},
                                     tencent::default_endpoint)};
        auto gce = detail::gce_resolve_endpoint(options.gce_endpoint, gce::default_ip_endpoint, "detect_options::gce_endpoint");
        if (gce) resolved[1] = std::move(gce->base);
        else resolved[1] = std::move(gce).error();
        for (int i = 0; i < n; ++i) {
            if (!resolved[i]) return std::move(resolved[i]).error();
            bases[i] = std::move(*resolved[i]);
        }
    }

    // What the probes share; a probe not waited for (below) keeps it alive until it ends.
    struct board {
        std::mutex m;
        std::condition_variable cv;
        std::optional<Transport> transports[n];
        std::string bases[n];
        std::chrono::milliseconds timeout{};
        bool done[n] = {}, ok[n] = {}, ended[n] = {};  // ended: its thread has its answer
        error why[n];
    };
    auto b = std::make_shared<board>();
    b->timeout = options.timeout;
    for (auto& w : b->why) w = error(errc::cancelled, "not probed");
    const bool aws_disabled = detail::aws_metadata_disabled();
    if (aws_disabled) b->why[2] = error(errc::unsupported, "not probed: AWS_EC2_METADATA_DISABLED is true");
    const bool wanted[n] = {options.probe_azure, options.probe_gce, options.probe_aws && !aws_disabled,
                            options.probe_alibaba, options.probe_tencent};
    for (int i = 0; i < n; ++i) {
        b->done[i] = !wanted[i];
        b->bases[i] = std::move(bases[i]);
        if (wanted[i]) b->transports[i].emplace(transport);
    }

    auto run_probe = [b](int i) {
        using probe_fn = result<void> (*)(Transport&, const std::string&, std::chrono::milliseconds);
        static constexpr probe_fn probes[n] = {&detail::probe_azure<Transport>, &detail::probe_gce<Transport>,
                                               &detail::probe_aws<Transport>, &detail::probe_alibaba<Transport>,
                                               &detail::probe_tencent<Transport>};
        result<void> r = probes[i](*b->transports[i], b->bases[i], b->timeout);
        std::lock_guard<std::mutex> lock(b->m);
        b->ended[i] = true;
        if (b->done[i]) return;  // not waited for: what it says came too late
        b->ok[i] = r.has_value();
        b->why[i] = r ? error() : r.error();
        b->done[i] = true;
        b->cv.notify_all();
    };
    // Decided: every probe has answered, or one said yes and every probe preferred to it, and
    // Azure's, GCE's and AWS's (whose flags callers read), have answered. Alibaba's and Tencent's
    // addresses do not answer elsewhere (a DNS lookup of Tencent's name may wait out the
    // resolver's timeout): their probes are not waited for then.
    auto decided = [&b] {
        for (int i = 0; i < n; ++i) {
            if (!b->done[i]) return false;
            if (!b->ok[i]) continue;
            for (int j = i + 1; j < 3; ++j)
                if (!b->done[j]) return false;
            return true;
        }
        return true;
    };

    std::thread threads[n];
    for (int i = 0; i < n; ++i) {
        if (!wanted[i]) continue;
        try {
            threads[i] = std::thread(run_probe, i);
        } catch (const std::exception& ex) {
            for (auto& t : b->transports)
                if (t) t->cancel();
            for (auto& t : threads)
                if (t.joinable()) t.join();
            return error(errc::transport, std::string("could not start a probe thread: ") + ex.what());
        }
    }
    bool left[n] = {};  // probes not waited for: left to end on their own threads, by their timeout
    {
        // The transports' own timeouts should end the probes; the deadline guards against one
        // that does not (a resolver that blocks, a server that trickles bytes).
        std::unique_lock<std::mutex> lock(b->m);
        const bool early = b->cv.wait_for(lock, options.timeout, decided);
        for (int i = 0; i < n; ++i) {
            if (b->done[i]) continue;
            if (!early) {
                b->transports[i]->cancel();
                continue;
            }
            // Not cancelled: a test transport's copies may share one cancel flag (the caller's
            // transport would stay cancelled); its own timeout ends it.
            b->why[i] = error(errc::cancelled, "not waited for: a service preferred to it answered");
            b->done[i] = true;
            left[i] = !b->ended[i];
        }
    }
    for (int i = 0; i < n; ++i) {
        if (!threads[i].joinable()) continue;
        if (left[i])
            threads[i].detach();  // it holds the board (its own copy of the transport) until it ends
        else
            threads[i].join();
    }

    detection out;
    std::lock_guard<std::mutex> lock(b->m);
    bool* ok[n] = {&out.azure, &out.gce, &out.aws, &out.alibaba, &out.tencent};
    error* why[n] = {&out.azure_error, &out.gce_error, &out.aws_error, &out.alibaba_error, &out.tencent_error};
    const cloud clouds[n] = {cloud::azure, cloud::gce, cloud::aws, cloud::alibaba, cloud::tencent};
    for (int i = 0; i < n; ++i) {
        *ok[i] = b->ok[i];
        *why[i] = b->why[i];
        if (why[i]->code != errc::cancelled || why[i]->message == "not probed" || why[i]->message.rfind("not waited", 0) == 0)
            continue;
        *why[i] = error(errc::timeout, "no answer within " + std::to_string(options.timeout.count()) + " ms");
    }
    for (int i = 0; i < n && out.found == cloud::none; ++i)
        if (*ok[i]) out.found = clouds[i];
    return out;
}

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detect-inl.hpp>
#endif
