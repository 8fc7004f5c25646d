// SPDX-License-Identifier: MIT
#pragma once

// The engine: what every part of the emulator shares (the lock, the timeline, the faults, the
// logs, the hanging requests) and the router that hands each request to the part serving its path.
// It knows services only through emulator_service (service.hpp), so a new one plugs in by being
// added (add_service), not by changing this file.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/time.hpp>
#include <forewarn/testing/emulator/faults.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/service.hpp>
#include <forewarn/testing/emulator/timeline.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/transport.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// The shared core of the emulator. Its members expect the caller to hold mutex() unless they say
/// otherwise; testing::scenario takes it for every public call.
class emulator_engine {
public:
    using duration = testing::scenario_duration;

    /// How many requests the request log keeps (the newest).
    static constexpr std::size_t request_log_size = 10000;

    emulator_engine(testing::scenario_config config, forewarn::clock c)
        : config_(normalized(std::move(config), c)), signal_(std::make_shared<wake_signal>()),
          timeline_(*config_.wall_epoch, std::move(c)) {}
    emulator_engine(const emulator_engine&) = delete;
    emulator_engine& operator=(const emulator_engine&) = delete;

    std::mutex& mutex() const noexcept { return signal_->mutex; }
    /// The scenario as configured (with its wall epoch and at least one VM).
    const testing::scenario_config& config() const noexcept { return config_; }
    emulator_timeline& timeline() noexcept { return timeline_; }
    const emulator_timeline& timeline() const noexcept { return timeline_; }
    const emulator_faults& faults() const noexcept { return faults_; }

    // ---- the parts ----

    /// Adds a service; the router asks services in the order they were added.
    void add_service(emulator_service& s) { services_.push_back(&s); }
    /// The control API: asked first, for every path, and never logged in the request log.
    void set_control(emulator_service& c) noexcept { control_ = &c; }
    const std::vector<emulator_service*>& services() const noexcept { return services_; }

    // ---- time ----

    /// Plays everything due up to now in time order: at each instant, that instant's steps, then
    /// each service's own transitions. So advance(2h) plays two hours exactly as if they had been
    /// watched one by one.
    void sync() {
        const duration now = timeline_.now();
        for (int guard = 0; guard < 1000000; ++guard) {
            const auto t = next_transition();
            if (!t || *t > now) break;
            while (auto step = timeline_.take_due(*t)) apply_step(*step, *t);
            for (auto* s : services_) s->reach(*t);
            changed();
        }
    }
    /// The next instant at which anything happens: a pending step or a service's own transition.
    std::optional<duration> next_transition() const {
        std::optional<duration> next = timeline_.next_step();
        for (const auto* s : services_)
            if (const auto t = s->next_transition(); t && (!next || *t < *next)) next = t;
        return next;
    }
    /// Applies one step now-or-then: faults here, everything else by the service it is for.
    void apply_step(const testing::scenario_step& step, duration t) {
        if (step.what == testing::scenario_step::kind::fault) return add_fault(step.fault);
        if (step.what == testing::scenario_step::kind::clear_faults) return clear_faults();
        for (auto* s : services_)
            if (s->apply_step(step, t)) return;
        log("a step no service takes is ignored");
    }
    /// Adds steps whose `at` counts from now, and plays whatever is due already.
    void schedule_from_now(std::vector<testing::scenario_step> steps) {
        const duration now = timeline_.now();
        for (auto& s : steps) {
            s.at += now;
            timeline_.schedule(std::move(s));
        }
        sync();
        changed();
    }
    /// Moves scenario time ahead of the clock, plays what it passes, wakes every waiter.
    void advance(duration d) {
        timeline_.jump(d);
        sync();
        changed();
    }
    /**
     * Waits (lock released) for a change, or until scenario time `until` or the next transition,
     * on the timeline's clock: on a manual clock the waiter counts as idle, and the clock's
     * advance() is what ends the wait.
     */
    void wait(std::unique_lock<std::mutex>& lock, std::optional<duration> until) {
        std::optional<duration> next = next_transition();
        if (until && (!next || *until < *next)) next = until;
        const auto seen = generation_;
        timeline_.clock().wait_until(signal_, lock, timeline_.clock_time_at(next),
                                     [&] { return generation_ != seen || shutdown_; });
    }
    /// Waits `d` of scenario time (max(): until interrupted); false when shutdown() or `cancelled`
    /// interrupted it.
    bool pause(std::unique_lock<std::mutex>& lock, duration d, const std::atomic<bool>* cancelled) {
        const bool forever = d == (duration::max)();
        const duration until = forever ? d : timeline_.now() + d;
        for (;;) {
            if (shutdown_ || (cancelled && cancelled->load())) return false;
            sync();
            if (!forever && timeline_.now() >= until) return true;
            wait(lock, forever ? std::nullopt : std::optional<duration>(until));
        }
    }
    /// Wakes every waiter (a value changed, a cancel flag was raised). The caller holds the lock.
    void notify() noexcept { changed(); }
    /**
     * Plays the timeline as time passes, until shutdown(): each transition when it is due, so
     * that the log tells state changes when they happen even with no request to look (the
     * program runs this on a thread). Wakes for nothing else.
     */
    void play(std::unique_lock<std::mutex>& lock) {
        while (!shutdown_) {
            sync();
            wait(lock, std::nullopt);
        }
    }

