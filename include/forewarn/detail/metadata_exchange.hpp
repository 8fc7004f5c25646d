// SPDX-License-Identifier: MIT
#pragma once

// The skeleton every metadata client shares: the transport (one lane per concurrent request),
// the retry policy, the per-host rate limit, the request's debug line, cancellation, the
// configuration error, and the schedule of the keys a source watches (a hanging GET where the
// service has one, paced polling where not; no key ever waits for another key's answer).
// A cloud's client is then its vocabulary, its parser and its list of keys (docs/architecture.md).

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport/retry.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
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
    /// poll only: the key keeps its own cadence alone (a heartbeat while an action is held). Asked
    /// by the first round after it is planned, then every `every`: never sooner because a document
    /// is wanted sooner, never by next()'s plain readings, and a round never waits for it. A plain
    /// fetch() by the caller asks it when due.
    bool own_cadence = false;

    /// A hanging GET that answers on a change, or after `longest` with the same value.
    static key_plan hang(std::chrono::seconds longest) { return {mode::hang, longest}; }
    /// A plain GET every `every`.
    static key_plan poll(clock::duration every) { return {mode::poll, every}; }
    /// A call every `every` on its own cadence alone (see own_cadence).
    static key_plan beat(clock::duration every) { return {mode::poll, every, true}; }
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
 * The schedule of a source's keys: the rounds of next(), its wake(), cancel() and reset(). Not a
 * template (compiled once, in libforewarn in compiled mode): it reaches the lanes through `lane_hooks`.
 */
class key_rounds {
public:
    /// How the schedule reaches the lanes: cut one (cancel its request and backoff) or reset it.
    /// `cut(context, lane)` and `reset(context, lane)`: the lanes' owner is `context`.
    struct lane_hooks {
        std::size_t count = 1;
        void* context = nullptr;
        void (*cut)(void*, std::size_t) noexcept = nullptr;
        void (*reset)(void*, std::size_t) noexcept = nullptr;
    };
    // Callbacks of one call (not kept): references, not std::function.
    using plan_fn = function_ref<key_plan(std::size_t)>;
    /// ask(k, lane, hang): one request for key k (a hanging GET of `*hang` seconds when set).
    using ask_fn = function_ref<result<bool>(std::size_t, std::size_t, std::optional<std::chrono::seconds>)>;
    using document_fn = function_ref<result<document>()>;
    struct round_state;
    using hang_driver = result<void> (*)(key_rounds&, round_state&, bool begin);

    key_rounds(exchange_settings settings, lane_hooks lanes);

    const forewarn::clock& clock() const noexcept { return settings_.clock; }
    const logger& log() const noexcept { return settings_.log; }

    bool cancelled() const;
    void wake() noexcept;
    void cancel() noexcept;
    void reset() noexcept;

    /// Every key that is not off, once, plainly, in order (a document's first reading); a key on
    /// its own cadence only when due, and never within next(), which leaves it to its rounds.
    result<void> read_all(std::size_t keys, plan_fn plan, ask_fn ask);

    /**
     * The next document on the keys' own schedules. The first call, the one after wake() and the
     * one after a failure (which waits `error_pause` first) call `fetch()`, a plain reading of
     * every key. Otherwise one round: each hanging key's GET on a lane thread of its own, each
     * polled key asked on this thread when its time comes (a key not asked yet in this round no
     * later than `not_after`). The round ends when a key answers with a change (the others are
     * cut short and keep their last answer) or an error, or when every hanging GET has answered
     * and every polled key has been asked once; then `compose()` makes the document of what the
     * keys hold. `ask` stores the key's answer and says whether it changed since it was last
     * composed; a key cut short answers errc::cancelled and keeps what it had.
     */
    result<document> next(clock::time_point not_after, std::size_t keys, plan_fn plan, ask_fn ask, document_fn fetch,
                          document_fn compose, hang_driver hangs);

