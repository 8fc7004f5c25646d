// SPDX-License-Identifier: MIT
#pragma once

// The poller: the order of a cycle and the life of its thread, over its parts in poller/ (the
// ledger of events and approvals, dispatch, health, state keeping, identity, approval runs, the
// pause meter). docs/architecture.md draws them.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/std_function.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/detail/worker.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/poller/approval.hpp>
#include <forewarn/detail/poller/approval_run.hpp>
#include <forewarn/poller/change_tracker.hpp>
#include <forewarn/poller/coordinator.hpp>
#include <forewarn/detail/poller/dispatch.hpp>
#include <forewarn/detail/poller/health.hpp>
#include <forewarn/detail/poller/identity.hpp>
#include <forewarn/detail/poller/ledger.hpp>
#include <forewarn/poller/notice_source.hpp>
#include <forewarn/poller/pause_meter.hpp>
#include <forewarn/detail/poller/state_keeper.hpp>
#include <forewarn/poller/state_store.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// Options of basic_poller. Plain struct: set the members you care about. The cadence, the
/// clock, the logger and this VM's name are the source's options.
struct poller_options {
    /// Which events to approve, and when. Default: own events, once on_prepare said ready.
    approval_options approval;
    /// Asked before each approval, across VMs (a fleet budget); none by default.
    std::shared_ptr<approval_coordinator> coordinator;
    /// Where the poller keeps what it delivered, so that a restart does not repeat it
    /// (forewarn::state_file from <forewarn/state_file.hpp>); none by default.
    std::shared_ptr<state_store> state;
    /// How recover reasons are judged (the gap in watching, the boot id).
    tracking_options tracking;
    /**
     * Which events this poller handles at all; empty (the default): every one. An event it
     * declines is left out of each document before anything looks at it: no change, no approval,
     * not in the state, the health or last_document(). E.g. only Freeze and Reboot:
     * `o.filter = [](const forewarn::event& e) { return e.type == forewarn::event_type::freeze || e.type == forewarn::event_type::reboot; };`
     */
    std::function<bool(const event&)> filter;
    /**
     * Where handlers run. Empty (the default): on the poller's thread. Otherwise every handler
     * call (and every approval_handle outcome callback) is handed to it as a task, in order; it
     * must run them in that order (an asio strand, a serial work queue).
     */
    std::function<void(std::function<void()>)> executor;
    /**
     * How often the poller's own clock is read while an event naming this VM is Started (or is
     * announced, of a type its source never marks Started: document::under_way_when_announced),
     * to measure the pause the VM lives through (change::pause on its recover; pause_meter.hpp).
     * 0: not measured. Only the thread start() runs measures: poll_once() callers get nothing
     * (the time between their calls is their cadence, not a pause).
     */
    std::chrono::milliseconds pause_look{100};
};

namespace detail {

/// How approval handles (and a coordinator) wake a poller, safely after it is gone: the poller
/// clears it as it ends; its mutex is held while the wake runs.
class poller_waker {
public:
    void set(std::function<void()> f) {
        std::lock_guard<std::mutex> lock(mutex_);
        fn_ = std::move(f);
    }
    void operator()() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (fn_) fn_();
    }

private:
    std::mutex mutex_;
    std::function<void()> fn_;
};

}  // namespace detail

/**
 * Watches a notice source and calls the handlers for each change, approving events as the
 * approval policy (and the coordinator, if any) allow. A small loop over named parts: the
 * source gives documents at its own cadence, the change_tracker turns them into changes, the
 * approver decides approvals, the state store remembers. No cloud is special here.
 *
 * Source is any notice source (forewarn::is_notice_source): a cloud's client (each cloud's folder
 * has one), testing::fake_source, or your own.
 *
 * @code
 * forewarn::poller_handlers h;
 * h.on_prepare = [](const forewarn::change& c, forewarn::approval_handle ready) {
 *     drain_traffic();
 *     ready.ready();
 * };
 * h.on_recover = [](const forewarn::change&) { restore_traffic(); };
 * Client client;  // a cloud's client, as in the README; needs <forewarn/forewarn.hpp> (curl_transport)
 * forewarn::poller<Client> p(std::move(client), h);
 * if (auto started = p.start(); !started) std::cerr << started.error().describe() << '\n';
 * @endcode
 */
template <class Source>
class basic_poller {
public:
    static_assert(is_notice_source_v<Source>, "Source must satisfy forewarn::is_notice_source (notice_source.hpp)");
    using source_type = Source;
    using handlers = poller_handlers;
    using options = poller_options;

    explicit basic_poller(Source source, poller_handlers h = {}, poller_options o = {});
    basic_poller(const basic_poller&) = delete;
    basic_poller& operator=(const basic_poller&) = delete;
    ~basic_poller();  ///< Stops (see stop()). Do not destroy a poller from one of its own handlers.

