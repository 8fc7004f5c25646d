// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/clouds.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/latest_metadata.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <cstddef>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>  // also std::size ([iterator.range])
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

    /// The endpoint option of `c` (azure_endpoint, ...; "" for cloud::none).
    const std::string& endpoint(cloud c) const;
    /// Sets the endpoint option of `c` (nothing for cloud::none).
    void set_endpoint(cloud c, std::string url);
    /// Whether `c` is probed (probe_azure, ...; false for cloud::none).
    bool probe(cloud c) const;
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

    /// Whether `c` answered as itself (azure, gce, ...; false for cloud::none).
    bool answered(cloud c) const;
    /// Why `c`'s probe said no (azure_error, ...; meaningful when !answered(c); for cloud::none,
    /// an errc::invalid_argument).
    const error& why(cloud c) const;
};

namespace detail {

/// detect_options' and detection's members of one cloud, in the order of `clouds`.
struct detect_members {
    std::string detect_options::*endpoint;
    bool detect_options::*probe;
    bool detection::*answered;
    error detection::*why;
};
inline constexpr detect_members detect_members_of[] = {
    {&detect_options::azure_endpoint, &detect_options::probe_azure, &detection::azure, &detection::azure_error},
    {&detect_options::gce_endpoint, &detect_options::probe_gce, &detection::gce, &detection::gce_error},
    {&detect_options::aws_endpoint, &detect_options::probe_aws, &detection::aws, &detection::aws_error},
    {&detect_options::alibaba_endpoint, &detect_options::probe_alibaba, &detection::alibaba, &detection::alibaba_error},
    {&detect_options::tencent_endpoint, &detect_options::probe_tencent, &detection::tencent, &detection::tencent_error}};
static_assert(std::size(detect_members_of) == clouds.size(), "detect_options and detection have members for every cloud");

/// What a JSON probe's answer must be: a JSON object (`service`: its name in the error).
result<void> probe_json_object(std::string_view body, std::string_view service);

inline std::string no_service(const cloud_facts& f, const std::string& why) {
    return "no " + std::string(f.service_name) + " here: " + why;
}

/// One cloud's probe (`f.probe_*`), its answer recognised as `f.recognition`. Every probe but
/// GCE's refuses an answer that carries Google's flavor header (GCE's server answers anything).
template <class Transport>
result<void> probe(Transport& t, const cloud_facts& f, const std::string& base, std::chrono::milliseconds timeout) {
    http_headers headers;
    if (!f.probe_header.name.empty()) headers.push_back({std::string(f.probe_header.name), std::string(f.probe_header.value)});
    const bool page = f.recognition == probe_recognition::json_object || f.recognition == probe_recognition::echoed_header;
    auto r = t.send(metadata_request(f.probe_method, base + std::string(f.probe_path), timeout, timeout,
                                     page ? std::size_t(256) << 10 : std::size_t(4) << 10, std::move(headers)));
    if (!r) return std::move(r).error();
    const std::string status = "HTTP " + std::to_string(r->status);
    switch (f.recognition) {
    case probe_recognition::json_object:
        // A service that sends no header of its own: the body must be what it sends. A GCE server
        // refuses the request (no flavor header).
        if (gce_has_google_flavor(*r))
            return error(errc::not_metadata_server,
                         "the GCE metadata server answered at the " + std::string(f.display_name) + " endpoint", r->status);
        if (r->status != 200) return error(errc::not_metadata_server, no_service(f, status), r->status);
        if (const std::string* type = r->header("Content-Type"); type && type->find("json") == std::string::npos)
            return error(errc::not_metadata_server, no_service(f, "the answer is " + *type + ", not JSON"), 200);
        return probe_json_object(r->body, f.service_name);
    case probe_recognition::echoed_header:
        if (!gce_has_google_flavor(*r))
            return error(errc::not_metadata_server,
                         no_service(f, "no '" + std::string(f.probe_header.name) + ": " + std::string(f.probe_header.value) + "' header"),
                         r->status);
        if (r->status != 200) return error(errc::not_metadata_server, no_service(f, status), r->status);
        return {};
    case probe_recognition::session_token:
        // AWS's IMDSv2 and Alibaba's hardened mode each refuse the other's TTL header (Azure and
        // GCE refuse both; GCE's flavor header rules it out too).
        if (gce_has_google_flavor(*r)) return error(errc::not_metadata_server, no_service(f, "the GCE metadata server answered"), r->status);
        if (r->status != 200) return error(errc::not_metadata_server, no_service(f, status), r->status);
        if (!latest_metadata::acceptable(trim(r->body)))
            return error(errc::not_metadata_server, no_service(f, "the answer is not a session token"), 200);
        return {};
    case probe_recognition::instance_id: {
        // An id without a token: the prefix, then letters or digits (Tencent's "ins-"; AWS's and
        // Alibaba's ids start "i-").
        if (r->status != 200 || gce_has_google_flavor(*r)) return error(errc::not_metadata_server, no_service(f, status), r->status);
        const auto id = trim(r->body);
        const std::size_t prefix = f.instance_id.prefix.size();
        bool shaped = id.size() > prefix && id.size() <= 64 && id.substr(0, prefix) == f.instance_id.prefix;
        for (const char c : id.substr(detail::smaller(id.size(), prefix)))
            shaped = shaped && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
        if (!shaped)
            return error(errc::not_metadata_server,
                         no_service(f, "not an instance id of the form " + std::string(f.instance_id.prefix) + "..."), 200);
        return {};
    }
    }
    return error(errc::not_metadata_server, no_service(f, "no way to recognise it"));
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
    constexpr int n = static_cast<int>(clouds.size());  // in the order of preference
    std::string bases[n];
    for (int i = 0; i < n; ++i) {
        const cloud_facts& f = clouds[i];
        auto resolved = f.resolve_probe_endpoint(options.endpoint(f.id), "detect_options::" + std::string(f.name) + "_endpoint");
        if (!resolved) return std::move(resolved).error();
        bases[i] = std::move(*resolved);
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
    bool wanted[n] = {};
    for (int i = 0; i < n; ++i) {
        b->why[i] = error(errc::cancelled, "not probed");
        const char* disabled = clouds[i].disabled ? clouds[i].disabled() : nullptr;
        if (disabled) b->why[i] = error(errc::unsupported, std::string("not probed: ") + disabled);
        wanted[i] = options.probe(clouds[i].id) && !disabled;
        b->done[i] = !wanted[i];
        b->bases[i] = std::move(bases[i]);
        if (wanted[i]) b->transports[i].emplace(transport);
    }

    auto run_probe = [b](int i) {
        result<void> r = detail::probe(*b->transports[i], clouds[i], b->bases[i], b->timeout);
        std::lock_guard<std::mutex> lock(b->m);
        b->ended[i] = true;
        if (b->done[i]) return;  // not waited for: what it says came too late
        b->ok[i] = r.has_value();
        b->why[i] = r ? error() : r.error();
        b->done[i] = true;
        b->cv.notify_all();
    };
    // Decided: every probe has answered, or one said yes and every probe preferred to it, and
    // every later one whose facts say `probe_awaited` (Azure's, GCE's and AWS's, whose flags
    // callers read), have answered. Alibaba's and Tencent's addresses do not answer elsewhere (a
    // DNS lookup of Tencent's name may wait out the resolver's timeout): their probes are not
    // waited for then.
    auto decided = [&b] {
        for (int i = 0; i < n; ++i) {
            if (!b->done[i]) return false;
            if (!b->ok[i]) continue;
            for (int j = i + 1; j < n; ++j)
                if (clouds[j].probe_awaited && !b->done[j]) return false;
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
    for (int i = 0; i < n; ++i) {
        const auto& m = detail::detect_members_of[i];
        out.*m.answered = b->ok[i];
        error& why = out.*m.why;
        why = b->why[i];
        if (why.code == errc::cancelled && why.message != "not probed" && why.message.rfind("not waited", 0) != 0)
            why = error(errc::timeout, "no answer within " + std::to_string(options.timeout.count()) + " ms");
    }
    for (int i = 0; i < n && out.found == cloud::none; ++i)
        if (b->ok[i]) out.found = clouds[i].id;
    return out;
}

// cloud::none (and any value outside `clouds`) has no members: cloud_index() is then clouds.size().
inline const std::string& detect_options::endpoint(cloud c) const {
    static const std::string none;
    const auto i = cloud_index(c);
    return i < clouds.size() ? this->*detail::detect_members_of[i].endpoint : none;
}
inline void detect_options::set_endpoint(cloud c, std::string url) {
    const auto i = cloud_index(c);
    if (i < clouds.size()) this->*detail::detect_members_of[i].endpoint = std::move(url);
}
inline bool detect_options::probe(cloud c) const {
    const auto i = cloud_index(c);
    return i < clouds.size() && this->*detail::detect_members_of[i].probe;
}
inline bool detection::answered(cloud c) const {
    const auto i = cloud_index(c);
    return i < clouds.size() && this->*detail::detect_members_of[i].answered;
}
inline const error& detection::why(cloud c) const {
    static const error none(errc::invalid_argument, "not a cloud");
    const auto i = cloud_index(c);
    return i < clouds.size() ? this->*detail::detect_members_of[i].why : none;
}

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detect-inl.hpp>
#endif
