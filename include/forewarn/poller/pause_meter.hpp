// SPDX-License-Identifier: MIT
#pragma once

// What each event really cost: while an event naming this VM is Started, a thread looks at the
// clocks every `look` (100 ms by default) and keeps, per event, the longest time a look came late
// on the monotonic clock and the largest jump of wall time against monotonic time. The poller
// owns one and gives the result with the event's recover change (change::pause). The thread
// starts with the first event watched, then sleeps with no deadline while none is, until stop().

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/hidden.hpp>
#include <forewarn/detail/worker.hpp>
#include <forewarn/diff.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/**
 * Measures the pauses this process lives through while events are watched. Thread-safe; its own
 * thread (on the clock given, so a manual clock counts it and sees it idle between looks).
 *
 * @code
 * forewarn::pause_meter m(forewarn::clock{}, std::chrono::milliseconds(100));
 * m.watch({"E1"});                  // E1 is Started and names this VM
 * // ... the VM freezes ...
 * m.watch({});                      // E1 is no longer Started
 * auto seen = m.take("E1");         // the longest pause seen while it was, and which clock saw it
 * @endcode
 */
class pause_meter {
public:
    /// `look`: how often the clocks are read while an event is watched (at least 1 ms).
    explicit pause_meter(forewarn::clock c = {}, std::chrono::nanoseconds look = std::chrono::milliseconds(100));
    pause_meter(const pause_meter&) = delete;
    pause_meter& operator=(const pause_meter&) = delete;
    ~pause_meter();

    /**
     * The events watched from now on: each id not watched yet begins (from this moment), each
     * watched one left out stops being watched after a last look and is kept until take().
     * Starts the thread when it has something new to watch and is not running; fails only when
     * a thread cannot be started (take() then gives nothing for the events).
     */
    result<void> watch(const std::vector<std::string>& ids);

    /**
     * watch() of the events of `d` that are under way (document::under_way: Started, or of a type
     * its source says is under way once announced) and name `self` or no VM at all. An empty
     * `self` (not known yet) matches only events that name no VM. Its error says what it was for.
     */
    result<void> watch_under_way(const document& d, const std::string& self);

    /// What was seen for `id` (a last look first when it is still watched), forgotten here;
    /// nothing when it was never watched or the thread does not run (stopped, or it could not
    /// start: the calls' own looks are the caller's cadence apart, not a pause).
    std::optional<observed_pause> take(const std::string& id);

    /// Ids watched now (for tests and metrics).
    std::size_t watching() const;

    /// Stops the thread and waits for it; what was recorded stays. watch() starts it again.
    void stop() noexcept;

    std::chrono::nanoseconds look_interval() const noexcept { return look_; }

private:
    struct record {
        observed_pause seen;
        clock::time_point since{};
        bool active = true;
    };

    void loop();
    // One look at both clocks; updates every active record. Under signal_->mutex.
    void look_locked();
    bool any_active_locked() const;

    forewarn::clock clock_;
    std::chrono::nanoseconds look_;
    std::shared_ptr<detail::wake_signal> signal_;
    // Under signal_->mutex:
    struct record_map;  // by id: an unordered_map, in pause_meter-inl.hpp
    detail::hidden<record_map> records_;
    struct clock_reading {
        clock::time_point steady;
        clock::wall_time_point wall;
    };
    std::optional<clock_reading> last_;              // the last look, while anything is watched
    std::uint64_t generation_ = 0;                   // bumped when the watched set changes
    detail::worker worker_;
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/poller/pause_meter-inl.hpp>
#endif
