// SPDX-License-Identifier: MIT
#pragma once

// The timeline: scenario time and the steps waiting on it. This is the one place of the emulator
// that reads a clock: a forewarn::clock, the same one the clients and the poller of a test wait
// on (testing::manual_clock in-process), or real time times a speed (the program). Wall time
// (Azure's NotBefore, the Date header) is the wall epoch plus scenario time.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/testing/emulator/types.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Scenario time and the pending steps, in time order. Not thread-safe: the engine calls it with
/// its lock held.
class emulator_timeline {
public:
    using duration = testing::scenario_duration;

    emulator_timeline(std::chrono::system_clock::time_point wall_epoch, forewarn::clock c)
        : wall_epoch_(wall_epoch), clock_(std::move(c)), start_(clock_.now()) {}

    // ---- the clock ----

    const forewarn::clock& clock() const noexcept { return clock_; }

    /// Real time × `speed` from now on (the program); scenario time continues from where it is.
    void use_real_time(double speed) {
        offset_ = now();
        clock_ = forewarn::clock();
        start_ = clock_.now();
        speed_ = speed > 0 ? speed : 1.0;
    }
    bool real_time() const noexcept { return clock_.is_real_time(); }
    /// Scenario seconds per second of the clock.
    double speed() const noexcept { return speed_; }

    /// Scenario time now: the clock's time since the start (times the speed), plus jumps.
    duration now() const {
        const std::chrono::duration<double, std::milli> ran = clock_.now() - start_;
        return offset_ + duration(static_cast<std::int64_t>(ran.count() * speed_));
    }
    /// The time IMDS's 5 requests/s limit counts: a property of the real service seen by a real
    /// client, so the clock's own time (real time for the program, whatever the speed).
    std::chrono::milliseconds limiter_now() const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - start_);
    }
    /// Moves scenario time ahead of the clock by `d` (the clock itself does not move).
    void jump(duration d) {
        if (d.count() > 0) offset_ += d;
    }
    /// The clock's time at which scenario time reaches `t` (max() for "never").
    clock::time_point clock_time_at(std::optional<duration> t) const {
        if (!t) return (clock::time_point::max)();
        const auto ahead = *t - now();
        if (ahead.count() <= 0) return clock_.now();
        // Rounded up, so that scenario time has reached `t` then; exact at speed 1 (a manual
        // clock advanced by exactly the time asked for wakes the waiter).
        const double ns = std::ceil(static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(ahead).count()) / speed_);
        return clock::saturating_add(clock_.now(), std::chrono::nanoseconds(static_cast<std::int64_t>(ns)));
    }

    std::chrono::system_clock::time_point wall_epoch() const noexcept { return wall_epoch_; }
    /// Wall time at scenario time `t`.
    std::chrono::system_clock::time_point wall_at(duration t) const {
        return wall_epoch_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(t);
    }

    // ---- the steps ----

    /// Adds a step at its `at` (scenario time), after the steps already due then.
    void schedule(testing::scenario_step step) {
        const auto pos = std::upper_bound(pending_.begin(), pending_.end(), step.at,
                                          [](duration t, const testing::scenario_step& s) { return t < s.at; });
        pending_.insert(pos, std::move(step));
    }
    std::optional<duration> next_step() const {
        if (pending_.empty()) return std::nullopt;
        return pending_.front().at;
    }
    /// The next step due at or before `t`, taken off the timeline; nothing when none is due.
    std::optional<testing::scenario_step> take_due(duration t) {
        if (pending_.empty() || pending_.front().at > t) return std::nullopt;
        testing::scenario_step s = std::move(pending_.front());
        pending_.pop_front();
        return s;
    }
    std::size_t pending() const noexcept { return pending_.size(); }

    /// Back to time 0 with no steps (the clock keeps running; its time now is the new start).
    void restart() {
        offset_ = duration(0);
        start_ = clock_.now();
        pending_.clear();
    }

private:
    std::chrono::system_clock::time_point wall_epoch_;
    forewarn::clock clock_;
    clock::time_point start_;
    double speed_ = 1.0;
    duration offset_{0};
    std::deque<testing::scenario_step> pending_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
