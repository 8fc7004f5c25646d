// SPDX-License-Identifier: MIT
#pragma once

// The approver's extension point for decisions that span VMs (a fleet-wide maintenance budget):
// before the poller approves an event it asks the coordinator whether this VM may go into
// maintenance now. forewarn ships one on etcd and an in-process fake in forewarn::testing.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/std_function.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>

#include <string>
#include <string_view>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// One of this VM's events as the approver sees it.
struct local_event {
    forewarn::event event;
    bool ready = false;     ///< wanted: its prepare handler said ready, or an at-once rule covers it
    bool approved = false;  ///< this VM's approval of it succeeded
};

/// What the poller gives a coordinator when it starts.
struct coordinator_context {
    std::string self;        ///< this VM's name (the poller's identity)
    forewarn::clock clock;   ///< the poller's clock: wait on it, never on real time directly
    forewarn::logger log;    ///< the poller's logger
    /// Wakes the poller to ask again (admit()) now: call it, from any thread, when a decision may
    /// have changed (a slot freed). Harmless after the poller is gone.
    std::function<void()> wake;
};

/**
 * Decides whether this VM may approve an event now, across VMs. Every member function but the
 * destructor is called from the poller's thread, never concurrently, and with no lock of
 * forewarn's held; `wake` goes the other way. So a coordinator may:
 * - block (ask a scheduling service over the network): the poller's own thread waits meanwhile
 *   (no document is fetched, no handler runs), but other threads' latest_document(),
 *   last_document(), approval(), health() and self() answer at once;
 * - call those accessors itself, from any of its functions.
 * It must not destroy the poller; stop() from it only asks, as from a handler.
 * A coordinator never makes the poller approve on its own error: admit() returns the error, the
 * poller reports it and does not approve (the event then proceeds at NotBefore, as it would with
 * approval off).
 */
class approval_coordinator {
public:
    virtual ~approval_coordinator() = default;

    /// Called when the poller starts, once its identity is known. An error is reported, and
    /// start() is called again before the next admit().
    virtual result<void> start(const coordinator_context& context) = 0;
    /// The poller stops: end background work promptly (keep what must outlive a restart).
    virtual void stop() noexcept = 0;

    /**
     * This VM's events after each document and each approval, in document order. A coordinator
     * publishes them (the fleet view), counts an event the platform started without approval
     * as in maintenance, and frees what an event held once it is gone (after any settle time).
     */
    virtual void observe(const std::vector<local_event>& events) = 0;

    /// May this VM approve `e` now? true: approve it; false: not yet (ask again when woken or
    /// at the next document); an error: not now, and the error is reported.
    virtual result<bool> admit(const event& e) = 0;

    /// What must survive a restart (kept in the poller's state store), and reading it back.
    virtual std::string save_state() const { return {}; }
    virtual void load_state(std::string_view /*saved*/) {}
};

FOREWARN_END_NAMESPACE
