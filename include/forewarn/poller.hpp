// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/approval.hpp>
#include <forewarn/change_tracker.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/coordinator.hpp>
#include <forewarn/detail/worker.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/notice_source.hpp>
#include <forewarn/pause_meter.hpp>
#include <forewarn/result.hpp>
#include <forewarn/state_store.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/// The callbacks. Each runs on the poller's thread (or the executor) with no lock held; an
/// empty one is skipped.
struct poller_handlers {
    /// A new Scheduled event: prepare, then call ready() on the handle (now or later).
    std::function<void(const change&, approval_handle)> on_prepare;
    /// An event started: a new one already Started (hardware failure), or Scheduled -> Started.
    std::function<void(const change&)> on_started;
    /// An event is over: change::reason says completed, cancelled or unknown. Time to recover.
    std::function<void(const change&)> on_recover;
    /// An event changed NotBefore, Resources, duration, description, ...
    std::function<void(const change&)> on_updated;
    /// A failed poll, approval, identity, coordinator or state store, or a handler that threw.
    /// The poller goes on.
    std::function<void(const error&)> on_error;
    /// These events were approved (one request).
    std::function<void(const std::vector<std::string>&)> on_approved;
    /// Dry run (approval_options::dry_run): these events would have been approved now; nothing
    /// was sent.
    std::function<void(const std::vector<std::string>&)> on_would_approve;
};

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
     * How often the poller's own clock is read while an event naming this VM is Started (or a
     * GCE live migration is announced: GCE never marks one Started), to measure the pause the VM
     * lives through (change::pause on its recover; pause_meter.hpp).
     * 0: not measured. Only the thread start() runs measures: poll_once() callers get nothing
     * (the time between their calls is their cadence, not a pause).
     */
    std::chrono::milliseconds pause_look{100};
};

/// A snapshot of how a poller is doing (health()).
struct poller_health {
    bool running = false;
    std::optional<clock::wall_time_point> last_success;  ///< wall time of the last document had
    std::optional<clock::time_point> last_success_at;    ///< the same on the source's monotonic clock
    std::uint64_t polls = 0;                             ///< documents had
    std::uint64_t failures = 0;                          ///< failed polls
    std::uint32_t consecutive_failures = 0;              ///< failed polls since the last document
    std::optional<error> last_error;                     ///< the last error reported (any kind)
    /// The source's keys that failed in the last document while others answered
    /// (document::key_errors): each error's URL names its key. Empty when every key answered.
    std::vector<error> key_errors;
    std::string self;                                    ///< this VM's name, once known
    std::size_t events = 0;                              ///< events in the last document
    std::vector<std::string> awaiting_approval;          ///< wanted events not approved yet
    std::uint64_t approvals = 0;                         ///< successful approval requests
};

namespace detail {

/// How approval handles (and a coordinator) wake a poller, safely after it is gone.
class poller_waker {
public:
    void set(std::function<void()> f);
    void operator()();

private:
    std::mutex mutex_;
    std::function<void()> fn_;
};

/**
 * The poller's dispatch part: where and how handlers run. Each call is handed to the executor
 * (in order) or run at once; a handler that throws, or an executor that refuses a task, becomes
 * errc::handler_failed on report(). report() tells `noted` (health, log) and then on_error, on
 * the calling thread. Never holds a lock while user code runs.
 */
class handler_dispatch {
public:
    using executor_type = std::function<void(std::function<void()>)>;

    handler_dispatch(poller_handlers h, executor_type executor, std::function<void(const error&)> noted)
        : handlers_(std::move(h)), executor_(std::move(executor)), noted_(std::move(noted)) {}

    const poller_handlers& handlers() const noexcept { return handlers_; }

    /// `(handlers.*member)(args...)` where handlers run, when that handler is set.
    template <class Member, class... A>
    void post(const char* name, Member member, A... args) {
        if (!(handlers_.*member)) return;
        post_task([this, name, member, args...] { call(name, handlers_.*member, args...); });
    }

    /// Any task where handlers run (a callback given to an approval handle, say).
    void post_task(std::function<void()> task) {
        if (!executor_) {
            task();
            return;
        }
        try {
            executor_(std::move(task));
        } catch (const std::exception& ex) {
            report(error(errc::handler_failed, std::string("the executor refused a task: ") + ex.what()));
        } catch (...) {
            report(error(errc::handler_failed, "the executor refused a task"));
        }
    }

    /// Runs `f(args...)` here, turning an exception into a report.
    template <class F, class... A>
    void call(const char* name, const F& f, A&&... args) noexcept {
        try {
            f(std::forward<A>(args)...);
        } catch (const std::exception& ex) {
            report(error(errc::handler_failed, std::string(name) + " threw: " + ex.what()));
        } catch (...) {
            report(error(errc::handler_failed, std::string(name) + " threw a non-standard exception"));
        }
    }

