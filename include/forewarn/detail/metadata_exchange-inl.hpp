// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/metadata_exchange.hpp> (spdlog's -inl files): the key
// schedule, the same code for every client and transport. Header-only: included at the end of
// that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp).

#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <algorithm>
#include <exception>
#include <thread>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE key_rounds::key_rounds(exchange_settings settings, lane_hooks lanes)
    : settings_(std::move(settings)), lanes_(std::move(lanes)), signal_(std::make_shared<wake_signal>()),
      watching_(lanes_.count, 0) {}

FOREWARN_INLINE bool key_rounds::cancelled() const {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    return cancelled_;
}

FOREWARN_INLINE void key_rounds::wake() noexcept {
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        woken_ = true;
        for (std::size_t i = 0; i < watching_.size(); ++i)
            if (watching_[i]) cut_lane(i);
    }
    signal_->notify_all();
}

FOREWARN_INLINE void key_rounds::cancel() noexcept {
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        cancelled_ = true;
        for (std::size_t i = 0; i < lanes_.count; ++i) cut_lane(i);
    }
    signal_->notify_all();
}

FOREWARN_INLINE void key_rounds::reset() noexcept {
    std::lock_guard<std::mutex> lock(signal_->mutex);
    cancelled_ = false;
    woken_ = false;
    for (std::size_t i = 0; i < lanes_.count; ++i) reset_lane(i);
}

FOREWARN_INLINE void key_rounds::prepare_keys(std::size_t keys) {
    if (asked_at_.size() != keys) asked_at_.assign(keys, settings_.clock.now());
    if (planned_.size() != keys) planned_.assign(keys, 0);
}