    /**
     * Starts the poller's thread. Fails at once, saying what and where, on a configuration
     * that can never work (the source's validate()), and when it already runs.
     */
    result<void> start();

    /**
     * Stops promptly, even in the middle of a request (the source is cancelled), and waits for
     * the thread. Called from a handler, it only asks: the poller delivers nothing more and its
     * thread ends once the handler returns.
     */
    void stop() noexcept;

    /// True while the poller's thread runs.
    bool running() const noexcept { return worker_.running(); }

    /// True once stop() was called (and before the next start() or poll_once()).
    bool stop_requested() const { return worker_.stop_requested(); }

    /**
     * One cycle for a caller that drives the poller from its own loop (instead of start()): a
     * document asked at once, the handlers for each change, the approvals that are due. Returns
     * the number of changes delivered, or the error of the poll (also given to on_error).
     */
    result<std::size_t> poll_once();

    /// The approvals that are due now, for a caller driving poll_once() whose handles said ready
    /// between polls (the thread started by start() does this by itself).
    void approve_due();

    /**
     * A handle for an event whose prepare was delivered earlier, for work that outlived the
     * handle on_prepare got: typically a process restarted with a state store while its
     * preparation (a drain, a hook) had not finished. The prepare is not delivered again, so
     * ask for the event's handle and call ready() once the work is done: it is approved as
     * the first handle would have had it (policy, coordinator, once). Any thread, before or after
     * start(). An event already approved reads approved; one the poller no longer sees settles as
     * gone at the next document.
     */
    approval_handle approval(const std::string& event_id) { return ledger_.handle_for_known(event_id); }

    /// The last document fetched (filtered), from the moment its changes are computed: what a
    /// handler sees as the present (readiness.hpp asks it). last_document() lags it until every
    /// change of it was delivered.
    document latest_document() const { return ledger_.latest(); }

    /// The last document whose changes were all delivered (what the state store holds).
    document last_document() const { return ledger_.delivered_document(); }

    /// This VM's name as used for approvals; empty until known (before the first delivery when
    /// the source can tell).
    std::string self() const { return health_.self(); }

    /// How the poller is doing: last success, failures, identity, events awaiting approval.
    poller_health health() const { return health_.snapshot(worker_.running()); }

    Source& source() noexcept { return source_; }
    const poller_options& get_options() const noexcept { return options_; }

private:
    const logger& log() const { return source_.log(); }
    bool stopping() const { return worker_.stop_requested(); }
    bool cancelled_by_stop(const error& e) const { return e.code == errc::cancelled && stopping(); }
    void report(const error& e) noexcept { dispatch_.report(e); }

    void before_cycle(bool with_state) {  // the saved state (once), this VM's name, the coordinator
        if (with_state)
            if (auto st = state_.load(log(), [this](const error& e) { report(e); })) ledger_.restore(*st, source_.clock().now());
        auto id = identity_.learn(source_.clock().now(), source_.can_approve(), [this] { return detail::name_of(source_); });
        if (!id && !cancelled_by_stop(id.error())) report(id.error());
        if (id && *id) {
            health_.set_self(**id);
            ledger_.set_self(**id);
        }
        if (source_.can_approve())
            if (auto r = ledger_.start_coordinator(source_.clock(), log()); !r) report(r.error());
    }

    void after_cycle() {  // approvals due, the state, the handles' outcomes
        if (auto declined = ledger_.take_declined(); !declined.empty()) detail::abandon(source_, declined);
        if (!stopping()) {
            if (source_.can_approve()) before_cycle(false);
            detail::approval_run({ledger_, health_, dispatch_, state_, log()}, source_.clock().now(),
                                 source_.clock().wall_now(), options_.approval.dry_run,
                                 [this](const std::vector<std::string>& due) { return source_.approve(due); },
                                 [this] { return stopping(); }, [this](const error& e) { return cancelled_by_stop(e); });
        }
        state_.save([this] { return ledger_.save(); }, [this](const error& e) { report(e); });
        dispatch_.complete(ledger_.take_completions());
    }

