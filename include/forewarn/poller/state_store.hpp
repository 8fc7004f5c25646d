// SPDX-License-Identifier: MIT
#pragma once

// What a poller keeps across restarts, and where it keeps it: the interface only. The file
// store is state_file.hpp (which brings in the JSON and file code); a poller without a store
// pays for neither.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>

#include <optional>
#include <string>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// What a poller remembers about one event it delivered, beyond the event itself.
struct saved_event {
    std::string id;
    std::optional<clock::wall_time_point> first_seen;         ///< our wall clock
    std::optional<clock::wall_time_point> last_seen;          ///< our wall clock
    std::optional<clock::wall_time_point> last_seen_service;  ///< the service's Date then, if sent
    bool seen_started = false;
    bool approved = false;  ///< this VM's approval of it succeeded
    bool ready = false;     ///< its prepare handler said ready (kept so a restart still approves it)
    std::string boot_id;    ///< the boot this VM was in when it last saw the event
};

/// What a poller keeps across restarts.
struct poller_state {
    document delivered;               ///< the last document whose changes were all delivered
    std::vector<saved_event> events;  ///< one per event of `delivered` that has something to remember
    std::string coordinator;          ///< what the approval coordinator keeps (opaque to the poller)
};

/**
 * Where a poller keeps its state. The poller loads once before its first document and saves
 * after each cycle that changed something (from its own thread, never concurrently).
 */
class state_store {
public:
    virtual ~state_store() = default;
    /// The saved state; errc::not_found when there is none yet (a first run).
    virtual result<poller_state> load() = 0;
    /// Replaces the saved state; an error leaves the previous one in place.
    virtual result<void> save(const poller_state& state) = 0;
    /// For messages: where it is (a path, a URL).
    virtual std::string where() const = 0;
};

FOREWARN_END_NAMESPACE
