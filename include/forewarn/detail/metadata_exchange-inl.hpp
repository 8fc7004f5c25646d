// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/metadata_exchange.hpp> (spdlog's -inl files): the key
// schedule, the same code for every client and transport. Header-only: included at the end of
// that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp).

#include <forewarn/detail/metadata_exchange.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <exception>
#include <thread>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE key_rounds::key_rounds(exchange_settings settings, lane_hooks lanes)
    : settings_(std::move(settings)), lanes_(std::move(lanes)), signal_(std::make_shared<wake_signal>()),
      watching_(lanes_.count, false) {}

FOREWARN_INLINE bool key_rounds::cancelled() const {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    return cancelled_;
}

FOREWARN_INLINE void key_rounds::wake() noexcept {
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        woken_ = true;
        for (std::size_t i = 0; i < watching_.size(); ++i)
            if (watching_[i]) lanes_.cut(i);
    }
    signal_->notify_all();
}

FOREWARN_INLINE void key_rounds::cancel() noexcept {
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        cancelled_ = true;
        for (std::size_t i = 0; i < lanes_.count; ++i) lanes_.cut(i);
    }
    signal_->notify_all();
}

FOREWARN_INLINE void key_rounds::reset() noexcept {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    cancelled_ = false;
    woken_ = false;
    for (std::size_t i = 0; i < lanes_.count; ++i) lanes_.reset(i);
}

FOREWARN_INLINE void key_rounds::prepare_keys(std::size_t keys) {
    if (asked_at_.size() != keys) asked_at_.assign(keys, settings_.clock.now());
}

FOREWARN_INLINE bool key_rounds::take_woken() {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    const bool w = woken_;
    woken_ = false;
    return w;
}

FOREWARN_INLINE bool key_rounds::pause_until(clock::time_point until) {
    std::unique_lock<std::mutex> lock(signal_->mutex);
    settings_.clock.wait_until(signal_, lock, until, [this] { return woken_ || cancelled_; });
    return !cancelled_;
}

FOREWARN_INLINE result<void> key_rounds::read_all(std::size_t keys, const plan_fn& plan, const ask_fn& ask) {
    prepare_keys(keys);
    for (std::size_t k = 0; k < keys; ++k) {
        if (plan(k).how == key_plan::mode::off) continue;
        auto r = ask(k, std::size_t(0), std::optional<std::chrono::seconds>());
        asked_at_[k] = settings_.clock.now();
        if (!r) return std::move(r).error();
    }
    synced_ = true;
    return {};
}

FOREWARN_INLINE result<document> key_rounds::next(clock::time_point not_after, std::size_t keys, const plan_fn& plan,
                                                 const ask_fn& ask, const document_fn& fetch,
                                                 const document_fn& compose) {
    if (failed_) {
        const auto due = forewarn::clock::saturating_add(settings_.clock.now(), settings_.error_pause);
        if (!pause_until((std::min)(due, not_after))) return cancelled_error();
    }
    if (cancelled()) return cancelled_error();
    result<document> r = cancelled_error();
    if (!synced_ || take_woken()) {
        r = fetch();
    } else {
        r = round(not_after, keys, plan, ask, fetch, compose);
    }
    if (!r) synced_ = false;
    failed_ = !r && r.error().code != errc::cancelled;
    return r;
}