    /// One round's bookkeeping (a hanging lane's thread writes it under the signal's mutex).
    struct round_state {
        // What one hanging lane left for the round.
        struct hang_outcome {
            bool done = false;
            bool changed = false;
            std::optional<error> failure;
        };
        clock::time_point start;
        clock::time_point not_after;
        const ask_fn* ask = nullptr;
        std::vector<key_plan> plans;
        std::vector<std::size_t> hanging;
        std::vector<hang_outcome> outcomes;
        std::size_t hanging_left = 0;
        bool stop = false;  // a hanging key changed or failed: the round is over
        bool finished = false;
        std::vector<std::thread> threads;
    };
    /// The hanging GETs of a round, on lane threads: `begin` starts them, then (once) they are cut
    /// and joined. Only a client with a hanging key names it (metadata_exchange::next<true>),
    /// so a program whose clients only poll never compiles lane threads.
    static result<void> drive_hanging(key_rounds& self, round_state& st, bool begin);

private:
    void hang_one(round_state& st, std::size_t k);

    error cancelled_error() const { return error(errc::cancelled, "cancelled"); }
    void prepare_keys(std::size_t keys);
    bool take_woken();
    bool pause_until(clock::time_point until);  // until `until`, wake() or cancel(); false when cancelled
    void cut_lane(std::size_t i) noexcept { lanes_.cut(lanes_.context, i); }
    void reset_lane(std::size_t i) noexcept { lanes_.reset(lanes_.context, i); }
    result<document> round(clock::time_point not_after, std::size_t keys, plan_fn plan, ask_fn ask, document_fn fetch,
                           document_fn compose, hang_driver hangs);

    exchange_settings settings_;
    lane_hooks lanes_;
    std::shared_ptr<wake_signal> signal_;  // its mutex guards the flags below
    bool cancelled_ = false;
    bool woken_ = false;
    std::vector<std::size_t> watching_;  // per lane, 1: a hanging GET of a round runs on it (wake() cuts it)
    bool synced_ = false;  // a document was had, and nothing failed since
    bool in_next_ = false; // next() is reading: its plain readings leave own-cadence keys to its rounds
    bool failed_ = false;
    std::vector<clock::time_point> asked_at_;  // each key's last ask (rounds and read_all)
    std::vector<char> planned_;  // each key, 1: planned (not off) at the last look
    void note_plan(std::size_t k, const key_plan& p);
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
        : s_(std::make_unique<state>(std::move(transport), detail::larger(lanes, std::size_t(1)), std::move(settings),
                                     std::move(policy))) {}

    const forewarn::clock& clock() const noexcept { return s_->rounds.clock(); }
    const logger& log() const noexcept { return s_->rounds.log(); }
    Transport& transport() noexcept { return s_->lane(0).transport; }
    const Transport& transport() const noexcept { return s_->lane(0).transport; }

    /// A configuration that can never work: every call fails with it.
    void set_config_error(error e) { s_->config_error = std::move(e); }
    const std::optional<error>& config_error() const noexcept { return s_->config_error; }
    result<void> validate() const {
        if (s_->config_error) return *s_->config_error;
        return {};
    }

    bool cancelled() const { return s_->rounds.cancelled(); }

