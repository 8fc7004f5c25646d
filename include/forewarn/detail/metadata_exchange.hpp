// SPDX-License-Identifier: MIT
#pragma once

// The skeleton every metadata client shares: the transport (one lane per concurrent request),
// the retry policy, the per-host rate limit, the request's debug line, cancellation, the
// configuration error, and the schedule of the keys a source watches (a hanging GET where the
// service has one, paced polling where not; no key ever waits for another key's answer).
// A cloud's client is then its vocabulary, its parser and its list of keys (docs/architecture.md).

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/retry.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// How a source asks one of its keys in the next round.
struct key_plan {
    enum class mode { hang, poll, off };
    mode how = mode::off;
    /// poll: the time from one ask to the next. hang: the longest hang (timeout_sec).
    clock::duration every{};

    /// A hanging GET that answers on a change, or after `longest` with the same value.
    static key_plan hang(std::chrono::seconds longest) { return {mode::hang, longest}; }
    /// A plain GET every `every`.
    static key_plan poll(clock::duration every) { return {mode::poll, every}; }
    /// Not asked (not wanted, or known not to exist here).
    static key_plan off() { return {mode::off, {}}; }
};

/// The settings a client gives its exchange.
struct exchange_settings {
    forewarn::clock clock;
    logger log;
    bool rate_limit = true;
    /// next(): after a failed document, the pause before the next one (the retries are done).
    clock::duration error_pause = std::chrono::seconds(1);
};

/**
 * One client's dealings with its metadata service. `lanes` transports (the first the one given,
 * the others copies of it) each with its own backoff sleep: lane 0 serves plain requests on the
 * caller's thread, lane k + 1 the hanging GET of key k. Movable (the state is behind a pointer);
 * one thread uses it at a time, wake(), cancel() and reset() may come from any thread.
 */
template <class Transport>
class metadata_exchange {
public:
    metadata_exchange(Transport transport, std::size_t lanes, exchange_settings settings, retry_policy policy)
        : s_(std::make_unique<state>(std::move(transport), (std::max)(lanes, std::size_t(1)), std::move(settings),
                                     std::move(policy))) {}

    const forewarn::clock& clock() const noexcept { return s_->settings.clock; }
    const logger& log() const noexcept { return s_->settings.log; }
    Transport& transport() noexcept { return s_->lanes.front()->transport; }
    const Transport& transport() const noexcept { return s_->lanes.front()->transport; }

    /// A configuration that can never work: every call fails with it.
    void set_config_error(error e) { s_->config_error = std::move(e); }
    const std::optional<error>& config_error() const noexcept { return s_->config_error; }
    result<void> validate() const {
        if (s_->config_error) return *s_->config_error;
        return {};
    }

    bool cancelled() const {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        return s_->cancelled;
    }

    /// One send on `lane`: the rate limit of the URL's host, the send, its debug line. The
    /// status is not looked at; a failed send names the URL.
    result<http_response> send_once(std::size_t lane, const http_request& req) {
        auto& l = *s_->lanes.at(lane);
        if (l.sleep.interrupted()) return error(errc::cancelled, "cancelled").at_url(req.url);
        if (s_->settings.rate_limit) {
            auto bucket = rate_limiter::for_host(url_authority(req.url), clock());
            if (!bucket->acquire(l.sleep)) return error(errc::cancelled, "cancelled while rate limited").at_url(req.url);
        }
        const auto started = clock().now();
        auto r = l.transport.send(req);
        if (log().enabled(log_level::debug))
            log()(log_level::debug, request_log_line(req, r, clock().now() - started), req.url);
        if (!r) return std::move(r).error().at_url(req.url);
        return r;
    }

    /// `attempt()` under the retry policy, its backoff on `lane`'s sleep (which cancel() cuts).
    template <class Attempt>
    auto run(std::size_t lane, Attempt&& attempt) -> decltype(attempt()) {
        return s_->policy.run(std::forward<Attempt>(attempt), s_->lanes.at(lane)->sleep, log());
    }

    /// send_once() with retries; `check(http_response&) -> result<T>` judges each answer.
    template <class Check>
    auto send(std::size_t lane, const http_request& req, Check&& check)
        -> decltype(check(std::declval<http_response&>())) {
        using R = decltype(check(std::declval<http_response&>()));
        return run(lane, [&]() -> R {
            auto r = send_once(lane, req);
            if (!r) return std::move(r).error();
            return check(*r);
        });
    }

