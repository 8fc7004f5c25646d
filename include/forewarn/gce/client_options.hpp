// SPDX-License-Identifier: MIT
#pragma once

// The options of the GCE metadata client (gce/metadata_client.hpp).

#include <forewarn/client_options.hpp>
#include <forewarn/config.hpp>

#include <chrono>

FOREWARN_BEGIN_NAMESPACE
namespace gce {

/**
 * Options of a metadata client: the common ones (client_options_base: endpoint, connect_timeout,
 * max_body, retry, rate_limit, self_name, clock, log) and GCE's. The endpoint is the root of the
 * metadata server, e.g. "http://127.0.0.1:8080" (no "/computeMetadata/v1"); empty:
 * $FOREWARN_GCE_ENDPOINT, else $GCE_METADATA_HOST (a "host[:port]"), else
 * http://metadata.google.internal. with http://169.254.169.254 as the fallback when the name does
 * not resolve. connect_timeout is 1 s here. Retries: 429, 5xx and transport errors, with backoff.
 * self_name is this VM's name in events' resources; empty: instance/name, asked before the first
 * document.
 */
struct client_options : client_options_base {
    client_options() { connect_timeout = std::chrono::seconds(1); }

    std::chrono::milliseconds request_timeout{std::chrono::seconds(5)};  ///< whole exchange of a plain GET
    /// A hanging GET with timeout_sec=N gives up after N seconds plus this margin.
    std::chrono::milliseconds watch_margin{std::chrono::seconds(5)};
    /// next(): timeout_sec of each hanging GET (the server answers with the current value after it).
    std::chrono::seconds watch_timeout{60};
    /// next(): after a failed request, the pause before the next one (the retries are done).
    std::chrono::milliseconds error_pause{1000};
    /// next(): how often a key that cannot hang is read again: an answer without an ETag
    /// (upcoming-maintenance's 503 before its first notice) or a key that does not exist
    /// (preempted on a VM without it). It never waits for the other keys' hanging GETs.
    std::chrono::milliseconds poll_interval{5000};
    /**
     * Also watch instance/upcoming-maintenance (the days-ahead window: gce/upcoming_maintenance.hpp),
     * a third hanging GET beside maintenance-event and preempted: an event with id
     * "upcoming-maintenance". Its odd answers ({}, NONE, the 503 "no notifications have been
     * received yet") mean none, without a retry; an answer without an ETag (the 503) is read again
     * every `poll_interval` instead of watched; after a 404 (a machine type without the key) it is
     * not asked again. An answer that is not an upcoming-maintenance document, or any failed
     * request for it, keeps the last good window and is in document::key_errors: it never holds
     * back the maintenance-event and preempted notices.
     */
    bool read_upcoming_maintenance = true;
    /**
     * Approving (gce/compute.hpp): an upcoming-maintenance window that can be rescheduled
     * (`can_reschedule`, still PENDING) reads event::approvable true, and approve() starts it now
     * with Compute's performMaintenance, with the default service account's token. The account
     * needs the compute scope and the permission compute.instances.performMaintenance (docs/gce.md).
     * The live-migration and termination notices of maintenance-event can never be approved.
     * false: nothing is approvable, as before this option.
     */
    bool perform_maintenance = true;
    /// Compute's API root; empty: https://compute.googleapis.com (a private endpoint, a test's server).
    std::string compute_endpoint;
};

}  // namespace gce
FOREWARN_END_NAMESPACE
