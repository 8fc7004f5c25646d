// SPDX-License-Identifier: MIT
#pragma once

// The timeline: scenario time and the steps waiting on it. This is the one place of the emulator
// that reads a clock: manual (advance() moves it; nothing happens on its own) or real time times a
// speed (the program). Wall time (Azure's NotBefore) is the wall epoch plus scenario time.

#include <forewarn/config.hpp>
#include <forewarn/testing/emulator/types.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
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

    explicit emulator_timeline(std::chrono::system_clock::time_point wall_epoch) : wall_epoch_(wall_epoch) {}

    // ---- the clock ----

    /// Real time × `speed` from now on; scenario time continues from where it is.
    void use_real_time(double speed) {
        offset_ = now();
        speed_ = speed > 0 ? speed : 1.0;
        real_ = true;
        real_start_ = std::chrono::steady_clock::now();
    }
    bool real_time() const noexcept { return real_; }
    /// Scenario seconds per real second; 0 on the manual clock.
    double speed() const noexcept { return real_ ? speed_ : 0.0; }

    /// Scenario time now.
    duration now() const {
        if (!real_) return manual_now_;
        const std::chrono::duration<double, std::milli> real = std::chrono::steady_clock::now() - real_start_;
        return offset_ + duration(static_cast<std::int64_t>(real.count() * speed_));
    }
    /// The time IMDS's 5 requests/s limit counts: it is a property of the real service seen by a
    /// real client, so real time for the program (whatever the speed), scenario time in-process.
    std::chrono::milliseconds limiter_now() const {
        if (!real_) return manual_now_;
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - real_start_);
    }
    /// Moves scenario time ahead by `d` (a real-time clock jumps ahead and keeps running).
    void jump(duration d) {
        if (d.count() <= 0) return;
        if (real_) offset_ += d;
        else manual_now_ += d;
    }

    std::chrono::system_clock::time_point wall_epoch() const noexcept { return wall_epoch_; }
    /// Wall time at scenario time `t`.
    std::chrono::system_clock::time_point wall_at(duration t) const {
        return wall_epoch_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(t);
    }

    /**
     * Waits on `cv` for a notification, or (real time) until scenario time `until`, whichever is
     * first; polls at least every 100 ms as a safety net. On the manual clock only a notification
     * ends it: time moves when someone calls advance(), which notifies.
     */
    void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, std::optional<duration> until) const {
        if (!real_) {
            cv.wait(lock);
            return;
        }
        std::chrono::milliseconds real_wait(100);
        if (until) {
            const auto ahead = (*until - now()).count();
            const auto ms = static_cast<std::int64_t>(static_cast<double>(ahead > 0 ? ahead : 0) / speed_) + 1;
            if (ms < real_wait.count()) real_wait = std::chrono::milliseconds(ms);
        }
        cv.wait_for(lock, real_wait);
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

    /// Back to time 0 with no steps; a real-time clock keeps its speed and restarts from now.
    void restart() {
        manual_now_ = duration(0);
        offset_ = duration(0);
        real_start_ = std::chrono::steady_clock::now();
        if (!real_) speed_ = 1.0;
        pending_.clear();
    }

private:
    std::chrono::system_clock::time_point wall_epoch_;
    bool real_ = false;
    double speed_ = 1.0;
    duration manual_now_{0};
    duration offset_{0};
    std::chrono::steady_clock::time_point real_start_{};
    std::deque<testing::scenario_step> pending_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