FOREWARN_INLINE result<document> key_rounds::round(clock::time_point not_after, std::size_t keys, const plan_fn& plan,
                                              const ask_fn& ask, const document_fn& fetch, const document_fn& compose) {
    using std::chrono::seconds;
    prepare_keys(keys);
    const auto start = settings_.clock.now();
    std::vector<key_plan> plans(keys);
    std::vector<std::size_t> hanging;
    std::vector<std::size_t> polled;
    for (std::size_t k = 0; k < keys; ++k) {
        plans[k] = plan(k);
        if (plans[k].how == key_plan::mode::hang) hanging.push_back(k);
        if (plans[k].how == key_plan::mode::poll) polled.push_back(k);
    }
    // A hanging GET is a whole number of seconds: under one second left, read plainly.
    const auto left = not_after - start;
    if (!hanging.empty() && left < seconds(1)) return fetch();
    if (!hanging.empty() && lanes_.count < keys + 1)
        return error(errc::invalid_argument, "metadata_exchange: a hanging key needs a lane of its own");

    std::vector<hang_outcome> outcomes(keys);
    std::size_t hanging_left = hanging.size();
    bool stop = false;  // a hanging key changed or failed: the round is over
    const forewarn::clock& c = settings_.clock;
    std::vector<std::thread> workers;
    workers.reserve(hanging.size());
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        for (const auto k : hanging) watching_[k + 1] = true;
    }
    auto hang_key = [&](std::size_t k) {
        const auto longest = std::chrono::duration_cast<seconds>(plans[k].every);
        const auto until_deadline = std::chrono::duration_cast<seconds>(not_after - start);
        auto r = ask(k, k + 1, std::optional<seconds>((std::max)(seconds(1), (std::min)(longest, until_deadline))));
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            auto& o = outcomes[k];
            o.done = true;
            if (!r) {
                o.failure = std::move(r).error();
            } else {
                o.changed = *r;
            }
            if (o.changed || (o.failure && !(o.failure->code == errc::cancelled && watching_[k + 1] == false)))
                stop = true;
            --hanging_left;
        }
        signal_->notify_all();
    };
    auto cut_hanging = [&] {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        for (const auto k : hanging) {
            if (!watching_[k + 1]) continue;
            watching_[k + 1] = false;
            if (!outcomes[k].done) lanes_.cut(k + 1);
        }
    };
    bool finished = false;
    auto finish = [&] {
        if (finished) return;
        finished = true;
        cut_hanging();
        for (auto& w : workers)
            if (w.joinable()) w.join();
        // The lanes cut short are usable again, unless the client itself was cancelled.
        std::lock_guard<std::mutex> lock(signal_->mutex);
        if (cancelled_) return;
        for (const auto k : hanging) lanes_.reset(k + 1);
    };

    // Should anything below throw (an allocation), the lane threads are still cut and joined.
    struct join_on_exit {
        decltype(finish)& f;
        ~join_on_exit() { f(); }
    } joiner{finish};
    for (const auto k : hanging) {
        c.thread_started();
        try {
            workers.emplace_back([&hang_key, k, c] {
                hang_key(k);
                c.thread_ended();
            });
        } catch (const std::exception& ex) {
            c.thread_ended();
            {
                std::lock_guard<std::mutex> lock(signal_->mutex);
                hanging_left -= hanging.size() - workers.size();
            }
            finish();
            return error(errc::transport, std::string("could not start a watch thread: ") + ex.what());
        }
    }

    std::vector<bool> asked(keys, false);
    std::optional<error> failure;
    bool woken = false;
    bool changed = false;
    for (;;) {
        std::size_t pick = keys;
        {
            std::unique_lock<std::mutex> lock(signal_->mutex);
            if (cancelled_ || stop) break;
            if (woken_) {
                woken = true;
                woken_ = false;
                break;
            }
            bool pending = false;
            auto earliest = (clock::time_point::max)();
            for (const auto k : polled) {
                pending = pending || !asked[k];
                // `not_after` brings forward only a key not asked yet in this round: one asked
                // already waits for its own cadence (else it would be asked again and again).
                auto due = forewarn::clock::saturating_add(asked_at_[k], plans[k].every);
                if (!asked[k]) due = (std::min)(due, not_after);
                if (due < earliest || (due == earliest && pick != keys && asked[pick] && !asked[k])) {
                    earliest = due;
                    pick = k;
                }
            }
            if (hanging_left == 0 && !pending) break;  // the round is complete
            const auto now = c.now();
            if (pick == keys || now < earliest) {
                const std::size_t left_before = hanging_left;
                c.wait_until(signal_, lock, earliest, [&] {
                    return cancelled_ || woken_ || stop || hanging_left != left_before;
                });
                continue;
            }
        }
        auto r = ask(pick, std::size_t(0), std::optional<seconds>());
        asked_at_[pick] = c.now();
        asked[pick] = true;
        if (!r) {
            failure = std::move(r).error();
            break;
        }
        if (*r) {
            changed = true;
            break;  // a change: the round is over
        }
    }
    finish();
    if (cancelled()) return cancelled_error();
    woken = woken || take_woken();
    for (const auto k : hanging) changed = changed || outcomes[k].changed;
    // A test transport's copies may share one cancel flag: wake() cutting a hanging lane
    // then cancels the polled request too. That is the wake, not a failure.
    if (failure && failure->code == errc::cancelled && woken) failure.reset();
    std::optional<error> lane_failure;
    for (const auto k : hanging) {
        auto& o = outcomes[k];
        if (o.failure && o.failure->code != errc::cancelled && !lane_failure) lane_failure = o.failure;
    }
    if (failure) return *failure;
    if (lane_failure) {
        // A change found by another key is not thrown away for it: the next round asks the
        // failed key again (and fails then, if it still does).
        if (!changed) return *lane_failure;
        if (settings_.log.enabled(log_level::warn))
            settings_.log(log_level::warn, "a key failed while another changed: " + lane_failure->describe(), lane_failure->url);
    }
    if (woken) return fetch();
    return compose();
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
