// SPDX-License-Identifier: MIT
#pragma once

// What one cloud's metadata service is on the wire, as data: where it is, how a probe asks it and
// recognises its answer, its session token, its instance ids. Each cloud writes its own
// `<cloud>::facts` once, in its endpoint.hpp next to its client; clouds.hpp lists them, and
// detect_cloud(), forewarn-watch and its `check` read them instead of naming the clouds.

#include <forewarn/config.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE

/// How a probe's answer shows that it is the cloud's own metadata service talking.
enum class probe_recognition {
    json_object,    ///< HTTP 200 with a JSON object (a service that sends no header of its own)
    echoed_header,  ///< HTTP 200 carrying the request's own header back (the probe's header, both ways)
    session_token,  ///< HTTP 200 with a session token to a token PUT (each service's own TTL header)
    instance_id,    ///< HTTP 200 with an instance id that starts with the cloud's prefix (no token)
};

/// One header of a request, as constants.
struct header_fact {
    std::string_view name, value;
};

/// A session token handshake: `PUT path` with the lifetime asked for in `ttl_header` gives a token
/// that every request then carries in `header`. All empty: the service has no tokens.
struct token_facts {
    std::string_view path, header, ttl_header;
    constexpr bool empty() const noexcept { return path.empty(); }
};

/// Where the instance's id is and how every id begins ("" when any text).
struct instance_id_facts {
    std::string_view path, prefix;
};

/// A cloud's metadata service on the wire. Plain constants, one per cloud (`<cloud>::facts`),
/// listed in preference order in `clouds` (clouds.hpp).
struct cloud_facts {
    cloud id = cloud::none;
    std::string_view name;          ///< to_string(id): --cloud's word, the JSON lines'
    std::string_view display_name;  ///< in a sentence: the cloud's own name for itself
    std::string_view service_name;  ///< in detect_cloud()'s reasons: "no <service_name> here: ..."

    /// The clients' default root, and the address they fall back to when its name does not
    /// resolve (an IP, where the default is a DNS name; else empty).
    std::string_view default_endpoint, fallback_endpoint;
    /// The endpoint's environment variables, in precedence order, for the documentation and --help.
    std::string_view endpoint_variables;
    /// detect_cloud()'s root: the option (named `option_name` in errors), else the variables, else
    /// the address that answers without a DNS lookup.
    result<std::string> (*resolve_probe_endpoint)(std::string_view option, std::string_view option_name) = nullptr;
    /// When it returns a reason, the environment says this service must not be asked (a variable its
    /// own SDKs read); nullptr: never.
    const char* (*disabled)() = nullptr;

    /// detect_cloud()'s probe: `probe_method probe_path` with `probe_header` (when it has a name),
    /// its answer recognised as `recognition`.
    http_method probe_method = http_method::get;
    std::string_view probe_path;
    header_fact probe_header;
    probe_recognition recognition = probe_recognition::json_object;
    /// detect_cloud() waits for this probe's answer even when a cloud preferred to it has said yes
    /// (its flags are read); false for an address that answers nowhere else and may take its whole
    /// timeout (a DNS name of the cloud's own).
    bool probe_awaited = true;

    token_facts token;
    instance_id_facts instance_id;
    /// `forewarn-watch check`'s advice when the token's answer never arrives but a GET without one is
    /// refused at once (the hop-limit signature); empty without a token.
    std::string_view token_hop_fix;
    /// The cloud's own time source, for `forewarn-watch check`'s advice on a clock that is off
    /// (an NTP server's address or name, or the host's clock); empty: none to name.
    std::string_view time_source;
};

FOREWARN_END_NAMESPACE