    /// Ends the wait or the hanging GETs in progress in next(); the next document is then read
    /// at once with plain GETs. Not sticky beyond that.
    void wake() noexcept {
        {
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            s_->woken = true;
            for (auto& l : s_->lanes) {
                if (!l->watching) continue;
                l->transport.cancel();
                l->sleep.interrupt();
            }
        }
        s_->signal->notify_all();
    }

    /// The request in flight, any backoff and every wait return errc::cancelled promptly; sticky
    /// until reset().
    void cancel() noexcept {
        {
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            s_->cancelled = true;
            for (auto& l : s_->lanes) {
                l->transport.cancel();
                l->sleep.interrupt();
            }
        }
        s_->signal->notify_all();
    }

    void reset() noexcept {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        s_->cancelled = false;
        s_->woken = false;
        for (auto& l : s_->lanes) {
            l->transport.reset();
            l->sleep.reset();
        }
    }

    /**
     * Reads every key that is not off once, plainly, in order (a document's first reading).
     * `plan(k) -> key_plan`; `ask(k, lane, hang) -> result<bool>` (hang: nullopt for a plain GET).
     */
    template <class Plan, class Ask>
    result<void> read_all(std::size_t keys, Plan&& plan, Ask&& ask) {
        prepare_keys(keys);
        for (std::size_t k = 0; k < keys; ++k) {
            if (plan(k).how == key_plan::mode::off) continue;
            auto r = ask(k, std::size_t(0), std::optional<std::chrono::seconds>());
            s_->asked_at[k] = clock().now();
            if (!r) return std::move(r).error();
        }
        s_->synced = true;
        return {};
    }

    /**
     * The next document on the keys' own schedules. The first call, the one after wake() and the
     * one after a failure (which waits `error_pause` first) call `fetch()`, a plain reading of
     * every key. Otherwise one round: each hanging key's GET on a lane thread of its own, each
     * polled key asked on this thread when its time comes (never later than `not_after`). The
     * round ends when a key answers with a change (the others are cut short and keep their last
     * answer) or an error, or when every hanging GET has answered and every polled key has been
     * asked once; then `compose()` makes the document of what the keys hold.
     *
     * `ask(k, lane, hang)`: one request for key k (a hanging GET of `*hang` seconds when set),
     * storing the key's answer; true when its value changed since it was last composed. A key cut
     * short answers errc::cancelled and keeps what it had.
     */
    template <class Plan, class Ask, class Fetch, class Compose>
    result<document> next(clock::time_point not_after, std::size_t keys, Plan&& plan, Ask&& ask, Fetch&& fetch,
                          Compose&& compose) {
        if (s_->config_error) return *s_->config_error;
        if (s_->failed) {
            const auto due = forewarn::clock::saturating_add(clock().now(), s_->settings.error_pause);
            if (!pause_until((std::min)(due, not_after))) return cancelled_error();
        }
        if (cancelled()) return cancelled_error();
        result<document> r = cancelled_error();
        if (!s_->synced || take_woken()) {
            r = fetch();
        } else {
            r = round(not_after, keys, plan, ask, fetch, compose);
        }
        if (!r) s_->synced = false;
        s_->failed = !r && r.error().code != errc::cancelled;
        return r;
    }

private:
    struct lane_state {
        lane_state(Transport t, const forewarn::clock& c) : transport(std::move(t)), sleep(c) {}
        Transport transport;
        interruptible_sleep sleep;
        bool watching = false;  // a hanging GET of a round runs on it (wake() may cut it)
    };

    struct state {
        state(Transport t, std::size_t n, exchange_settings s, retry_policy p)
            : settings(std::move(s)), policy(std::move(p)), signal(std::make_shared<wake_signal>()) {
            lanes.reserve(n);
            for (std::size_t i = 1; i < n; ++i) {
                if constexpr (std::is_copy_constructible_v<Transport>) {
                    lanes.push_back(std::make_unique<lane_state>(Transport(t), settings.clock));
                }
            }
            lanes.insert(lanes.begin(), std::make_unique<lane_state>(std::move(t), settings.clock));
        }
        exchange_settings settings;
        retry_policy policy;
        std::vector<std::unique_ptr<lane_state>> lanes;
        std::shared_ptr<wake_signal> signal;  // its mutex guards the flags below and the lanes' watching
        bool cancelled = false;
        bool woken = false;
        bool synced = false;  // a document was had, and nothing failed since
        bool failed = false;
        std::optional<error> config_error;
        std::vector<clock::time_point> asked_at;  // each key's last ask (rounds and read_all)
    };