    /// One cycle: a document (waiting for it when `wait`), changes, handlers, approvals, state.
    result<std::size_t> cycle(bool wait) {
        before_cycle(true);
        const forewarn::clock& c = source_.clock();
        auto not_after = wait ? ledger_.next_deadline(c.now(), c.wall_now()).value_or((clock::time_point::max)()) : c.now();
        auto fetched = source_.next(not_after);
        if (!fetched) {  // changes nothing: only a parsed document can make an event disappear
            if (cancelled_by_stop(fetched.error())) return fetched.error();
            health_.failed();
            report(fetched.error());
            return fetched.error();
        }
        if (options_.filter) {
            auto& ev = fetched->events;  // std::remove_if's work, without <algorithm>
            std::size_t kept = 0;
            for (std::size_t i = 0; i < ev.size(); ++i)
                if (options_.filter(ev[i])) {
                    if (i != kept) ev[kept] = std::move(ev[i]);
                    ++kept;
                }
            ev.erase(ev.begin() + static_cast<std::ptrdiff_t>(kept), ev.end());
        }
        for (auto& e : fetched->events)  // the source's word on each event, else on all of them
            if (!e.approvable) e.approvable = source_.can_approve();
        const auto now = c.now();
        const auto wall = c.wall_now();
        auto changes = ledger_.track(*fetched, {now, wall});
        health_.polled(*fetched, wall, now);
        for (const auto& e : fetched->key_errors) report(e);  // a key failed beside others that answered
        if (wait && options_.pause_look.count() > 0)
            if (auto r = meter_.watch_under_way(*fetched, identity_.name()); !r) report(r.error());
        const std::size_t n = dispatch_.deliver(
            changes, [this](const std::string& id) { return ledger_.handle(id); },
            [this](const std::string& id) { return meter_.take(id); }, [this] { return stopping(); });
        if (ledger_.delivered(n) || !changes.empty()) state_.touch();
        after_cycle();
        return n;
    }

    void run() {
        while (!stopping()) cycle(true);
        meter_.stop();
        ledger_.stop_coordinator();
    }

    Source source_;
    poller_options options_;
    detail::handler_dispatch dispatch_;  // where handlers run
    std::shared_ptr<detail::poller_waker> waker_;  // how handles and the coordinator wake it
    detail::poller_ledger ledger_;       // the change tracker and the approver, for every thread
    detail::health_record health_;       // behind health()
    detail::state_keeper state_;         // options_.state, read once, written when dirty
    detail::identity_lookup identity_;   // this VM's name, with its backoff
    detail::worker worker_;  // the poller's thread: start, stop, join
    pause_meter meter_;      // what each event under way of this VM cost (its own thread, while one is)
};

template <class Source>
FOREWARN_COLD basic_poller<Source>::basic_poller(Source source, poller_handlers h, poller_options o)
    : source_(std::move(source)), options_(std::move(o)),
      dispatch_(std::move(h), options_.executor,
                [this](const error& e) {  // what report() notes before on_error: the health, the log
                    health_.noted(e);
                    if (log().enabled(log_level::warn)) log()(log_level::warn, e.describe(), e.url, e.event_id);
                }),
      waker_(std::make_shared<detail::poller_waker>()),
      ledger_(options_.tracking, options_.approval, options_.coordinator, source_.can_approve(),
              [weak = std::weak_ptr<detail::poller_waker>(waker_)] {
                  if (auto w = weak.lock()) (*w)();
              }),
      state_(options_.state), meter_(source_.clock(), options_.pause_look) {
    Source* s = &source_;
    waker_->set([s] { s->wake(); });
}

template <class Source>
FOREWARN_COLD basic_poller<Source>::~basic_poller() {
    stop();
    waker_->set(nullptr);
}

template <class Source>
FOREWARN_COLD result<void> basic_poller<Source>::start() {
    if (auto v = source_.validate(); !v) return std::move(v).error();
    if (worker_.running() && !worker_.stop_requested()) return error(errc::invalid_argument, "the poller is already running");
    auto r = worker_.start(
        source_.clock(), [this] { run(); }, [this] { source_.cancel(); }, [this] { source_.reset(); });
    if (!r) {
        error e = std::move(r).error();
        e.message = detail::cat({"cannot start the poller's thread: ", e.message});
        return e;
    }
    return {};
}

template <class Source>
FOREWARN_COLD void basic_poller<Source>::stop() noexcept {
    worker_.stop();
    if (!worker_.on_worker_thread()) meter_.stop();  // from a handler: run() stops it as it ends
}

template <class Source>
result<std::size_t> basic_poller<Source>::poll_once() {
    if (worker_.running()) return error(errc::invalid_argument, "poll_once() while the poller runs its own thread");
    if (auto v = source_.validate(); !v) return std::move(v).error();
    return worker_.run_here([this] {
        source_.reset();
        return cycle(false);
    });
}

template <class Source>
void basic_poller<Source>::approve_due() {
    if (worker_.running()) return;
    after_cycle();
}

/// The poller over a source (the name most programs use).
template <class Source>
using poller = basic_poller<Source>;

FOREWARN_END_NAMESPACE

#define FOREWARN_POLLER_DEFINED
#include <forewarn/detail/extern_templates.hpp>