    /// One send on `lane`: the rate limit of the URL's host, the send, its debug line. The
    /// status is not looked at; a failed send names the URL.
    result<http_response> send_once(std::size_t lane, const http_request& req) {
        auto& l = s_->lane(lane);
        if (l.sleep.interrupted()) return error(errc::cancelled, "cancelled").at_url(req.url);
        if (s_->rate_limit) {
            const auto host = url_authority(req.url);
            if (!l.limiter || host != l.limited_host) {
                l.limiter = rate_limiter::for_host(host, clock());
                l.limited_host.assign(host.data(), host.size());
            }
            if (!l.limiter->acquire(l.sleep))
                return error(errc::cancelled, "cancelled while rate limited").at_url(req.url);
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
        return s_->policy.run(std::forward<Attempt>(attempt), s_->lane(lane).sleep, log());
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
    void wake() noexcept { s_->rounds.wake(); }
    /// The request in flight, any backoff and every wait return errc::cancelled promptly; sticky
    /// until reset().
    void cancel() noexcept { s_->rounds.cancel(); }
    void reset() noexcept { s_->rounds.reset(); }

    /// key_rounds::read_all: `plan(k) -> key_plan`, `ask(k, lane, hang) -> result<bool>`.
    template <class Plan, class Ask>
    result<void> read_all(std::size_t keys, Plan&& plan, Ask&& ask) {
        return s_->rounds.read_all(keys, std::forward<Plan>(plan), std::forward<Ask>(ask));
    }

    /// key_rounds::next, after the configuration error. `MayHang`: a key may be planned as a
    /// hanging GET; a client whose keys only poll leaves it false and compiles no lane threads.
    template <bool MayHang = false, class Plan, class Ask, class Fetch, class Compose>
    result<document> next(clock::time_point not_after, std::size_t keys, Plan&& plan, Ask&& ask, Fetch&& fetch,
                          Compose&& compose) {
        if (s_->config_error) return *s_->config_error;
        key_rounds::hang_driver hangs = nullptr;
        if constexpr (MayHang) hangs = &key_rounds::drive_hanging;
        return s_->rounds.next(not_after, keys, std::forward<Plan>(plan), std::forward<Ask>(ask),
                               std::forward<Fetch>(fetch), std::forward<Compose>(compose), hangs);
    }

private:
    struct lane_state {
        lane_state(Transport t, const forewarn::clock& c) : transport(std::move(t)), sleep(c) {}
        Transport transport;
        interruptible_sleep sleep;
        // The rate limiter of the host this lane last asked (rate_limiter::for_host looked up
        // once per host, not per request).
        std::string limited_host;
        std::shared_ptr<rate_limiter> limiter;
    };

    struct state {
        // A transport that cannot be copied gives one lane (a hanging key then fails clearly).
        static std::size_t lanes_for(std::size_t n) { return std::is_copy_constructible_v<Transport> ? n : 1; }
        FOREWARN_COLD state(Transport t, std::size_t n, exchange_settings s, retry_policy p)
            : policy(std::move(p)), rate_limit(s.rate_limit), lane_count(lanes_for(n)),
              lanes(std::make_unique<std::optional<lane_state>[]>(lane_count)),
              rounds(s, key_rounds::lane_hooks{lane_count, this, &state::cut_hook, &state::reset_hook}) {
            if constexpr (std::is_copy_constructible_v<Transport>) {
                for (std::size_t i = 1; i < lane_count; ++i) lanes[i].emplace(Transport(t), s.clock);
            }
            lanes[0].emplace(std::move(t), s.clock);
        }
        lane_state& lane(std::size_t i) {
            if (i >= lane_count) throw std::out_of_range("metadata_exchange: no such lane");
            return *lanes[i];
        }
        static void cut_hook(void* self, std::size_t i) noexcept { static_cast<state*>(self)->cut(i); }
        static void reset_hook(void* self, std::size_t i) noexcept { static_cast<state*>(self)->reset(i); }
        void cut(std::size_t i) noexcept {
            if (i >= lane_count) return;
            lanes[i]->transport.cancel();
            lanes[i]->sleep.interrupt();
        }
        void reset(std::size_t i) noexcept {
            if (i >= lane_count) return;
            lanes[i]->transport.reset();
            lanes[i]->sleep.reset();
        }
        retry_policy policy;
        bool rate_limit;
        std::size_t lane_count;
        std::unique_ptr<std::optional<lane_state>[]> lanes;  // not a vector: a lane never moves
        key_rounds rounds;  // after the lanes it reaches through its hooks
        std::optional<error> config_error;
    };

    std::unique_ptr<state> s_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/metadata_exchange-inl.hpp>
#endif
