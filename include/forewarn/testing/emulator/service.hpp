// SPDX-License-Identifier: MIT
#pragma once

// What an emulated service is to the engine. A service (Azure IMDS, the GCE metadata server, ...)
// is a part the router hands the requests whose path it serves, that the timeline hands the steps
// of its kinds and asks for its own next transition, and that answers its own control routes under
// /emulator/v1/. It keeps its own state; the engine (engine.hpp) gives it the time, the faults,
// the log and the lock.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/types.hpp>

#include <optional>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// One emulated service. Every member is called with the engine's lock held.
class emulator_service {
public:
    virtual ~emulator_service() = default;

    /// "azure", "gce": the request log's `service`, what a fault's `service` matches, and the
    /// first segment of its control routes.
    virtual std::string_view name() const noexcept = 0;
    /// True for the request paths it answers ("/metadata/...").
    virtual bool serves(std::string_view path) const noexcept = 0;
    /// Answers one request. It may wait on the engine (GCE's hanging GET), which releases the lock
    /// meanwhile; it takes and applies its own faults where the real service would fail.
    virtual testing::emulated_response handle(emulator_request& request) = 0;

    /// Back to the scenario's initial state, at time 0.
    virtual void restart() = 0;
    /// The next scenario time at which it changes on its own (a NotBefore, an end of impact).
    virtual std::optional<testing::scenario_duration> next_transition() const { return std::nullopt; }
    /// Applies a step at time `t`; false when the step is not of its kinds.
    virtual bool apply_step(const testing::scenario_step& /*step*/, testing::scenario_duration /*t*/) { return false; }
    /// Applies its own transitions due at `t`. The timeline calls it once per instant at which
    /// anything happens, after that instant's steps: the end of an instant (Azure counts its
    /// DocumentIncarnation per instant).
    virtual void reach(testing::scenario_duration /*t*/) {}

    /// Answers a control route (the path after /emulator/v1/, e.g. "azure/events/ID/cancel"), or
    /// nothing when the route is not its. `method` is "GET", "POST", "DELETE", ...
    virtual std::optional<testing::emulated_response> control(const std::string& /*route*/, const std::string& /*method*/,
                                                               const emulator_request& /*request*/) {
        return std::nullopt;
    }
    /// Writes its members of GET /emulator/v1/state into the open object.
    virtual void write_state(json_writer& /*w*/) const {}

protected:
    emulator_service() = default;
    emulator_service(const emulator_service&) = default;
    emulator_service& operator=(const emulator_service&) = default;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