    error cancelled_error() const { return error(errc::cancelled, "cancelled"); }

    void prepare_keys(std::size_t keys) {
        if (s_->asked_at.size() != keys) s_->asked_at.assign(keys, clock().now());
    }

    bool take_woken() {
        std::lock_guard<std::mutex> lock(s_->signal->mutex);
        const bool w = s_->woken;
        s_->woken = false;
        return w;
    }

    // Waits until `until`, wake() or cancel(); false when cancelled.
    bool pause_until(clock::time_point until) {
        std::unique_lock<std::mutex> lock(s_->signal->mutex);
        clock().wait_until(s_->signal, lock, until, [this] { return s_->woken || s_->cancelled; });
        return !s_->cancelled;
    }

    // What one hanging lane left for the round.
    struct hang_outcome {
        bool done = false;
        bool changed = false;
        std::optional<error> failure;
    };

    template <class Plan, class Ask, class Fetch, class Compose>
    result<document> round(clock::time_point not_after, std::size_t keys, Plan& plan, Ask& ask, Fetch& fetch,
                           Compose& compose) {
        using std::chrono::seconds;
        prepare_keys(keys);
        const auto start = clock().now();
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
        if (!hanging.empty() && s_->lanes.size() < keys + 1)
            return error(errc::invalid_argument, "metadata_exchange: a hanging key needs a lane of its own");

        std::vector<hang_outcome> outcomes(keys);
        std::size_t hanging_left = hanging.size();
        bool stop = false;  // a hanging key changed or failed: the round is over
        const forewarn::clock& c = clock();
        std::vector<std::thread> workers;
        workers.reserve(hanging.size());
        {
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            for (const auto k : hanging) s_->lanes[k + 1]->watching = true;
        }
        auto hang_key = [&](std::size_t k) {
            const auto longest = std::chrono::duration_cast<seconds>(plans[k].every);
            const auto until_deadline = std::chrono::duration_cast<seconds>(not_after - start);
            auto r = ask(k, k + 1, std::optional<seconds>((std::max)(seconds(1), (std::min)(longest, until_deadline))));
            {
                std::lock_guard<std::mutex> lock(s_->signal->mutex);
                auto& o = outcomes[k];
                o.done = true;
                if (!r) {
                    o.failure = std::move(r).error();
                } else {
                    o.changed = *r;
                }
                if (o.changed || (o.failure && !(o.failure->code == errc::cancelled && s_->lanes[k + 1]->watching == false)))
                    stop = true;
                --hanging_left;
            }
            s_->signal->notify_all();
        };
        auto cut_hanging = [&] {
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            for (const auto k : hanging) {
                auto& l = *s_->lanes[k + 1];
                if (!l.watching) continue;
                l.watching = false;
                if (!outcomes[k].done) {
                    l.transport.cancel();
                    l.sleep.interrupt();
                }
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
            std::lock_guard<std::mutex> lock(s_->signal->mutex);
            if (s_->cancelled) return;
            for (const auto k : hanging) {
                s_->lanes[k + 1]->transport.reset();
                s_->lanes[k + 1]->sleep.reset();
            }
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
                    std::lock_guard<std::mutex> lock(s_->signal->mutex);
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
                std::unique_lock<std::mutex> lock(s_->signal->mutex);
                if (s_->cancelled || stop) break;
                if (s_->woken) {
                    woken = true;
                    s_->woken = false;
                    break;
                }
                bool pending = false;
                auto earliest = (clock::time_point::max)();
                for (const auto k : polled) {
                    pending = pending || !asked[k];
                    // `not_after` brings forward only a key not asked yet in this round: one asked
                    // already waits for its own cadence (else it would be asked again and again).
                    auto due = forewarn::clock::saturating_add(s_->asked_at[k], plans[k].every);
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
                    c.wait_until(s_->signal, lock, earliest, [&] {
                        return s_->cancelled || s_->woken || stop || hanging_left != left_before;
                    });
                    continue;
                }
            }
            auto r = ask(pick, std::size_t(0), std::optional<seconds>());
            s_->asked_at[pick] = c.now();
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
            if (log().enabled(log_level::warn))
                log()(log_level::warn, "a key failed while another changed: " + lane_failure->describe(), lane_failure->url);
        }
        if (woken) return fetch();
        return compose();
    }

    std::unique_ptr<state> s_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