    void report(const error& e) noexcept {
        try {
            if (noted_) noted_(e);
        } catch (...) {
        }
        if (!handlers_.on_error) return;
        try {
            handlers_.on_error(e);
        } catch (...) {
            // on_error itself threw: nothing left to tell, and the poller must go on.
        }
    }

private:
    poller_handlers handlers_;
    executor_type executor_;
    std::function<void(const error&)> noted_;
};

}  // namespace detail

/**
 * Watches a notice source and calls the handlers for each change, approving events as the
 * approval policy (and the coordinator, if any) allow. A small loop over named parts: the
 * source gives documents at its own cadence, the change_tracker turns them into changes, the
 * approver decides approvals, the state store remembers. No cloud is special here.
 *
 * Source is any notice source (forewarn::is_notice_source): azure::scheduled_events_client,
 * gce::metadata_client, aws::instance_metadata_client, testing::fake_source, or your own.
 *
 * @code
 * forewarn::poller_handlers h;
 * h.on_prepare = [](const forewarn::change& c, forewarn::approval_handle ready) {
 *     drain_traffic();
 *     ready.ready();
 * };
 * h.on_recover = [](const forewarn::change&) { restore_traffic(); };
 * forewarn::azure::scheduled_events_client client;  // needs <forewarn/forewarn.hpp> (curl_transport)
 * forewarn::poller<forewarn::azure::scheduled_events_client> p(std::move(client), h);
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

    /// Stops (see stop()). Do not destroy a poller from one of its own handlers.
    ~basic_poller();

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
    approval_handle approval(const std::string& event_id) {
        std::lock_guard<std::mutex> lock(data_mutex_);
        return approver_.handle_for_known(event_id);
    }

    /// The last document fetched (filtered), from the moment its changes are computed: what a
    /// handler sees as the present (readiness.hpp asks it). last_document() lags it until every
    /// change of it was delivered.
    document latest_document() const {
        std::lock_guard<std::mutex> lock(data_mutex_);
        return tracker_.latest();
    }

    /// The last document whose changes were all delivered (what the state store holds).
    document last_document() const {
        std::lock_guard<std::mutex> lock(data_mutex_);
        return tracker_.delivered_document();
    }

    /// This VM's name as used for approvals; empty until known (before the first delivery when
    /// the source can tell).
    std::string self() const {
        std::lock_guard<std::mutex> lock(data_mutex_);
        return health_.self;
    }

    /// How the poller is doing: last success, failures, identity, events awaiting approval.
    poller_health health() const {
        std::lock_guard<std::mutex> lock(data_mutex_);
        poller_health h = health_;
        h.running = worker_.running();
        return h;
    }

    Source& source() noexcept { return source_; }
    const poller_options& get_options() const noexcept { return options_; }

private:
    const logger& log() const { return source_.log(); }

    bool stopping() const { return worker_.stop_requested(); }

    void report(const error& e) noexcept { dispatch_.report(e); }

    // What report() notes before on_error: the health's last error and a warning in the log.
    void note(const error& e) {
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            health_.last_error = e;
        }
        if (log().enabled(log_level::warn)) log()(log_level::warn, e.describe(), e.url, e.event_id);
    }

    bool cancelled_by_stop(const error& e) const { return e.code == errc::cancelled && stopping(); }

    void load_state() {
        if (state_loaded_) return;
        state_loaded_ = true;
        if (!options_.state) return;
        auto st = options_.state->load();
        if (!st) {
            if (st.error().code == errc::not_found) {
                log()(log_level::info, "no saved state at " + options_.state->where() + " yet: starting with no events known");
            } else {
                error e = std::move(st).error();
                e.message = "the saved state at " + options_.state->where() +
                            " is unreadable, starting with no events known: " + e.message;
                report(e);
            }
            return;
        }
        std::lock_guard<std::mutex> lock(data_mutex_);
        tracker_.restore(*st);
        approver_.restore(*st, source_.clock().now());
    }

    void save_if_dirty() {
        if (!dirty_ || !options_.state) return;
        poller_state st;
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            st = tracker_.save();
            approver_.save(st);
        }
        auto r = options_.state->save(st);
        if (r)
            dirty_ = false;
        else
            report(r.error());  // dirty stays set: the next cycle tries again
    }

    // This VM's name, before the first delivery where the source can tell; retried with a
    // growing pause (up to a minute) while it cannot.
    void ensure_identity() {
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            if (!health_.self.empty()) return;
        }
        const auto now = source_.clock().now();
        if (next_identity_try_ && now < *next_identity_try_) return;
        auto id = source_.identity();
        if (!id) {
            if (cancelled_by_stop(id.error())) return;
            identity_backoff_ = (std::min)(identity_backoff_ * 2, std::chrono::milliseconds(std::chrono::minutes(1)));
            next_identity_try_ = forewarn::clock::saturating_add(now, identity_backoff_);
            error e = std::move(id).error();
            e.message = (source_.can_approve() ? "cannot learn this VM's name, so nothing is approved yet: "
                                               : "cannot learn this VM's name (self() stays empty): ") +
                        e.message;
            report(e);
            return;
        }
        std::lock_guard<std::mutex> lock(data_mutex_);
        health_.self = id->name;
        approver_.set_self(id->name);
    }

    // The coordinator starts once this VM's name is known; a failed start is tried again later.
    void start_coordinator() {
        if (!approver_.coordinator() || approver_.self().empty() || !source_.can_approve()) return;
        if (auto r = approver_.start_coordinator(source_.clock(), log()); !r) report(r.error());
    }

    void run_completions() {
        auto done = approver_.take_completions();
        for (auto& c : done) {
            auto task = [this, c = std::move(c)] { dispatch_.call("approval outcome callback", c.first, c.second); };
            dispatch_.post_task(std::move(task));
        }
    }

    void run_approvals() {
        std::vector<std::string> due;
        document latest;
        std::vector<error> problems;
        const auto now = source_.clock().now();
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            latest = tracker_.latest();
        }
        if (source_.can_approve()) {
            ensure_identity();
            start_coordinator();
        }
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            due = approver_.due(latest, now, problems, source_.clock().wall_now());
            health_.awaiting_approval = approver_.awaiting(latest);
        }
        for (const auto& p : problems) report(p);
        if (due.empty() || stopping()) return;
        if (options_.approval.dry_run) {
            {
                std::lock_guard<std::mutex> lock(data_mutex_);
                approver_.withheld(due);
                health_.awaiting_approval = approver_.awaiting(latest);
            }
            if (log().enabled(log_level::info)) {
                std::string ids;
                for (const auto& id : due) ids += (ids.empty() ? "" : ",") + id;
                log()(log_level::info, "dry run: would approve " + ids + " (nothing sent)", {}, ids);
            }
            dispatch_.post("on_would_approve", &poller_handlers::on_would_approve, due);
            return;
        }
        auto r = source_.approve(due);
        if (!r) {
            if (cancelled_by_stop(r.error())) return;
            std::lock_guard<std::mutex> lock(data_mutex_);
            approver_.failed(due, r.error());
            // reported below, without the lock
        } else {
            std::lock_guard<std::mutex> lock(data_mutex_);
            approver_.approved(due, latest);
            tracker_.mark_approved(due);
            ++health_.approvals;
            health_.awaiting_approval = approver_.awaiting(latest);
            dirty_ = true;
        }
        if (!r) {
            report(r.error());
            return;
        }
        if (log().enabled(log_level::info)) {
            std::string ids;
            for (const auto& id : due) ids += (ids.empty() ? "" : ",") + id;
            log()(log_level::info, "approved " + ids, {}, ids);
        }
        dispatch_.post("on_approved", &poller_handlers::on_approved, due);
    }

    // Hands each change to its handler; returns how many were handed on before a stop.
    std::size_t deliver(const std::vector<change>& changes) {
        std::size_t n = 0;
        for (const auto& c : changes) {
            if (stopping()) break;
            switch (c.kind) {
            case change_kind::prepare: dispatch_.post("on_prepare", &poller_handlers::on_prepare, c, approver_.handle(c.event.id)); break;
            case change_kind::started: dispatch_.post("on_started", &poller_handlers::on_started, c); break;
            case change_kind::recover: {
                change r = c;
                r.pause = meter_.take(c.event.id);
                dispatch_.post("on_recover", &poller_handlers::on_recover, r);
                break;
            }
            case change_kind::updated: dispatch_.post("on_updated", &poller_handlers::on_updated, c); break;
            }
            ++n;
        }
        return n;
    }

    /// One cycle: a document (waiting for it when `wait`), changes, handlers, approvals, state.
    result<std::size_t> cycle(bool wait) {
        load_state();
        ensure_identity();
        start_coordinator();
        const forewarn::clock& c = source_.clock();
        auto not_after = c.now();
        if (wait) {
            std::lock_guard<std::mutex> lock(data_mutex_);
            not_after = approver_.next_deadline(tracker_.latest(), c.now(), c.wall_now())
                            .value_or((forewarn::clock::time_point::max)());
        }
        auto fetched = source_.next(not_after);
        if (!fetched) {
            // A failed poll changes nothing: only a parsed document can make an event disappear.
            if (cancelled_by_stop(fetched.error())) return fetched.error();
            {
                std::lock_guard<std::mutex> lock(data_mutex_);
                ++health_.failures;
                ++health_.consecutive_failures;
            }
            report(fetched.error());
            return fetched.error();
        }
        if (options_.filter) {
            auto& events = fetched->events;
            events.erase(std::remove_if(events.begin(), events.end(), [&](const event& e) { return !options_.filter(e); }),
                         events.end());
        }
        const auto now = c.now();
        std::vector<change> changes;
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            changes = tracker_.track(*fetched, {now, c.wall_now()});
            approver_.observe(*fetched, now);
            ++health_.polls;
            health_.consecutive_failures = 0;
            health_.last_success = c.wall_now();
            health_.last_success_at = now;
            health_.events = fetched->events.size();
            health_.key_errors = fetched->key_errors;
        }
        // A key that failed beside others that answered: its last good events stay, its error is heard.
        for (const auto& e : fetched->key_errors) report(e);
        if (wait && options_.pause_look.count() > 0) watch_pauses(*fetched);
        const std::size_t delivered = deliver(changes);
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            const bool content_moved = tracker_.delivered_document().incarnation != fetched->incarnation;
            tracker_.delivered(delivered);
            dirty_ = dirty_ || !changes.empty() || content_moved;
        }
        if (!stopping()) run_approvals();
        save_if_dirty();
        run_completions();
        return delivered;
    }

    // The events of `d` whose pause may come now and that name this VM are the ones the pause
    // meter watches: Started ones, and GCE's live migrations from their notice (GCE never marks
    // one Started: the notice is set about 60 s before the migration and cleared after it).
    void watch_pauses(const document& d) {
        std::vector<std::string> ids;
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            for (const auto& e : d.events) {
                const bool under_way = e.status == event_status::started || e.type == event_type::live_migrate;
                if (under_way && (e.resources.empty() || (!health_.self.empty() && e.affects(health_.self))))
                    ids.push_back(e.id);
            }
        }
        if (auto r = meter_.watch(ids); !r) {
            error e = std::move(r).error();
            e.message = "cannot measure the pause of a Started event: " + e.message;
            report(e);
        }
    }

    void run() {
        while (!stopping()) cycle(true);
        meter_.stop();
        approver_.stop_coordinator();
    }

    Source source_;
    poller_options options_;
    detail::handler_dispatch dispatch_;  // where handlers run

    mutable std::mutex data_mutex_;  // tracker_, approver_, health_ (read by other threads' accessors)
    change_tracker tracker_;
    approver approver_;
    poller_health health_;

    std::shared_ptr<detail::poller_waker> waker_;
    detail::worker worker_;  // the poller's thread: start, stop, join
    pause_meter meter_;      // what each Started event of this VM cost (its own thread, while one is)
    std::optional<forewarn::clock::time_point> next_identity_try_;
    std::chrono::milliseconds identity_backoff_{500};
    bool state_loaded_ = false;
    bool dirty_ = false;
};

template <class Source>
basic_poller<Source>::basic_poller(Source source, poller_handlers h, poller_options o)
    : source_(std::move(source)), options_(std::move(o)),
      dispatch_(std::move(h), options_.executor, [this](const error& e) { note(e); }),
      tracker_(options_.tracking), approver_(options_.approval, options_.coordinator),
      waker_(std::make_shared<detail::poller_waker>()), meter_(source_.clock(), options_.pause_look) {
    Source* s = &source_;
    waker_->set([s] { s->wake(); });
    std::weak_ptr<detail::poller_waker> weak = waker_;
    approver_.set_wake([weak] {
        if (auto w = weak.lock()) (*w)();
    });
    approver_.set_can_approve(source_.can_approve());
}

template <class Source>
basic_poller<Source>::~basic_poller() {
    stop();
    waker_->set(nullptr);
}

template <class Source>
result<void> basic_poller<Source>::start() {
    if (auto v = source_.validate(); !v) return std::move(v).error();
    if (worker_.running() && !worker_.stop_requested()) return error(errc::invalid_argument, "the poller is already running");
    auto r = worker_.start(
        source_.clock(), [this] { run(); }, [this] { source_.cancel(); }, [this] { source_.reset(); });
    if (!r) {
        error e = std::move(r).error();
        e.message = "cannot start the poller's thread: " + e.message;
        return e;
    }
    return {};
}

template <class Source>
void basic_poller<Source>::stop() noexcept {
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
    run_approvals();
    save_if_dirty();
    run_completions();
}

/// The poller over a source (the name most programs use).
template <class Source>
using poller = basic_poller<Source>;

// Short bodies that need nothing more stay here (the rule: docs/architecture.md).
namespace detail {

inline void poller_waker::set(std::function<void()> f) {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = std::move(f);
}

inline void poller_waker::operator()() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fn_) fn_();
}

}  // namespace detail

FOREWARN_END_NAMESPACE

#define FOREWARN_POLLER_DEFINED
#include <forewarn/detail/extern_templates.hpp>

