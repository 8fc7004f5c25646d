// SPDX-License-Identifier: MIT
#pragma once

// forewarn::testing::scenario: the emulated metadata services, put together from the parts in
// testing/emulator/ (types, scenario file, timeline, faults, engine and router, Azure IMDS, the
// GCE metadata server, AWS IMDS, Alibaba's and Tencent's metadata, the control API). This is the
// header users include.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/testing/emulator/alibaba_metadata.hpp>
#include <forewarn/testing/emulator/aws_imds.hpp>
#include <forewarn/testing/emulator/azure_imds.hpp>
#include <forewarn/testing/emulator/control_api.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/gce_metadata.hpp>
#include <forewarn/testing/emulator/scenario_file.hpp>
#include <forewarn/testing/emulator/tencent_metadata.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/transport.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/**
 * The emulated metadata services: a deterministic state machine over a forewarn::clock, shared by
 * forewarn-emulator (HTTP) and simulated_transport (in-process). Every protocol rule lives in
 * handle(); front ends only carry bytes and apply its fault directives.
 *
 * In-process the clock is a testing::manual_clock: the scenario's own by default, or the one the
 * test's clients and poller wait on (pass it in; testing::harness does), so one advance() moves
 * the services, the clients' backoffs and the poller together. A hanging GCE request waits on that
 * clock, so manual_clock::wait_idle() counts it as idle. The program uses real time times a speed
 * (use_real_time()). Thread-safe. Every answer carries a Date header: the scenario's wall time.
 *
 * @code
 * forewarn::testing::scenario s;
 * s.add_azure_event({});                       // a Freeze, 15 min notice, for vm0
 * s.advance(std::chrono::minutes(15));         // NotBefore passes: the event is Started
 * @endcode
 */
class scenario {
public:
    /// Header a request may carry to be answered as one of the scenario's VMs (default: the first).
    static constexpr std::string_view vm_header = forewarn::detail::emulator_vm_header;

    /// Azure scheduled-events api-versions, oldest first (the emulator's own list, not the client's).
    static const std::vector<std::string>& azure_versions() { return forewarn::detail::emulator_azure_versions(); }
    /// Azure instance-metadata api-versions accepted on /metadata/instance (a subset of IMDS's).
    static const std::vector<std::string>& instance_versions() { return forewarn::detail::emulator_instance_versions(); }

    /// A scenario on a manual clock of its own.
    explicit scenario(scenario_config config = {}) : scenario(std::move(config), manual_clock()) {}
    /// A scenario on `clock`, a test's manual clock: advance() moves that clock.
    scenario(scenario_config config, manual_clock clock) : scenario(std::move(config), forewarn::clock(clock)) {
        manual_ = std::move(clock);
    }
    /// A scenario on any clock (advance() then jumps scenario time ahead of it).
    scenario(scenario_config config, forewarn::clock clock)
        : engine_(std::move(config), std::move(clock)), azure_(engine_), gce_(engine_), aws_(engine_), alibaba_(engine_),
          tencent_(engine_), control_(engine_) {
        engine_.add_service(azure_);
        engine_.add_service(gce_);
        engine_.add_service(gce_compute_);
        engine_.add_service(aws_);
        engine_.add_service(aws_autoscaling_);
        engine_.add_service(alibaba_);
        engine_.add_service(tencent_);
        engine_.set_control(control_);
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.restart();
    }
    scenario(const scenario&) = delete;
    scenario& operator=(const scenario&) = delete;

    // --- the clock --------------------------------------------------------------------------

