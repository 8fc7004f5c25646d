// SPDX-License-Identifier: MIT
// The prepare hook's policy (prepare_policy.hpp).
#include "prepare_policy.hpp"

#include "lines.hpp"

#include <algorithm>

namespace watch {

std::optional<prepare_policy::steady::time_point> prepare_policy::approve_by(const forewarn::event& e,
                                                                             std::chrono::system_clock::time_point now,
                                                                             steady::time_point steady_now) const {
    if (!e.not_before) return std::nullopt;
    const auto left = *e.not_before - now - s_.hook_deadline;
    return steady_now + std::chrono::duration_cast<steady::duration>(left);
}

std::optional<prepare_policy::steady::time_point> prepare_policy::approve_by(const forewarn::event& e) const {
    return approve_by(e, std::chrono::system_clock::now(), steady::now());
}

prepare_policy::steady::time_point prepare_policy::deadline(const std::optional<steady::time_point>& approve_by,
                                                            steady::time_point now) const {
    return approve_by && *approve_by > now ? (std::min)(now + s_.hook_timeout, *approve_by) : now + s_.hook_timeout;
}

hook_runner::done_fn prepare_policy::after(const std::string& id, std::optional<steady::time_point> approve_by,
                                           forewarn::approval_handle handle, bool quiet) const {
    return [id, approve_by, handle = std::move(handle), quiet, approving = approving_](const hook_outcome& o) {
        // Declined: the event is settled not approved, and the source lets go of what it holds for
        // it (source::abandon: a lifecycle action's heartbeats stop, and its own timeout decides).
        if (o.what != hook_outcome::kind::succeeded) {
            if (!quiet) log_line("hook prepare " + id + ": the event is not approved");
            handle.decline("the prepare hook did not succeed");
            return;
        }
        if (approve_by && steady::now() >= *approve_by) {
            if (!quiet) log_line("hook prepare " + id + ": done after its deadline; the event is not approved");
            handle.decline("the prepare hook ended after its deadline");
            return;
        }
        if (approving) handle.ready();
    };
}

bool prepare_policy::drain_fits(const forewarn::event& e, std::chrono::system_clock::time_point now) const {
    if (s_.lb_drain.count() <= 0 || !e.not_before) return true;
    auto unready = now;
    if (s_.unready_before.count() > 0 && *e.not_before - s_.unready_before > now) unready = *e.not_before - s_.unready_before;
    return unready + s_.lb_drain <= *e.not_before - s_.hook_deadline;
}

bool prepare_policy::hold_fits(const forewarn::change& c, forewarn::approval_handle& handle) const {
    if (!approving_ || drain_fits(c.event)) return true;
    log_line("event " + c.event.id + ": announced too close to NotBefore for --lb-drain " + std::to_string(s_.lb_drain.count()) +
             " s before NotBefore less --hook-deadline " + std::to_string(s_.hook_deadline.count()) +
             " s; it is not approved and starts at NotBefore");
    handle.decline("--lb-drain does not fit before NotBefore less --hook-deadline");
    return false;
}

}  // namespace watch