FOREWARN_INLINE void key_rounds::note_plan(std::size_t k, const key_plan& p) {
    const bool on = p.how != key_plan::mode::off;
    if (on && !planned_[k] && p.own_cadence) asked_at_[k] = (clock::time_point::min)();
    planned_[k] = on ? 1 : 0;
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

FOREWARN_INLINE result<void> key_rounds::read_all(std::size_t keys, plan_fn plan, ask_fn ask) {
    prepare_keys(keys);
    for (std::size_t k = 0; k < keys; ++k) {
        const key_plan p = plan(k);
        note_plan(k, p);
        if (p.how == key_plan::mode::off) continue;
        // A key on its own cadence is a call, not part of the document. Within next() only rounds
        // ask it (the next one first thing, when due): the caller sees the document that follows a
        // wake() (a declined approval lets go of a heartbeat the source holds) before another call
        // can go out.
        if (p.own_cadence && (in_next_ || settings_.clock.now() < forewarn::clock::saturating_add(asked_at_[k], p.every)))
            continue;
        auto r = ask(k, std::size_t(0), std::optional<std::chrono::seconds>());
        asked_at_[k] = settings_.clock.now();
        if (!r) return std::move(r).error();
    }
    synced_ = true;
    return {};
}

FOREWARN_INLINE result<document> key_rounds::next(clock::time_point not_after, std::size_t keys, plan_fn plan, ask_fn ask,
                                                 document_fn fetch, document_fn compose, hang_driver hangs) {
    if (failed_) {
        const auto due = forewarn::clock::saturating_add(settings_.clock.now(), settings_.error_pause);
        if (!pause_until((std::min)(due, not_after))) return cancelled_error();
    }
    if (cancelled()) return cancelled_error();
    in_next_ = true;
    struct reading_for_next {  // cleared on every way out
        bool& flag;
        ~reading_for_next() { flag = false; }
    } reading{in_next_};
    result<document> r = !synced_ || take_woken() ? fetch() : round(not_after, keys, plan, ask, fetch, compose, hangs);
    if (!r) synced_ = false;
    failed_ = !r && r.error().code != errc::cancelled;
    return r;
}

FOREWARN_INLINE void key_rounds::hang_one(round_state& st, std::size_t k) {
    using std::chrono::seconds;
    const auto longest = std::chrono::duration_cast<seconds>(st.plans[k].every);
    const auto until_deadline = std::chrono::duration_cast<seconds>(st.not_after - st.start);
    auto r = (*st.ask)(k, k + 1, std::optional<seconds>((std::max)(seconds(1), (std::min)(longest, until_deadline))));
    {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        auto& o = st.outcomes[k];
        o.done = true;
        if (!r) {
            o.failure = std::move(r).error();
        } else {
            o.changed = *r;
        }
        if (o.changed || (o.failure && !(o.failure->code == errc::cancelled && watching_[k + 1] == 0)))
            st.stop = true;
        --st.hanging_left;
    }
    signal_->notify_all();
}

FOREWARN_INLINE result<void> key_rounds::drive_hanging(key_rounds& self, round_state& st, bool begin) {
    const forewarn::clock& c = self.settings_.clock;
    if (begin) {
        {
            std::lock_guard<std::mutex> lock(self.signal_->mutex);
            for (const auto k : st.hanging) self.watching_[k + 1] = 1;
        }
        st.threads.reserve(st.hanging.size());
        for (const auto k : st.hanging) {
            c.thread_started();
            try {
                st.threads.emplace_back([&self, &st, k, c] {
                    self.hang_one(st, k);
                    c.thread_ended();
                });
            } catch (const std::exception& ex) {
                c.thread_ended();
                {
                    std::lock_guard<std::mutex> lock(self.signal_->mutex);
                    st.hanging_left -= st.hanging.size() - st.threads.size();
                }
                drive_hanging(self, st, false);
                return error(errc::transport, std::string("could not start a watch thread: ") + ex.what());
            }
        }
        return {};
    }
    if (st.finished) return {};
    st.finished = true;
    {
        std::lock_guard<std::mutex> lock(self.signal_->mutex);
        for (const auto k : st.hanging) {
            if (!self.watching_[k + 1]) continue;
            self.watching_[k + 1] = 0;
            if (!st.outcomes[k].done) self.cut_lane(k + 1);
        }
    }
    for (auto& t : st.threads)
        if (t.joinable()) t.join();
    // The lanes cut short are usable again, unless the client itself was cancelled.
    std::lock_guard<std::mutex> lock(self.signal_->mutex);
    if (self.cancelled_) return {};
    for (const auto k : st.hanging) self.reset_lane(k + 1);
    return {};
}

FOREWARN_INLINE result<document> key_rounds::round(clock::time_point not_after, std::size_t keys, plan_fn plan, ask_fn ask,
                                              document_fn fetch, document_fn compose, hang_driver hangs) {
    using std::chrono::seconds;
    prepare_keys(keys);
    round_state st;
    st.start = settings_.clock.now();
    st.not_after = not_after;
    st.ask = &ask;
    st.plans.resize(keys);
    std::vector<std::size_t> polled;
    for (std::size_t k = 0; k < keys; ++k) {
        st.plans[k] = plan(k);
        note_plan(k, st.plans[k]);
        if (st.plans[k].how == key_plan::mode::hang) st.hanging.push_back(k);
        if (st.plans[k].how == key_plan::mode::poll) polled.push_back(k);
    }
    if (!st.hanging.empty()) {
        if (!hangs) return error(errc::invalid_argument, "metadata_exchange: a hanging key needs next<true>()");
        // A hanging GET is a whole number of seconds: under one second left, read plainly.
        if (not_after - st.start < seconds(1)) return fetch();
        if (lanes_.count < keys + 1)
            return error(errc::invalid_argument, "metadata_exchange: a hanging key needs a lane of its own");
    }
    st.outcomes.resize(keys);
    st.hanging_left = st.hanging.size();

    // Should anything below throw (an allocation), the lane threads are still cut and joined.
    struct end_hanging {
        key_rounds& self;
        round_state& st;
        hang_driver hangs;
        void operator()() {
            if (hangs) hangs(self, st, false);
        }
        ~end_hanging() { (*this)(); }
    } end{*this, st, st.hanging.empty() ? nullptr : hangs};
    if (end.hangs) {
        auto started = hangs(*this, st, true);
        if (!started) return std::move(started).error();
    }

    const forewarn::clock& c = settings_.clock;
    std::vector<std::size_t> asked(keys, 0);  // flags; one vector type for all the round's lists
    std::optional<error> failure;
    bool woken = false;
    bool changed = false;
    for (;;) {
        std::size_t pick = keys;
        {
            std::unique_lock<std::mutex> lock(signal_->mutex);
            if (cancelled_ || st.stop) break;
            if (woken_) {
                woken = true;
                woken_ = false;
                break;
            }
            bool pending = false;
            auto earliest = (clock::time_point::max)();
            for (const auto k : polled) {
                // A key on its own cadence (a heartbeat) is asked whenever it is due, as often
                // as that comes within the round: the round's length (the slowest key's interval)
                // never stretches it. It never keeps the round going either.
                const bool own = st.plans[k].own_cadence;
                pending = pending || (!asked[k] && !own);
                // `not_after` brings forward only a key not asked yet in this round: one asked
                // already waits for its own cadence (else it would be asked again and again).
                auto due = forewarn::clock::saturating_add(asked_at_[k], st.plans[k].every);
                if (!asked[k] && !own) due = (std::min)(due, not_after);
                if (due < earliest || (due == earliest && pick != keys && asked[pick] && !asked[k])) {
                    earliest = due;
                    pick = k;
                }
            }
            if (st.hanging_left == 0 && !pending) break;  // the round is complete
            const auto now = c.now();
            if (pick == keys || now < earliest) {
                const std::size_t left_before = st.hanging_left;
                c.wait_until(signal_, lock, earliest, [&] {
                    return cancelled_ || woken_ || st.stop || st.hanging_left != left_before;
                });
                continue;
            }
        }
        auto r = ask(pick, std::size_t(0), std::optional<seconds>());
        asked_at_[pick] = c.now();
        asked[pick] = 1;
        if (!r) {
            failure = std::move(r).error();
            break;
        }
        if (*r) {
            changed = true;
            break;  // a change: the round is over
        }
    }
    end();
    if (cancelled()) return cancelled_error();
    woken = woken || take_woken();
    for (const auto k : st.hanging) changed = changed || st.outcomes[k].changed;
    // A test transport's copies may share one cancel flag: wake() cutting a hanging lane
    // then cancels the polled request too. That is the wake, not a failure.
    if (failure && failure->code == errc::cancelled && woken) failure.reset();
    const error* lane_failure = nullptr;
    for (const auto k : st.hanging) {
        auto& o = st.outcomes[k];
        if (o.failure && o.failure->code != errc::cancelled && !lane_failure) lane_failure = &*o.failure;
    }
    if (failure) return *failure;
    if (lane_failure) {
        // A change found by another key is not thrown away for it: the next round asks the
        // failed key again (and fails then, if it still does).
        if (!changed) return *lane_failure;
        if (settings_.log.enabled(log_level::warn))
            settings_.log(log_level::warn, cat({"a key failed while another changed: ", lane_failure->describe()}), lane_failure->url);
    }
    if (woken) return fetch();
    return compose();
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