    /// Back to the configured scenario at time 0: every service, the faults, the request log, the
    /// clock and the steps.
    void restart() {
        timeline_.restart();
        faults_.restart(config_.seed);
        requests_.clear();
        for (auto* s : services_) s->restart();
        for (const auto& s : config_.steps) timeline_.schedule(s);
        sync();
        changed();
    }

    // ---- faults ----

    void add_fault(testing::fault_spec f) {
        log("fault: " + emulator_faults::describe(f));
        faults_.add(std::move(f));
    }
    void clear_faults() {
        faults_.clear();
        log("faults cleared");
    }
    /// The first fault matching this request to `service`, consumed.
    std::optional<testing::fault_spec> take_fault(const emulator_request& r) {
        return faults_.take(r.http.method, r.target.path, r.entry.service);
    }

    // ---- logs ----

    /// Receives one line per request and per state change (called with the lock held).
    void set_logger(std::function<void(const std::string&)> sink) { logger_ = std::move(sink); }
    /// "[t=12.345s] line" to the logger, if there is one.
    void log(const std::string& line) const {
        if (!logger_) return;
        const auto ms = timeline_.now().count();
        std::string t = std::to_string(ms / 1000) + ".";
        const auto frac = ms % 1000;
        t += static_cast<char>('0' + frac / 100);
        t += static_cast<char>('0' + frac / 10 % 10);
        t += static_cast<char>('0' + frac % 10);
        logger_("[t=" + t + "s] " + line);
    }
    /// The request log (control requests are not in it), oldest first.
    const std::deque<testing::logged_request>& requests() const noexcept { return requests_; }
    void clear_requests() noexcept { requests_.clear(); }
    /// Requests logged since the engine was made (reset() does not start it over).
    std::uint64_t request_count() const noexcept { return seq_; }

    // ---- hanging requests and shutdown ----

    std::size_t hanging() const noexcept { return hanging_; }
    /// Counts one hanging request for as long as it lives.
    class hanging_request {
    public:
        explicit hanging_request(emulator_engine& e) : engine_(e) {
            ++engine_.hanging_;
            engine_.signal_->cv.notify_all();  // for wait_until_hanging; waiters on the clock need not wake
        }
        ~hanging_request() { --engine_.hanging_; }
        hanging_request(const hanging_request&) = delete;
        hanging_request& operator=(const hanging_request&) = delete;

    private:
        emulator_engine& engine_;
    };
    /// Blocks until at least `n` requests hang, or `real_timeout` (real time) passes.
    bool wait_until_hanging(std::unique_lock<std::mutex>& lock, std::size_t n, std::chrono::milliseconds real_timeout) {
        return signal_->cv.wait_for(lock, real_timeout, [&] { return hanging_ >= n; });
    }
    /// Ends every wait and refuses to hang again: the program is stopping.
    void shutdown() noexcept {
        shutdown_ = true;
        changed();
    }
    bool shutting_down() const noexcept { return shutdown_; }

    // ---- the router ----

