// SPDX-License-Identifier: MIT
#pragma once

// The Azure Scheduled Events wire format: the GET document and the approval (StartRequests) body.
// Public so that users (and the emulator) can parse and write documents without a client.

#include <forewarn/azure/vocabulary.hpp>
#include <forewarn/config.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

namespace azure {

/// The api-version forewarn asks for unless told otherwise (the current one).
inline constexpr std::string_view latest_api_version = "2020-07-01";

/// Every Scheduled Events api-version Azure documents, oldest first. 2017-03-01 is the preview.
inline constexpr std::string_view known_api_versions[] = {"2017-03-01", "2017-08-01", "2017-11-01", "2019-01-01",
                                                          "2019-04-01", "2019-08-01", "2020-07-01"};

/// True for one of known_api_versions.
constexpr bool is_known_api_version(std::string_view v) noexcept {
    for (auto k : known_api_versions)
        if (k == v) return true;
    return false;
}

/**
 * Checks an api-version before it goes into a URL. A known version passes. An unknown one passes
 * too when it is a well-formed date (YYYY-MM-DD, digits only) not older than 2017-03-01: Azure adds
 * versions over time and a newer one must not need a new forewarn; it is parsed with the rules of
 * the newest known version not after it. Anything else (empty, "{latest}", "latest", a date before
 * the preview, characters that would change the URL) is errc::invalid_argument.
 */
result<void> validate_api_version(std::string_view v);

/// True when `v` is the 2017-03-01 preview (underscored names, DocumentIncarnation in approvals).
constexpr bool is_preview_api_version(std::string_view v) noexcept { return v < std::string_view("2017-08-01"); }

/**
 * Parses a Scheduled Events GET answer into a document (origin cloud::azure).
 *
 * The body must be one JSON object (UTF-8, nested at most 64 deep, nothing after it) with an
 * integer `DocumentIncarnation` (kept as decimal text) and an `Events` array. An empty or blank
 * body is errc::empty_body; anything else that is not such an object (`null`, `[]`, `{}`, a
 * string) is an error too, never an empty document: an empty document would tell the poller
 * that every event is over. Errors name the field ("Events[2].NotBefore") or the parse offset.
 *
 * Each event needs string `EventId` (non-empty, unique in the document), `EventType` and
 * `EventStatus`; `ResourceType`, `Resources` (array of strings), `NotBefore` (RFC 1123 as the
 * service sends it today, ISO-8601 as the 2017 preview and Microsoft's mock server send it, or ""
 * for none, as once an event started), `Description`, `EventSource` and `DurationInSeconds`
 * (integer, -1 = unknown) are optional (null counts as absent) but type-checked when present;
 * unknown members are ignored and unknown wire values of EventType/EventStatus/EventSource are
 * kept raw.
 *
 * With `api_version` 2017-03-01 a leading '_' is removed from each resource name (the preview
 * sent "_vm0" where later versions send "vm0"), so event::affects(compute.name) works everywhere.
 */
result<document> parse_document(std::string_view body, std::string_view api_version = latest_api_version);

/**
 * The approval body: {"StartRequests":[{"EventId":"..."},...]}, written with RapidJSON's Writer
 * so any id (quotes, backslashes, control characters, non-ASCII) is escaped correctly. With an
 * `incarnation` (the 2017-03-01 preview wants it) "DocumentIncarnation" is added beside
 * StartRequests as a string, as the preview's own samples send it. An id that is not valid
 * UTF-8, or an empty list, is errc::invalid_argument.
 */
result<std::string> write_start_requests(const std::vector<std::string>& ids,
                                         const std::optional<std::string>& incarnation = std::nullopt);

/// Who this VM is, from the instance metadata (`/metadata/instance/compute`).
struct instance_identity {
    std::string name;               ///< compute.name: the name Scheduled Events lists in Resources
    std::string vm_scale_set_name;  ///< compute.vmScaleSetName; empty outside a scale set
    std::string resource_id;        ///< compute.resourceId (ARM id); empty when not sent
    std::string vm_id;              ///< compute.vmId (a GUID); empty when not sent
};

/// The api-version used for the instance metadata request of identity().
inline constexpr std::string_view instance_api_version = "2021-02-01";

}  // namespace azure

namespace detail {
/// The instance metadata's compute object: name required, the rest optional.
result<azure::instance_identity> azure_parse_instance_identity(std::string_view body);

/// What a refused request to Azure's IMDS means: status_error with Azure's hints (400: the
/// Metadata header, the api-version sent, or an EventId IMDS does not know; 404).
error azure_status_error(int status, std::string_view what, std::string_view body, std::string_view api_version);
}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/azure/parse-inl.hpp>
#endif
