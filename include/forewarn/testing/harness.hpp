// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/alibaba/metadata_client.hpp>
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/tencent/metadata_client.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/// The Azure client over the in-process emulator.
using simulated_azure_client = azure::basic_scheduled_events_client<simulated_transport>;
/// The GCE client over the in-process emulator.
using simulated_gce_client = gce::basic_metadata_client<simulated_transport>;
/// The AWS client over the in-process emulator.
using simulated_aws_client = aws::basic_instance_metadata_client<simulated_transport>;
/// The Alibaba client over the in-process emulator.
using simulated_alibaba_client = alibaba::basic_metadata_client<simulated_transport>;
/// The Tencent client over the in-process emulator.
using simulated_tencent_client = tencent::basic_metadata_client<simulated_transport>;

/**
 * A test's world on one clock: the emulated services (a testing::scenario), the real clients
 * over testing::simulated_transport, and pollers over any of them (or any notice source on the
 * harness's clock) for any of the scenario's VMs, all waiting on one testing::manual_clock.
 * Nothing sleeps; advance() moves everything and returns once every poller's work is done (each
 * thread, GCE's hanging GETs included, waits for its next work again; time moves on through a
 * retry backoff or a rate-limit wait, which only time ends), so what follows can assert on what
 * the handlers saw.
 *
 * Assert on the test's thread, after advance() or wait_idle(), never inside a handler: a failed
 * assertion there would unwind the poller's thread. Record in the handlers, check afterwards.
 *
 * @code
 * forewarn::testing::harness h;                           // one VM, "vm0"
 * std::vector<std::string> seen;
 * forewarn::poller_handlers on;
 * on.on_prepare = [&](const forewarn::change& c, forewarn::approval_handle a) { seen.push_back(c.event.id); a.ready(); };
 * h.add_azure_poller("vm0", on);
 * h.start();
 * auto id = h.scenario().add_azure_event({});             // a Freeze, 15 min notice
 * h.advance(std::chrono::seconds(1));                     // one poll: prepare, then the approval
 * REQUIRE(seen == std::vector<std::string>{id});
 * REQUIRE(h.scenario().azure_event(id)->approved_by == "vm0");
 * @endcode
 */
class harness {
public:
    /// A harness over a scenario with `config` (default: both services, one VM "vm0", nothing scheduled).
    explicit harness(scenario_config config = {})
        : scenario_(std::make_shared<testing::scenario>(std::move(config), clock_)) {}

    harness(const harness&) = delete;
    harness& operator=(const harness&) = delete;
    ~harness() { stop(); }

    manual_clock& clock() noexcept { return clock_; }
    /// The emulated services: add events, set GCE keys, inject faults, read their typed state.
    testing::scenario& scenario() noexcept { return *scenario_; }
    const std::shared_ptr<testing::scenario>& shared_scenario() const noexcept { return scenario_; }

    /// A transport that reaches the emulated services as `vm` ("" : the scenario's first VM).
    simulated_transport transport(const std::string& vm = {}) const { return simulated_transport(scenario_, vm); }

    /**
     * Azure client options for `vm` on this harness: its clock, and the VM's name as self_name.
     * With several VMs in the scenario the client's per-host rate limit is off: the VMs' clients
     * would share one limiter in this process, which no real VM does (the emulator still limits
     * each VM, as IMDS does).
     */
    azure::client_options azure_options(const std::string& vm = {}) const {
        return options_for<azure::client_options>("http://169.254.169.254", vm);
    }
    /// GCE client options for `vm` on this harness (the rate limit as for Azure).
    gce::client_options gce_options(const std::string& vm = {}) const {
        return options_for<gce::client_options>("http://metadata.google.internal", vm);
    }
    /// AWS client options for `vm` on this harness (the rate limit as for Azure).
    aws::client_options aws_options(const std::string& vm = {}) const {
        return options_for<aws::client_options>("http://169.254.169.254", vm);
    }

    /// Alibaba client options for `vm` on this harness (the emulator serves Alibaba under /alibaba).
    alibaba::client_options alibaba_options(const std::string& vm = {}) const {
        return options_for<alibaba::client_options>("http://100.100.100.200/alibaba", vm);
    }
    /// Tencent client options for `vm` on this harness (the emulator serves Tencent under /tencent).
    tencent::client_options tencent_options(const std::string& vm = {}) const {
        return options_for<tencent::client_options>("http://metadata.tencentyun.com/tencent", vm);
    }

    /**
     * A poller over `source` (any notice source on this harness's clock: a simulated client
     * made with transport(vm) and the options above, a testing::fake_source, your own), owned by
     * the harness. Started by start(), or at once when the harness runs already.
     */
    template <class Source>
    poller<Source>& add_poller(Source source, poller_handlers h = {}, poller_options o = {}) {
        auto owned = std::make_unique<entry<Source>>(std::move(source), std::move(h), std::move(o));
        auto& p = owned->p;
        pollers_.push_back(std::move(owned));
        if (running_) {
            if (auto r = p.start(); !r) start_error_ = r.error();
            wait_idle();
        }
        return p;
    }