    /// Switches to real time × speed from now on (the program). Scenario time continues from where it is.
    void use_real_time(double speed) {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.timeline().use_real_time(speed);
        engine_.notify();
    }
    bool real_time() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return engine_.timeline().real_time();
    }
    /// Scenario seconds per real second; 0 on a manual clock.
    double speed() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return engine_.timeline().real_time() ? engine_.timeline().speed() : 0.0;
    }
    /// The clock the scenario runs on.
    forewarn::clock clock() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return engine_.timeline().clock();
    }

    /**
     * Moves time forward by `d`, applying every step and transition on the way in order, and
     * wakes hanging requests. On a manual clock it advances that clock (and so everything else on
     * it); on real time it jumps scenario time ahead.
     */
    void advance(scenario_duration d) {
        bool jump = true;
        {
            std::lock_guard<std::mutex> lock(engine_.mutex());
            jump = !manual_ || engine_.timeline().real_time();
            if (jump) engine_.advance(d);
        }
        if (jump) return;
        manual_->advance(d);  // not under the engine's lock: the clock takes each waiter's
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.advance(scenario_duration(0));
    }
    /// Scenario time now.
    scenario_duration now() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return engine_.timeline().now();
    }
    /// Wall time now: the scenario's wall epoch plus scenario time.
    std::chrono::system_clock::time_point wall_now() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return engine_.timeline().wall_at(engine_.timeline().now());
    }
    std::chrono::system_clock::time_point wall_epoch() const { return *engine_.config().wall_epoch; }

    // --- control ----------------------------------------------------------------------------

    /// Announces an Azure event now (at + 0) and returns its EventId.
    std::string add_azure_event(azure_event_spec spec) {
        return synced([&] { return azure_.announce(std::move(spec)); });
    }
    /// Azure cancels a Scheduled event (it disappears without starting). False when not Scheduled.
    bool cancel_azure_event(const std::string& id) {
        return synced([&] { return azure_.cancel(id); });
    }
    /// Ends an event now (cancelled when Scheduled, completed when Started). False when gone already.
    bool remove_azure_event(const std::string& id) {
        return synced([&] { return azure_.remove(id); });
    }
    /// Sets a GCE key (path under computeMetadata/v1/, e.g. "instance/maintenance-event").
    void set_gce(const std::string& key, std::string value) {
        synced([&] { gce_.set(key, std::move(value)); });
    }
    /**
     * GCE: what instance/upcoming-maintenance answers from now on: a window as GCE's JSON text
     * (`{"type":"SCHEDULED","maintenance_status":"PENDING","window_start_time":...}`), or one of
     * its odd answers: "empty" ({}), "none" (the text NONE), "no_notifications" (a 503) or
     * "absent" (404, as on machine types without it, and as before the first call). False, and
     * nothing changes, for anything else.
     */
    bool set_gce_upcoming(const std::string& answer) {
        rapidjson::Document doc;
        if (!answer.empty() && answer.front() == '{') {
            doc.Parse(answer.data(), answer.size());
            if (doc.HasParseError()) return false;
        } else {
            doc.SetString(answer.data(), static_cast<rapidjson::SizeType>(answer.size()), doc.GetAllocator());
        }
        auto value = forewarn::detail::emulator_gce_upcoming_value(doc, "answer");
        if (!value) return false;
        scenario_step s;
        s.what = scenario_step::kind::gce_set;
        s.gce_values.emplace_back(std::string(forewarn::detail::emulator_gce_upcoming_key), std::move(*value));
        synced([&] {
            gce_.apply_step(s, engine_.timeline().now());
            engine_.notify();
        });
        return true;
    }
    /// Injects a fault now.
    void inject_fault(fault_spec f) {
        synced([&] { engine_.add_fault(std::move(f)); });
    }
    void clear_faults() {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.clear_faults();
    }
    /// Adds a step whose `at` counts from now; it is applied at once when due.
    void add_step(scenario_step step) {
        synced([&] { engine_.schedule_from_now({std::move(step)}); });
    }
    /// Back to the configured scenario at time 0: state, faults, log and clock.
    void reset() {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.restart();
    }
    /// Wakes every hanging request (a cancel flag was raised); nothing else changes.
    void wake() noexcept {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.notify();
    }
    /// Ends every hanging request and pause() and refuses to hang again: the program is stopping.
    void shutdown() noexcept {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.shutdown();
    }
    /// Receives one line per request and per state change (called with the engine's lock held:
    /// the sink must not call back into the scenario).
    void set_logger(std::function<void(const std::string&)> sink) {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.set_logger(std::move(sink));
    }

    // --- observation ------------------------------------------------------------------------

    /// Every Azure event announced so far, typed (state, who approved it, how it ended).
    std::vector<azure_event_state> azure_events() {
        return synced([&] { return azure_.events(); });
    }
    /// One Azure event, or nothing when no event has that id.
    std::optional<azure_event_state> azure_event(const std::string& id) {
        for (auto& e : azure_events())
            if (e.id == id) return e;
        return std::nullopt;
    }

    std::int64_t incarnation() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return azure_.incarnation();
    }
    /// GCE: each performMaintenance Compute received (path, requestId, whether the token was the
    /// one served, status), in order.
    std::vector<forewarn::detail::emulator_gce::compute_call> gce_compute_calls() {
        return synced([&] { return gce_.compute_calls(); });
    }
    /// GCE: the next `times` performMaintenance calls answer `status` (400, 403, 429 or 503).
    void gce_compute_fault(int status, int times = 1) {
        synced([&] { gce_.compute_fault(status, times); });
    }
    /// AWS: a Spot interruption notice, `action` (terminate, stop, hibernate) `in` from now.
    void aws_spot(const std::string& action = "terminate", scenario_duration in = std::chrono::minutes(2)) {
        synced([&] { aws_.spot(action, in); });
    }
    /// AWS: a rebalance recommendation, given now.
    void aws_rebalance() {
        synced([&] { aws_.rebalance(); });
    }
    /// AWS: a scheduled event (Code e.g. "system-reboot") with NotBefore `in` from now; its EventId.
    std::string add_aws_event(const std::string& code, scenario_duration in, std::optional<scenario_duration> window = std::nullopt,
                              const std::string& id = {}) {
        return synced([&] { return aws_.schedule(code, in, window, id); });
    }
    /// AWS: a scheduled event becomes "completed" or "canceled"; false when none is active with that id.
    bool finish_aws_event(const std::string& id, const std::string& state) {
        return synced([&] { return aws_.finish(id, state); });
    }
    /// AWS: every session token expires now (the next request with one is a 401).
    void expire_aws_tokens() {
        synced([&] { aws_.expire_tokens(); });
    }
    /// AWS: the scheduled events, typed.
    std::vector<aws_event_state> aws_events() {
        return synced([&] { return aws_.events(); });
    }
    /// AWS: the Auto Scaling target lifecycle state autoscaling/target-lifecycle-state answers
    /// from now on ("InService", "Terminated", "Warmed:Terminated", ...; not checked).
    void aws_lifecycle(const std::string& state) {
        synced([&] { aws_.lifecycle(state); });
    }
    /// AWS: no lifecycle state (outside an Auto Scaling group): the path is a 404 again.
    void clear_aws_lifecycle() {
        synced([&] { aws_.clear_lifecycle(); });
    }
    /// AWS: the instance is in `group`, whose termination hook is `hook`; `tags`: instance
    /// metadata tags on (the group's name is then in tags/instance/aws:autoscaling:groupName).
    /// A Terminated lifecycle state then holds the instance in Terminating:Wait until
    /// CompleteLifecycleAction (Auto Scaling at /autoscaling/, docs/emulator.md).
    void aws_autoscaling(const std::string& group, const std::string& hook, bool tags = true) {
        synced([&] { aws_.configure_autoscaling(group, hook, tags); });
    }
    /// AWS: "Terminating:Wait", "Terminating:Proceed" (completed with CONTINUE), "Terminating:Abandon", or "".
    std::string aws_lifecycle_action() {
        return synced([&] { return aws_.autoscaling().action_state(); });
    }
    /// AWS: every call Auto Scaling received, in order, with the signature's verdict.
    std::vector<autoscaling_call> aws_autoscaling_calls() {
        return synced([&] { return aws_.autoscaling().calls(); });
    }
    /// AWS: the next `times` Auto Scaling calls answer `code` (Throttling, AccessDenied, ServiceUnavailable).
    void aws_autoscaling_fault(const std::string& code, int times = 1) {
        synced([&] { aws_.autoscaling().fault(code, times); });
    }
    /// AWS: the instance profile's credentials are replaced now; calls signed with the old ones
    /// get ExpiredToken.
    void rotate_aws_credentials() {
        synced([&] { aws_.autoscaling().rotate(); });
    }

    /// Alibaba: the Spot instance is reclaimed `in` from now (instance/spot/termination-time).
    void alibaba_spot(scenario_duration in = std::chrono::minutes(5)) {
        synced([&] { alibaba_.spot(in); });
    }
    void clear_alibaba_spot() {
        synced([&] { alibaba_.clear_spot(); });
    }
    /// Alibaba: every metadata token expires now (the next request with one is a 401).
    void expire_alibaba_tokens() {
        synced([&] { alibaba_.expire_tokens(); });
    }
    /// Alibaba: how many tokens it has issued since the start (or the last reset).
    std::size_t alibaba_tokens_issued() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return alibaba_.tokens_issued();
    }

    /// Tencent: the Spot instance is reclaimed `in` from now (spot/termination-time).
    void tencent_spot(scenario_duration in = std::chrono::minutes(2)) {
        synced([&] { tencent_.spot(in); });
    }
    void clear_tencent_spot() {
        synced([&] { tencent_.clear_spot(); });
    }

    /// The current value of a GCE key, or nothing.
    std::optional<std::string> gce_value(const std::string& key, std::size_t vm = 0) const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return gce_.value(key, engine_.config().vms.at(vm));
    }
    /// The ETag a GCE key (or directory, ending in '/') has now.
    std::string gce_etag(const std::string& key, std::size_t vm = 0) const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return gce_.etag(key, engine_.config().vms.at(vm));
    }
    /// Every request logged so far (the newest 10000).
    std::vector<logged_request> requests() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return {engine_.requests().begin(), engine_.requests().end()};
    }
    void clear_requests() {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.clear_requests();
    }
    const scenario_config& config() const noexcept { return engine_.config(); }
    /// The state as JSON (what GET /emulator/v1/state answers).
    std::string state_json() {
        return synced([&] { return control_.state_json(); });
    }

    /// Requests hanging in handle() right now (GCE wait_for_change).
    std::size_t hanging() const {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        return engine_.hanging();
    }
    /// Blocks until at least `n` requests hang in handle(), or `real_timeout` passes: a test
    /// calls it before advance() so that the advance is known to reach a waiting poller thread.
    bool wait_until_hanging(std::size_t n, std::chrono::milliseconds real_timeout = std::chrono::seconds(10)) {
        std::unique_lock<std::mutex> lock(engine_.mutex());
        return engine_.wait_until_hanging(lock, n, real_timeout);
    }

    /// Plays the timeline as time passes until shutdown(), so state changes are logged when they
    /// happen (the program runs it on a thread). Wakes only for a transition or a change.
    void play() {
        std::unique_lock<std::mutex> lock(engine_.mutex());
        engine_.play(lock);
    }

    /// Waits `d` of scenario time (real time / speed, or until advance() passes it); false when
    /// shutdown() or `cancelled` interrupted it. Front ends use it to carry out delays.
    bool pause(scenario_duration d, const std::atomic<bool>* cancelled = nullptr) {
        std::unique_lock<std::mutex> lock(engine_.mutex());
        return engine_.pause(lock, d, cancelled);
    }

    // --- the protocol -----------------------------------------------------------------------

    /**
     * Answers one request (absolute URL or origin-form target) as the emulated services would.
     * Hanging GCE requests (wait_for_change) block here until the value changes, timeout_sec or
     * the request's own timeout passes in scenario time, `cancelled` is raised (then wake()), or
     * shutdown(). Never throws on bad input: a malformed request gets the status the real service
     * would give.
     */
    emulated_response handle(const http_request& request, const std::atomic<bool>* cancelled = nullptr) {
        std::unique_lock<std::mutex> lock(engine_.mutex());
        return engine_.route(request, lock, cancelled);
    }

private:
    // Runs `f` with the lock held, after playing everything due up to now.
    template <class F>
    auto synced(F&& f) -> decltype(f()) {
        std::lock_guard<std::mutex> lock(engine_.mutex());
        engine_.sync();
        return f();
    }


    std::optional<manual_clock> manual_;
    forewarn::detail::emulator_engine engine_;
    forewarn::detail::emulator_azure azure_;
    forewarn::detail::emulator_gce gce_;
    forewarn::detail::emulator_gce_compute gce_compute_{gce_};
    forewarn::detail::emulator_aws aws_;
    forewarn::detail::emulator_aws_autoscaling aws_autoscaling_{aws_.autoscaling(), engine_};
    forewarn::detail::emulator_alibaba alibaba_;
    forewarn::detail::emulator_tencent tencent_;
    forewarn::detail::emulator_control_api control_;
};

}  // namespace testing
FOREWARN_END_NAMESPACE
