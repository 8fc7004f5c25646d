// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/transport.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/**
 * The scenario engine behind the transport interface: forewarn's clients talk to the emulated
 * services (scenario.hpp) in-process, with no socket and no real sleep. Time is the scenario's
 * clock (a manual clock in tests: it moves when the test advances it); a hanging GET blocks the
 * calling thread until the watched value changes, its timeout_sec (or the request's own timeout)
 * passes on that clock, or cancel(). Fault directives become transport errors after
 * the time they would take: a connection closed mid-body is errc::transport, a delay or stall at
 * least as long as the request's timeout is errc::timeout once that timeout has passed.
 *
 * Copies share the scenario and the cancel state (cancel() on any copy stops them all, until
 * reset()), so a test can keep one copy and hand another to a client.
 *
 * @code
 * auto s = std::make_shared<forewarn::testing::scenario>();
 * forewarn::testing::simulated_transport t(s);
 * Client client({}, t);                   // a cloud's basic_ client over simulated_transport
 * // ... an event of that cloud added to *s, with 15 min notice (scenario.hpp says how)
 * auto doc = client.fetch();              // Scheduled
 * s->advance(std::chrono::minutes(15));   // NotBefore passes
 * doc = client.fetch();                   // Started
 * @endcode
 */
class simulated_transport {
public:
    /// A transport over a new scenario with default settings.
    simulated_transport() : simulated_transport(std::make_shared<testing::scenario>()) {}
    /// A transport over `s`; requests are answered as the VM called `vm` ("" : the scenario's first).
    explicit simulated_transport(std::shared_ptr<testing::scenario> s, std::string vm = {})
        : scenario_(std::move(s)), shared_(std::make_shared<shared_state>()), vm_(std::move(vm)) {}

    /// The scenario this transport talks to.
    testing::scenario& scenario() const noexcept { return *scenario_; }
    const std::shared_ptr<testing::scenario>& shared_scenario() const noexcept { return scenario_; }
    /// A transport on the same scenario answered as another VM (its own cancel state).
    simulated_transport as_vm(std::string vm) const { return simulated_transport(scenario_, std::move(vm)); }

    result<http_response> send(const http_request& request) {
        if (shared_->cancelled.load()) return error(errc::cancelled, "request cancelled");
        emulated_response r;
        if (vm_.empty()) {
            r = scenario_->handle(request, &shared_->cancelled);
        } else {
            http_request as_vm = request;
            as_vm.headers.push_back({std::string(testing::scenario::vm_header), vm_});
            r = scenario_->handle(as_vm, &shared_->cancelled);
        }
        if (shared_->cancelled.load()) return error(errc::cancelled, "request cancelled");
        // A delay or a stall takes its time on the scenario's clock, as it would on the wire: the
        // delay itself, or the request's own timeout when that comes first. On a manual clock the
        // caller waits (idle) until the test's advance() gets there.
        const bool outlasts = request.timeout.count() > 0 && r.delay >= request.timeout;
        scenario_duration wait = r.delay;
        if (outlasts) wait = std::chrono::duration_cast<scenario_duration>(request.timeout);
        if (wait.count() > 0 && !scenario_->pause(wait, &shared_->cancelled))
            return error(errc::cancelled, "request cancelled");
        switch (r.what) {
        case emulated_response::action::cancelled: return error(errc::cancelled, "request cancelled");
        case emulated_response::action::timed_out:
            return error(errc::timeout, "no answer within " + std::to_string(request.timeout.count()) + " ms (scenario time)");
        case emulated_response::action::stall:
            if (outlasts || r.delay == (scenario_duration::max)())
                return error(errc::timeout, "no answer within " + std::to_string(request.timeout.count()) + " ms (stalled)");
            return error(errc::transport, "connection closed without an answer");
        case emulated_response::action::close_mid_body:
            if (outlasts) return error(errc::timeout, "no answer within " + std::to_string(request.timeout.count()) + " ms");
            return error(errc::transport, "connection closed after " + std::to_string(r.close_after) + " of " +
                                              std::to_string(r.body.size()) + " body bytes");
        case emulated_response::action::answer: break;
        }
        if (outlasts) return error(errc::timeout, "no answer within " + std::to_string(request.timeout.count()) + " ms");
        if (r.body.size() > request.max_body)
            return error(errc::body_too_large, "response body larger than " + std::to_string(request.max_body) + " bytes");
        http_response out;
        out.status = r.status;
        out.headers = std::move(r.headers);
        out.body = std::move(r.body);
        return out;
    }

    /// Sticky: the in-flight send (even a hanging GET) and every later one return
    /// errc::cancelled until reset().
    void cancel() noexcept {
        shared_->cancelled.store(true);
        scenario_->wake();
    }
    void reset() noexcept { shared_->cancelled.store(false); }
    bool cancelled() const noexcept { return shared_->cancelled.load(); }

private:
    struct shared_state {
        std::atomic<bool> cancelled{false};
    };
    std::shared_ptr<testing::scenario> scenario_;
    std::shared_ptr<shared_state> shared_;
    std::string vm_;
};

static_assert(is_transport_v<simulated_transport>);

}  // namespace testing
FOREWARN_END_NAMESPACE
