// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/aws/endpoint.hpp>
#include <forewarn/azure/endpoint.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/gce/endpoint.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
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
};

/// What detect_cloud() found, and why each probe said no.
struct detection {
    /// The service that answers here: azure, gce, aws, or none. When several answer (an
    /// emulator of them all), the first of azure, gce, aws.
    cloud found = cloud::none;
    bool azure = false;  ///< Azure IMDS answered as itself
    bool gce = false;    ///< the GCE metadata server answered as itself
    bool aws = false;    ///< AWS IMDS gave an IMDSv2 session token
    error azure_error;   ///< why the Azure probe said no (meaningful when !azure)
    error gce_error;     ///< why the GCE probe said no (meaningful when !gce)
    error aws_error;     ///< why the AWS probe said no (meaningful when !aws)
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
    http_request req;
    req.url = base + std::string(azure_probe_path);
    req.headers.push_back({"Metadata", "true"});
    req.timeout = timeout;
    req.connect_timeout = timeout;
    req.max_body = std::size_t(256) << 10;
    auto r = t.send(req);
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
    http_request req;
    req.url = base + std::string(gce::root_path);
    req.headers.push_back({"Metadata-Flavor", "Google"});
    req.timeout = timeout;
    req.connect_timeout = timeout;
    req.max_body = std::size_t(256) << 10;
    auto r = t.send(req);
    if (!r) return std::move(r).error();
    if (!gce_has_google_flavor(*r))
        return error(errc::not_metadata_server, "no GCE metadata server here: no 'Metadata-Flavor: Google' header",
                     r->status);
    if (r->status != 200)
        return error(errc::not_metadata_server, "no GCE metadata server here: HTTP " + std::to_string(r->status),
                     r->status);
    return {};
}

// AWS answers the IMDSv2 token request (PUT with a TTL header) with 200 and a token; Azure and
// GCE refuse it (GCE with its flavor header, which rules it out too).
template <class Transport>
result<void> probe_aws(Transport& t, const std::string& base, std::chrono::milliseconds timeout) {
    http_request req;
    req.method = http_method::put;
    req.url = base + "/latest/api/token";
    req.headers.push_back({"X-aws-ec2-metadata-token-ttl-seconds", "60"});
    req.timeout = timeout;
    req.connect_timeout = timeout;
    req.max_body = std::size_t(4) << 10;
    auto r = t.send(req);
    if (!r) return std::move(r).error();
    if (gce_has_google_flavor(*r))
        return error(errc::not_metadata_server, "the GCE metadata server answered at the AWS endpoint", r->status);
    if (r->status != 200)
        return error(errc::not_metadata_server, "no AWS IMDSv2 here: HTTP " + std::to_string(r->status), r->status);
    const auto token = trim(r->body);
    bool printable = !token.empty();
    for (const char c : token) printable = printable && static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7F;
    if (!printable) return error(errc::not_metadata_server, "no AWS IMDSv2 here: the answer is not a session token", 200);
    return {};
}

}  // namespace detail

/**
 * Which metadata service answers here: Azure IMDS, the GCE metadata server, AWS IMDS, or none.
 * All are probed at once, each on its own copy of `transport`, and each must identify itself
 * (GCE by its `Metadata-Flavor: Google` header, Azure by a 200 JSON answer to `Metadata: true`,
 * AWS by a session token for an IMDSv2 token request). Returns
 * within `options.timeout` (plus the time a transport takes to honour cancel()) even when
 * nothing answers; an error only for a malformed endpoint option.
 *
 * @code
 * auto found = forewarn::detect_cloud();
 * if (found && found->found == forewarn::cloud::gce) { ... }
 * @endcode
 */
template <class Transport = default_transport>
result<detection> detect_cloud(const detect_options& options = {}, Transport transport = Transport()) {
    static_assert(is_transport_v<Transport>, "Transport must satisfy forewarn::is_transport");
    auto azure_base = detail::azure_resolve_endpoint(options.azure_endpoint, "detect_options::azure_endpoint");
    if (!azure_base) return std::move(azure_base).error();
    auto gce_base = detail::gce_resolve_endpoint(options.gce_endpoint, gce::default_ip_endpoint, "detect_options::gce_endpoint");
    if (!gce_base) return std::move(gce_base).error();
    auto aws_base = detail::aws_resolve_endpoint(options.aws_endpoint, "detect_options::aws_endpoint", false);
    if (!aws_base) return std::move(aws_base).error();

    detection out;
    out.azure_error = error(errc::cancelled, "not probed");
    out.gce_error = error(errc::cancelled, "not probed");
    out.aws_error = error(errc::cancelled, "not probed");
    const bool aws_disabled = detail::aws_metadata_disabled();
    if (aws_disabled) out.aws_error = error(errc::unsupported, "not probed: AWS_EC2_METADATA_DISABLED is true");
    Transport transports[3] = {transport, transport, std::move(transport)};
    std::mutex m;
    std::condition_variable cv;
    int running = 0;

    auto run_probe = [&](int index) {
        result<void> r = index == 0   ? detail::probe_azure(transports[0], *azure_base, options.timeout)
                         : index == 1 ? detail::probe_gce(transports[1], gce_base->base, options.timeout)
                                      : detail::probe_aws(transports[2], *aws_base, options.timeout);
        std::lock_guard<std::mutex> lock(m);
        bool& ok = index == 0 ? out.azure : index == 1 ? out.gce : out.aws;
        error& why = index == 0 ? out.azure_error : index == 1 ? out.gce_error : out.aws_error;
        ok = r.has_value();
        why = r ? error() : r.error();
        --running;
        cv.notify_all();
    };

    std::thread threads[3];
    const bool wanted[3] = {options.probe_azure, options.probe_gce, options.probe_aws && !aws_disabled};
    for (int i = 0; i < 3; ++i) {
        if (!wanted[i]) continue;
        {
            std::lock_guard<std::mutex> lock(m);
            ++running;
        }
        try {
            threads[i] = std::thread(run_probe, i);
        } catch (const std::exception& ex) {
            {
                std::lock_guard<std::mutex> lock(m);
                --running;
            }
            for (auto& t : transports) t.cancel();
            for (auto& t : threads)
                if (t.joinable()) t.join();
            return error(errc::transport, std::string("could not start a probe thread: ") + ex.what());
        }
    }
    {
        // The transports' own timeouts should end the probes; the deadline guards against one
        // that does not (a resolver that blocks, a server that trickles bytes).
        std::unique_lock<std::mutex> lock(m);
        if (!cv.wait_for(lock, options.timeout, [&] { return running == 0; })) {
            lock.unlock();
            for (auto& t : transports) t.cancel();
        }
    }
    for (auto& t : threads)
        if (t.joinable()) t.join();

    for (auto* why : {&out.azure_error, &out.gce_error, &out.aws_error})
        if (why->code == errc::cancelled && why->message != "not probed")
            *why = error(errc::timeout, "no answer within " + std::to_string(options.timeout.count()) + " ms");
    if (out.azure)
        out.found = cloud::azure;
    else if (out.gce)
        out.found = cloud::gce;
    else if (out.aws)
        out.found = cloud::aws;
    return out;
}

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detect-inl.hpp>
#endif