    /// An Azure poller for `vm` ("" : the first VM), owned by the harness.
    poller<simulated_azure_client>& add_azure_poller(const std::string& vm, poller_handlers h = {},
                                                     poller_options o = {},
                                                     std::optional<azure::client_options> client = std::nullopt) {
        return add_simulated<simulated_azure_client>(client ? *client : azure_options(vm), vm, std::move(h), std::move(o));
    }
    /// A GCE poller for `vm` ("" : the first VM), owned by the harness.
    poller<simulated_gce_client>& add_gce_poller(const std::string& vm, poller_handlers h = {}, poller_options o = {},
                                                 std::optional<gce::client_options> client = std::nullopt) {
        return add_simulated<simulated_gce_client>(client ? *client : gce_options(vm), vm, std::move(h), std::move(o));
    }
    /// An AWS poller for `vm` ("" : the first VM), owned by the harness.
    poller<simulated_aws_client>& add_aws_poller(const std::string& vm, poller_handlers h = {}, poller_options o = {},
                                                 std::optional<aws::client_options> client = std::nullopt) {
        return add_simulated<simulated_aws_client>(client ? *client : aws_options(vm), vm, std::move(h), std::move(o));
    }

    /// An Alibaba poller for `vm` ("" : the first VM), owned by the harness.
    poller<simulated_alibaba_client>& add_alibaba_poller(const std::string& vm, poller_handlers h = {}, poller_options o = {},
                                                         std::optional<alibaba::client_options> client = std::nullopt) {
        return add_simulated<simulated_alibaba_client>(client ? *client : alibaba_options(vm), vm, std::move(h), std::move(o));
    }
    /// A Tencent poller for `vm` ("" : the first VM), owned by the harness.
    poller<simulated_tencent_client>& add_tencent_poller(const std::string& vm, poller_handlers h = {}, poller_options o = {},
                                                         std::optional<tencent::client_options> client = std::nullopt) {
        return add_simulated<simulated_tencent_client>(client ? *client : tencent_options(vm), vm, std::move(h), std::move(o));
    }

    /// Starts every poller and waits until they are idle (their first document handled). False
    /// when one did not start (its error is in `last_start_error()`) or did not get idle.
    bool start() {
        running_ = true;
        bool ok = true;
        for (auto& p : pollers_) {
            if (p->running()) continue;
            if (auto r = p->start(); !r) {
                start_error_ = r.error();
                ok = false;
            }
        }
        return wait_idle() && ok;
    }
    /// Stops every poller (each returns promptly, even mid-request).
    void stop() noexcept {
        running_ = false;
        for (auto& p : pollers_) p->stop();
    }
    const std::optional<error>& last_start_error() const noexcept { return start_error_; }

    /// Waits until every poller's work is done (manual_clock::wait_idle(): each thread waits for
    /// its next work; time moves on through backoffs and rate limits); false after
    /// `real_timeout` (a safety net: a test that would hang fails instead).
    bool wait_idle(std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) const {
        return clock_.wait_idle(real_timeout);
    }
    /// Moves the one clock by `d` (the services' time with it) and waits until idle.
    bool advance(clock::duration d, std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) {
        return clock_.advance_and_wait(d, real_timeout);
    }
    /**
     * Moves the clock by `d` in steps of `step` (default 1 s, Azure's poll interval), idle
     * after each: a 15-minute notice played poll by poll. False when a step did not get idle
     * within `real_timeout` (as advance()).
     */
    bool run_for(clock::duration d, clock::duration step = std::chrono::seconds(1),
                 std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) {
        for (clock::duration done(0); done < d; done += step)
            if (!advance((std::min)(step, d - done), real_timeout)) return false;
        return true;
    }

    /// How many pollers the harness owns.
    std::size_t pollers() const noexcept { return pollers_.size(); }

private:
    // What the harness does with a poller, whatever its source.
    struct owned_poller {
        virtual ~owned_poller() = default;
        virtual result<void> start() = 0;
        virtual void stop() noexcept = 0;
        virtual bool running() const noexcept = 0;
    };
    template <class Source>
    struct entry final : owned_poller {
        entry(Source s, poller_handlers h, poller_options o) : p(std::move(s), std::move(h), std::move(o)) {}
        result<void> start() override { return p.start(); }
        void stop() noexcept override { p.stop(); }
        bool running() const noexcept override { return p.running(); }
        poller<Source> p;
    };

    // A poller over a simulated client made with `co` (on this harness's clock) for `vm`.
    template <class Client, class Options>
    poller<Client>& add_simulated(Options co, const std::string& vm, poller_handlers h, poller_options o) {
        co.clock = clock_;
        return add_poller(Client(std::move(co), transport(vm)), std::move(h), std::move(o));
    }

    template <class Options>
    Options options_for(const char* endpoint, const std::string& vm) const {
        Options o;
        o.endpoint = endpoint;
        o.self_name = vm.empty() ? first_vm() : vm;
        o.clock = clock_;
        o.rate_limit = scenario_->config().vms.size() == 1;
        return o;
    }

    std::string first_vm() const { return scenario_->config().vms.front().name; }

    manual_clock clock_;  // before the scenario, which is made on it
    std::shared_ptr<testing::scenario> scenario_;
    std::deque<std::unique_ptr<owned_poller>> pollers_;
    std::optional<error> start_error_;
    bool running_ = false;
};

}  // namespace testing
FOREWARN_END_NAMESPACE