    /**
     * Answers one request: the control API for /emulator/v1/..., else the first service that
     * serves the path, as the VM named by the X-Forewarn-Vm header or the path's /emulator/vm/NAME
     * prefix (default: the first; both, naming two VMs, are refused). Logs the request (but
     * control requests) and one line for the logger.
     */
    testing::emulated_response route(const http_request& request, std::unique_lock<std::mutex>& lock,
                                     const std::atomic<bool>* cancelled) {
        sync();
        emulator_target target = emulator_parse_target(request.url);
        const std::string path_vm = emulator_take_vm_path(target.path);
        testing::logged_request entry;
        entry.at = timeline_.now();
        entry.method = request.method;
        entry.target = std::string(emulator_origin_form(request.url));
        entry.headers = request.headers;
        entry.body = request.body.substr(0, 4096);

        const testing::vm_identity* vm = &config_.vms.front();
        const std::string* want = find_header(request.headers, emulator_vm_header);
        const bool two_names = want && !path_vm.empty() && *want != path_vm;
        if (!path_vm.empty()) want = &path_vm;
        if (two_names) {
            vm = nullptr;
        } else if (want) {
            vm = nullptr;
            for (const auto& v : config_.vms)
                if (v.name == *want) vm = &v;
        }
        entry.vm = vm ? vm->name : std::string();
        emulator_request req{request, target, vm, entry, lock, cancelled};

        testing::emulated_response r;
        emulator_service* part = nullptr;
        if (control_ && control_->serves(target.path)) {
            part = control_;
        } else if (vm) {
            for (auto* s : services_)
                if (s->serves(target.path)) {
                    part = s;
                    break;
                }
        }
        if (part) {
            entry.service = std::string(part->name());
            r = part->handle(req);
        } else {
            entry.service = "other";
            r = vm ? emulator_text_response(404, "not found")
                   : emulator_text_response(400, "unknown VM in " + std::string(emulator_vm_header) + " or " +
                                                     std::string(emulator_vm_path) + "NAME, or the two name different VMs");
        }
        entry.status = r.status;
        // Both services send the time they answer at; forewarn judges NotBefore by it.
        if (!find_header(r.headers, "Date"))
            r.headers.push_back({"Date", format_rfc1123(timeline_.wall_at(timeline_.now()))});

        std::string line = emulator_method_name(request) + " " + entry.target + " -> ";
        using action = testing::emulated_response::action;
        switch (r.what) {
        case action::answer: line += std::to_string(r.status); break;
        case action::close_mid_body: line += std::to_string(r.status) + " (closed mid-body)"; break;
        case action::stall: line += "stall"; break;
        case action::timed_out: line += "timed out"; break;
        case action::cancelled: line += "cancelled"; break;
        }
        if (!entry.fault.empty()) line += " [fault: " + entry.fault + "]";
        if (!part || part != control_) {  // the control API's own requests stay out of the log
            entry.seq = ++seq_;
            requests_.push_back(std::move(entry));
            while (requests_.size() > request_log_size) requests_.pop_front();
        }
        log(line);
        return r;
    }

private:
    // The wall epoch defaults to the clock's wall time now (whole seconds): a manual clock's
    // epoch, so that the scenario's wall time and a test's are one.
    static testing::scenario_config normalized(testing::scenario_config c, const forewarn::clock& clock) {
        if (c.vms.empty()) c.vms.emplace_back();
        if (!c.wall_epoch) c.wall_epoch = std::chrono::time_point_cast<std::chrono::seconds>(clock.wall_now());
        return c;
    }

    // Every change bumps the generation and wakes the waiters (through the clock's bookkeeping).
    void changed() noexcept {
        ++generation_;
        signal_->notify_all();
    }

    testing::scenario_config config_;
    std::shared_ptr<wake_signal> signal_;
    std::uint64_t generation_ = 0;
    emulator_timeline timeline_;
    emulator_faults faults_;
    std::vector<emulator_service*> services_;
    emulator_service* control_ = nullptr;
    std::deque<testing::logged_request> requests_;
    std::uint64_t seq_ = 0;
    std::size_t hanging_ = 0;
    bool shutdown_ = false;
    std::function<void(const std::string&)> logger_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
