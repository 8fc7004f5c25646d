// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/poller/pause_meter.hpp> (spdlog's -inl files): included at the end of that
// header when FOREWARN_HEADER_DEFINITIONS is 1; compiled once into libforewarn in compiled mode.

#include <forewarn/poller/pause_meter.hpp>

#if FOREWARN_HEADER_DEFINITIONS

#include <forewarn/detail/hidden-inl.hpp>
#include <forewarn/detail/strings.hpp>

#include <algorithm>
#include <unordered_map>
#include <utility>

FOREWARN_BEGIN_NAMESPACE

struct pause_meter::record_map : std::unordered_map<std::string, record> {};

FOREWARN_INLINE FOREWARN_COLD result<void> pause_meter::watch_under_way(const document& d, const std::string& self) {
    std::vector<std::string> ids;
    for (const auto& e : d.events)
        if (d.under_way(e) && (e.resources.empty() || (!self.empty() && e.affects(self)))) ids.push_back(e.id);
    auto r = watch(ids);
    if (!r) return error(r.error().code, detail::cat({"cannot measure the pause of an event under way: ", r.error().message}));
    return r;
}

FOREWARN_INLINE FOREWARN_COLD pause_meter::pause_meter(forewarn::clock c, std::chrono::nanoseconds look)
    : clock_(std::move(c)), look_((std::max)(look, std::chrono::nanoseconds(std::chrono::milliseconds(1)))),
      signal_(std::make_shared<detail::wake_signal>()), worker_(signal_) {}

FOREWARN_INLINE FOREWARN_COLD pause_meter::~pause_meter() { stop(); }

FOREWARN_INLINE FOREWARN_COLD void pause_meter::stop() noexcept {
    worker_.stop();
    // Nobody looked while stopped: the next watch() starts a new time line instead of taking the
    // time stopped for a pause.
    std::lock_guard<std::mutex> lock(signal_->mutex);
    last_.reset();
}

FOREWARN_INLINE FOREWARN_COLD bool pause_meter::any_active_locked() const {
    return std::any_of(records_->begin(), records_->end(), [](const auto& r) { return r.second.active; });
}

FOREWARN_INLINE FOREWARN_COLD void pause_meter::look_locked() {
    const auto now = clock_.now();
    const auto wall = clock_.wall_now();
    if (last_) {
        const auto due = forewarn::clock::saturating_add(last_->steady, look_);
        const std::chrono::nanoseconds late = now > due ? now - due : std::chrono::nanoseconds(0);
        const std::chrono::nanoseconds steady_moved = now - last_->steady;
        const auto wall_moved = std::chrono::duration_cast<std::chrono::nanoseconds>(wall - last_->wall);
        const std::chrono::nanoseconds jump = wall_moved > steady_moved ? wall_moved - steady_moved : std::chrono::nanoseconds(0);
        for (auto& [id, r] : *records_) {
            if (!r.active) continue;
            auto& s = r.seen;
            s.monotonic_gap = (std::max)(s.monotonic_gap, late);
            s.wall_jump = (std::max)(s.wall_jump, jump);
            s.longest = (std::max)(s.monotonic_gap, s.wall_jump);
            s.watched = now - r.since;
            ++s.looks;
        }
    }
    last_ = clock_reading{now, wall};
}

FOREWARN_INLINE FOREWARN_COLD result<void> pause_meter::watch(const std::vector<std::string>& ids) {
    bool start = false, changed = false;
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        if (any_active_locked() && last_) look_locked();  // the last look for those that stop being watched
        for (auto& [id, r] : *records_) {
            const bool still = std::find(ids.begin(), ids.end(), id) != ids.end();
            if (r.active && !still) {
                r.active = false;
                changed = true;
            }
        }
        for (const auto& id : ids) {
            auto it = records_->find(id);
            if (it != records_->end()) {
                if (it->second.active) continue;
                records_->erase(it);  // Started again after it stopped (not seen by this process): anew
            }
            record r;
            r.since = clock_.now();
            records_->emplace(id, r);
            changed = true;
        }
        if (!any_active_locked()) {
            last_.reset();
        } else if (!last_) {
            look_locked();  // the first look of a time line: it starts here
            changed = true;  // the thread's wait has a deadline again
        }
        if (changed) ++generation_;
        // Started again only with something new to watch: a thread that cannot start is reported
        // once per change, not at every poll.
        start = changed && any_active_locked() && !worker_.running();
    }
    // Only after a change its wait looks for (the generation): a wake-up with nothing changed
    // could reach the thread between its look at the predicate and its sleep, and a manual clock
    // would count it awake while it sleeps.
    if (changed) signal_->notify_all();
    if (!start) return {};
    return worker_.start(clock_, [this] { loop(); }, {});
}

FOREWARN_INLINE FOREWARN_COLD std::optional<observed_pause> pause_meter::take(const std::string& id) {
    std::optional<observed_pause> out;
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        auto it = records_->find(id);
        if (it == records_->end()) return std::nullopt;
        // Without the thread (stopped, or it could not start) the calls' own looks are as far
        // apart as the caller's cadence, not a pause: nothing is measured.
        const bool measured = worker_.running();
        if (measured && it->second.active) look_locked();
        if (measured) out = it->second.seen;
        records_->erase(it);
        if (!any_active_locked()) last_.reset();
        ++generation_;
    }
    signal_->notify_all();
    return out;
}

FOREWARN_INLINE FOREWARN_COLD std::size_t pause_meter::watching() const {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    return static_cast<std::size_t>(
        std::count_if(records_->begin(), records_->end(), [](const auto& r) { return r.second.active; }));
}

FOREWARN_INLINE FOREWARN_COLD void pause_meter::loop() {
    std::unique_lock<std::mutex> lock(signal_->mutex);
    while (!worker_.stop_requested_locked()) {
        const auto seen = generation_;
        const auto deadline = any_active_locked() && last_ ? forewarn::clock::saturating_add(last_->steady, look_)
                                                           : (forewarn::clock::time_point::max)();
        clock_.wait_until(signal_, lock, deadline,
                          [&] { return worker_.stop_requested_locked() || generation_ != seen; });
        if (worker_.stop_requested_locked()) break;
        if (generation_ != seen) continue;  // the watched set changed: a new deadline
        if (any_active_locked() && last_ && clock_.now() >= forewarn::clock::saturating_add(last_->steady, look_)) look_locked();
    }
}

FOREWARN_END_NAMESPACE

#endif
