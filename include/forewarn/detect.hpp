// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/azure/endpoint.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
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
    /// The whole detection, both probes together; each probe's connect and total timeout.
    std::chrono::milliseconds timeout{1000};
    bool probe_azure = true;
    bool probe_gce = true;
};

/// What detect_cloud() found, and why each probe said no.
struct detection {
    /// The service that answers here: azure, gce, or none. When both answer (an emulator of
    /// both), azure.
    cloud found = cloud::none;
    bool azure = false;  ///< Azure IMDS answered as itself
    bool gce = false;    ///< the GCE metadata server answered as itself
    error azure_error;   ///< why the Azure probe said no (meaningful when !azure)
    error gce_error;     ///< why the GCE probe said no (meaningful when !gce)
};

namespace detail {

/// Azure's instance metadata, the same request the Azure client's identity() makes.
inline constexpr std::string_view azure_probe_path = "/metadata/instance/compute?api-version=2021-02-01";

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
    auto doc = parse_json(r->body);
    if (!doc) return error(errc::not_metadata_server, "no Azure IMDS here: " + doc.error().describe(), 200);
    if (!doc->IsObject()) return error(errc::not_metadata_server, "no Azure IMDS here: the answer is not a JSON object", 200);
    return {};
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

}  // namespace detail

/**
 * Which metadata service answers here: Azure IMDS, the GCE metadata server, or none. Both are
 * probed at once, each on its own copy of `transport`, and each must identify itself (GCE by its
 * `Metadata-Flavor: Google` header, Azure by a 200 JSON answer to `Metadata: true`). Returns
 * within `options.timeout` (plus the time a transport takes to honour cancel()) even when
 * nothing answers; an error only for a malformed endpoint option.
 *
 * @code
 * auto found = forewarn::detect_cloud();
 * if (found && found->found == forewarn::cloud::gce) { ... }
 * @endcode
 */
template <class Transport = curl_transport>
result<detection> detect_cloud(const detect_options& options = {}, Transport transport = Transport()) {
    static_assert(is_transport_v<Transport>, "Transport must satisfy forewarn::is_transport");
    auto azure_base = detail::azure_resolve_endpoint(options.azure_endpoint, "detect_options::azure_endpoint");
    if (!azure_base) return std::move(azure_base).error();
    auto gce_base = detail::gce_resolve_endpoint(options.gce_endpoint, gce::default_ip_endpoint, "detect_options::gce_endpoint");
    if (!gce_base) return std::move(gce_base).error();

    detection out;
    out.azure_error = error(errc::cancelled, "not probed");
    out.gce_error = error(errc::cancelled, "not probed");
    Transport transports[2] = {transport, std::move(transport)};
    std::mutex m;
    std::condition_variable cv;
    int running = 0;

    auto run_probe = [&](int index) {
        result<void> r = index == 0 ? detail::probe_azure(transports[0], *azure_base, options.timeout)
                                    : detail::probe_gce(transports[1], gce_base->base, options.timeout);
        std::lock_guard<std::mutex> lock(m);
        bool& ok = index == 0 ? out.azure : out.gce;
        error& why = index == 0 ? out.azure_error : out.gce_error;
        ok = r.has_value();
        why = r ? error() : r.error();
        --running;
        cv.notify_all();
    };

    std::thread threads[2];
    const bool wanted[2] = {options.probe_azure, options.probe_gce};
    for (int i = 0; i < 2; ++i) {
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

    for (auto* why : {&out.azure_error, &out.gce_error})
        if (why->code == errc::cancelled && why->message != "not probed")
            *why = error(errc::timeout, "no answer within " + std::to_string(options.timeout.count()) + " ms");
    if (out.azure)
        out.found = cloud::azure;
    else if (out.gce)
        out.found = cloud::gce;
    return out;
}

FOREWARN_END_NAMESPACE
