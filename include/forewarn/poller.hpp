// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/detail/state_file.hpp>
#include <forewarn/detail/wake_signal.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/leader.hpp>
#include <forewarn/result.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

namespace detail {

/// What the poller shares with the approval handles it gives out (and with a manual clock).
struct poller_shared : wake_signal {
    bool stopping = false;            ///< stop() was called
    bool wake = false;                ///< a handle said ready: look at approvals now
    std::vector<std::string> ready;   ///< ids whose prepare handler said ready, not yet seen by the poller
};

/// The document `base` after the changes in [first, last) (used when stop() cut a cycle short,
/// so that the state reflects exactly the callbacks that ran).
template <class It>
document apply_changes(document base, It first, It last) {
    for (; first != last; ++first) {
        const change& c = *first;
        auto it = std::find_if(base.events.begin(), base.events.end(), [&](const event& e) { return e.id == c.event.id; });
        if (c.kind == change_kind::recover) {
            if (it != base.events.end()) base.events.erase(it);
        } else if (it != base.events.end()) {
            *it = c.event;
        } else {
            base.events.push_back(c.event);
        }
    }
    base.incarnation.clear();  // content no longer matches any incarnation: diff by content next time
    return base;
}

}  // namespace detail

/**
 * Given to on_prepare: call ready() once the service is ready for the event to start (drained,
 * checkpointed, ...), from the handler itself or later from any thread. The poller approves it
 * when the approval policy allows (at most once). Copyable; harmless after the poller is gone.
 */
class approval_handle {
public:
    approval_handle() = default;
    approval_handle(std::shared_ptr<detail::poller_shared> shared, std::string event_id)
        : shared_(std::move(shared)), id_(std::move(event_id)) {}

    /// The event this handle approves.
    const std::string& event_id() const noexcept { return id_; }

    /// Says the service is ready; repeating it is harmless. Wakes the poller to approve promptly.
    void ready() const {
        if (!shared_) return;
        {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            shared_->ready.push_back(id_);
            shared_->wake = true;
        }
        shared_->cv.notify_all();
    }

private:
    std::shared_ptr<detail::poller_shared> shared_;
    std::string id_;
};

/// The callbacks. Each runs on the poller's thread with no lock held; an empty one is skipped.
struct poller_handlers {
    /// A new Scheduled event: prepare, then call ready() on the handle (now or later).
    std::function<void(const change&, approval_handle)> on_prepare;
    /// An event started: a new one already Started (hardware failure), or Scheduled -> Started.
    std::function<void(const change&)> on_started;
    /// An event disappeared: change::reason says completed or cancelled. Time to recover.
    std::function<void(const change&)> on_recover;
    /// An event changed NotBefore, Resources, duration, description, ...
    std::function<void(const change&)> on_updated;
    /// A failed poll, approval, identity or state file, or a handler that threw. The poller goes on.
    std::function<void(const error&)> on_error;
    /// These events were approved (one POST).
    std::function<void(const std::vector<std::string>&)> on_approved;
};

/// Options of basic_poller. Plain struct: set the members you care about.
struct poller_options {
    /// Azure: time between two polls (the seeds: once a second). Never below 200 ms, so that the
    /// poller alone stays under IMDS's 5 requests per second.
    std::chrono::milliseconds interval{1000};
    /// GCE: timeout_sec of each hanging GET (the server answers with the current value after it).
    std::chrono::seconds gce_timeout{60};
    /// GCE: the pause after a failed hanging GET before the next (the client already retried).
    std::chrono::milliseconds gce_error_pause{1000};
    /// Which events to approve, and when. Default: own events, once on_prepare said ready.
    approval_options approval;
    /// When not empty: where the poller keeps what it delivered, so a restart does not repeat it.
    std::string state_file;
};

/**
 * Polls a metadata service and calls the handlers for each change, approving events as the
 * approval policy says. Azure: a fetch every `interval`; GCE: hanging GETs on both keys.
 *
 * Client needs: `static constexpr cloud cloud_kind`, `result<document> fetch()`,
 * `result<void> approve(const std::vector<std::string>&)`, `result<I> identity()` (I has a
 * `name`), `void cancel() noexcept`, `void reset() noexcept`, and for GCE
 * `result<document> wait_for_change(const document&, std::chrono::seconds)`.
 * Clock needs `now()` and `time_point`; a clock with a wait_until hook (testing::manual_clock)
 * decides when the poller's waits end, so tests never sleep.
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
 * p.start();  // until p.stop() or the poller is destroyed
 * @endcode
 */
template <class Client, class Clock = std::chrono::steady_clock>
class basic_poller {
public:
    using client_type = Client;
    using clock_type = Clock;
    using handlers = poller_handlers;
    using options = poller_options;

    explicit basic_poller(Client client, poller_handlers h = {}, poller_options o = {}, Clock clock = Clock())
        : client_(std::move(client)), handlers_(std::move(h)), options_(std::move(o)), clock_(std::move(clock)),
          policy_(options_.approval), shared_(std::make_shared<detail::poller_shared>()) {
        options_.interval = (std::max)(options_.interval, std::chrono::milliseconds(200));
        if (options_.gce_timeout < std::chrono::seconds(1)) options_.gce_timeout = std::chrono::seconds(1);
    }

    basic_poller(const basic_poller&) = delete;
    basic_poller& operator=(const basic_poller&) = delete;

    /// Stops (see stop()). Do not destroy a poller from one of its own handlers.
    ~basic_poller() { stop(); }

    /// Starts the poller's thread; invalid_argument if it already runs.
    result<void> start() {
        std::lock_guard<std::mutex> control(control_mutex_);
        if (thread_.joinable()) {
            if (running_.load() && !stop_requested())
                return error(errc::invalid_argument, "the poller is already running");
            thread_.join();  // stopped from a handler: the thread has ended or is about to
        }
        {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            shared_->stopping = false;
        }
        client_.reset();
        have_fetched_ = false;  // a stop from a handler may have left changes undelivered: fetch first
        running_.store(true);
        thread_ = std::thread([this] { run(); });
        return {};
    }

    /**
     * Stops promptly, even in the middle of a request (the client is cancelled), and waits for
     * the thread. Called from a handler, it only asks: the poller delivers nothing more and its
     * thread ends once the handler returns.
     */
    void stop() noexcept {
        if (poller_thread_.load() == std::this_thread::get_id()) {
            request_stop();
            return;
        }
        // Under the control mutex, so that a start() racing on another thread cannot clear the
        // request and leave this call joining a thread that was never asked to stop.
        std::lock_guard<std::mutex> control(control_mutex_);
        request_stop();
        if (thread_.joinable()) thread_.join();
    }

    /// True while the poller's thread runs.
    bool running() const noexcept { return running_.load(); }

    /// True once stop() was called (and before the next start() or poll_once()).
    bool stop_requested() const {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        return shared_->stopping;
    }

    /**
     * One cycle for a caller that drives the poller from its own loop (instead of start()): a
     * fetch (both clouds), the handlers for each change, the approvals that are due. Returns the
     * number of changes delivered, or the error of the fetch (also given to on_error).
     */
    result<std::size_t> poll_once() {
        if (running_.load()) return error(errc::invalid_argument, "poll_once() while the poller runs its own thread");
        {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            shared_->stopping = false;
        }
        client_.reset();
        poller_thread_.store(std::this_thread::get_id());
        auto r = cycle(false);
        poller_thread_.store(std::thread::id());
        return r;
    }

    /// The approvals that are due now, for a caller driving poll_once() whose handles said ready
    /// between polls (the thread started by start() does this by itself).
    void approve_due() {
        if (running_.load()) return;
        run_approvals();
        save_if_dirty();
    }

    /// The last document whose changes were all delivered (what the state file holds).
    document last_document() const {
        std::lock_guard<std::mutex> lock(data_mutex_);
        return delivered_;
    }

    /// This VM's name as used for approvals; empty until known.
    std::string self() const {
        std::lock_guard<std::mutex> lock(data_mutex_);
        return policy_.self();
    }

    Client& client() noexcept { return client_; }
    const poller_options& get_options() const noexcept { return options_; }

private:
    static constexpr bool can_approve = Client::cloud_kind != cloud::gce;

    std::chrono::nanoseconds now_ns() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now().time_since_epoch());
    }

    bool stopping() const {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        return shared_->stopping;
    }

    void report(const error& e) noexcept {
        if (!handlers_.on_error) return;
        try {
            handlers_.on_error(e);
        } catch (...) {
            // on_error itself threw: nothing left to tell, and the poller must go on.
        }
    }

    template <class F, class... A>
    void call(const char* name, const F& f, A&&... args) noexcept {
        if (!f) return;
        try {
            f(std::forward<A>(args)...);
        } catch (const std::exception& ex) {
            report(error(errc::handler_failed, std::string(name) + " threw: " + ex.what()));
        } catch (...) {
            report(error(errc::handler_failed, std::string(name) + " threw a non-standard exception"));
        }
    }

    void request_stop() noexcept {
        {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            shared_->stopping = true;
        }
        shared_->cv.notify_all();
        client_.cancel();
    }

    void load_state() {
        if (state_loaded_) return;
        state_loaded_ = true;
        if (options_.state_file.empty()) return;
        auto text = detail::read_small_file(options_.state_file);
        if (!text) {
            error e = text.error();
            if (e.code == errc::not_found) e.message += " yet: starting with no events known";
            report(e);
            return;
        }
        auto st = detail::read_state(*text);
        if (!st) {
            error e = st.error();
            e.message = "state file " + options_.state_file + " is unreadable, starting with no events known: " + e.message;
            report(e);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            delivered_ = st->last;
            // The service may have started its incarnation over while this process was away (24 h
            // without a request): the first document is diffed by content, never skipped because
            // its incarnation happens to equal the saved one.
            delivered_.incarnation.clear();
            last_fetched_ = delivered_;
            policy_.observe(st->last, now_ns());
            policy_.mark_approved(st->approved);
        }
    }

    void save_if_dirty() {
        if (!dirty_ || options_.state_file.empty()) return;
        detail::poller_state st;
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            st.last = delivered_;
            st.approved = policy_.approved_ids();
        }
        auto text = detail::write_state(st);
        if (!text) {
            error e = text.error();
            e.message = "cannot save the state file " + options_.state_file + ": " + e.message;
            report(e);
            return;
        }
        auto r = detail::write_file_atomically(options_.state_file, *text);
        if (r)
            dirty_ = false;
        else
            report(r.error());  // dirty stays set: the next cycle tries again
    }

    void ensure_identity() {
        if (!policy_.needs_identity()) return;
        auto id = client_.identity();
        if (!id) {
            if (!(id.error().code == errc::cancelled && stopping())) {
                error e = id.error();
                e.message = "cannot learn this VM's name, so nothing is approved yet: " + e.message;
                report(e);
            }
            return;
        }
        std::lock_guard<std::mutex> lock(data_mutex_);
        policy_.set_self(id->name);
    }

    void drain_ready() {
        std::vector<std::string> ids;
        {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            ids.swap(shared_->ready);
            shared_->wake = false;
        }
        std::lock_guard<std::mutex> lock(data_mutex_);
        for (const auto& id : ids) policy_.mark_ready(id);
    }

    void run_approvals() {
        drain_ready();
        if constexpr (!can_approve) {
            return;
        } else {
            if (stopping()) return;
            ensure_identity();
            std::vector<std::string> due;
            {
                std::lock_guard<std::mutex> lock(data_mutex_);
                due = policy_.due(last_fetched_, now_ns());
            }
            if (due.empty()) return;
            auto r = client_.approve(due);
            if (!r) {
                if (!(r.error().code == errc::cancelled && stopping())) report(r.error());
                return;  // not marked: tried again next cycle (approving twice is harmless for Azure)
            }
            {
                std::lock_guard<std::mutex> lock(data_mutex_);
                policy_.mark_approved(due);
            }
            dirty_ = true;
            call("on_approved", handlers_.on_approved, due);
        }
    }

    /// Delivers the changes of `doc`; returns how many handlers ran before a stop, if any.
    std::size_t deliver(const std::vector<change>& changes) {
        std::size_t n = 0;
        for (const auto& c : changes) {
            if (stopping()) break;
            switch (c.kind) {
            case change_kind::prepare:
                call("on_prepare", handlers_.on_prepare, c, approval_handle(shared_, c.event.id));
                break;
            case change_kind::started: call("on_started", handlers_.on_started, c); break;
            case change_kind::recover: call("on_recover", handlers_.on_recover, c); break;
            case change_kind::updated: call("on_updated", handlers_.on_updated, c); break;
            }
            ++n;
        }
        return n;
    }

    /// One poll: fetch (or a hanging GET), diff, handlers, approvals, state file.
    result<std::size_t> cycle(bool hanging) {
        load_state();
        result<document> fetched = error(errc::cancelled, "not fetched");
        if constexpr (Client::cloud_kind == cloud::gce) {
            if (hanging && have_fetched_) {
                document last;
                {
                    std::lock_guard<std::mutex> lock(data_mutex_);
                    last = last_fetched_;
                }
                fetched = client_.wait_for_change(last, options_.gce_timeout);
            } else {
                fetched = client_.fetch();
            }
        } else {
            (void)hanging;
            fetched = client_.fetch();
        }
        if (!fetched) {
            // A failed poll changes nothing: only a parsed document can make an event disappear.
            if (!(fetched.error().code == errc::cancelled && stopping())) report(fetched.error());
            return fetched.error();
        }
        have_fetched_ = true;

        std::vector<change> changes;
        {
            std::lock_guard<std::mutex> lock(data_mutex_);
            changes = diff(delivered_, *fetched);
            // An event this VM approved starts at once; if the poll missed its Started phase (a
            // short Freeze between two polls), its disappearance is a completion, not a cancel.
            for (auto& c : changes)
                if (c.kind == change_kind::recover && c.reason == recover_reason::cancelled &&
                    policy_.was_approved(c.event.id))
                    c.reason = recover_reason::completed;
            last_fetched_ = *fetched;
            policy_.observe(*fetched, now_ns());
        }
        const std::size_t delivered = deliver(changes);
        if (!changes.empty()) {
            std::lock_guard<std::mutex> lock(data_mutex_);
            if (delivered == changes.size())
                delivered_ = *fetched;
            else
                delivered_ = detail::apply_changes(delivered_, changes.begin(), changes.begin() + static_cast<std::ptrdiff_t>(delivered));
            dirty_ = true;
        } else {
            std::lock_guard<std::mutex> lock(data_mutex_);
            if (delivered_.incarnation != fetched->incarnation) {
                delivered_.incarnation = fetched->incarnation;  // same content, newer tag
                dirty_ = true;
            }
        }
        if (!stopping()) run_approvals();
        save_if_dirty();
        return delivered;
    }

    /// Sleeps until `deadline` of the clock or stop(); approves at once when a handle says ready.
    void sleep_until(typename Clock::time_point deadline) {
        for (;;) {
            std::unique_lock<std::mutex> lock(shared_->mutex);
            const bool woken = detail::wait_until(clock_, std::shared_ptr<detail::wake_signal>(shared_), lock, deadline,
                                                  [this] { return shared_->stopping || shared_->wake; });
            if (!woken || shared_->stopping) return;
            lock.unlock();
            run_approvals();
            save_if_dirty();
        }
    }

    void run() {
        poller_thread_.store(std::this_thread::get_id());
        while (!stopping()) {
            auto r = cycle(true);
            if (stopping()) break;
            if constexpr (Client::cloud_kind == cloud::gce) {
                if (!r) sleep_until(clock_.now() + options_.gce_error_pause);
                // A hanging GET is the wait: no fixed sleep after a successful one. Approvals do
                // not exist on GCE, so a ready() has nothing to wake.
            } else {
                sleep_until(clock_.now() + options_.interval);
            }
        }
        poller_thread_.store(std::thread::id());
        running_.store(false);
    }

    Client client_;
    poller_handlers handlers_;
    poller_options options_;
    Clock clock_;

    mutable std::mutex data_mutex_;  // delivered_, last_fetched_, policy_ (read by other threads' accessors)
    approval_policy policy_;
    document delivered_;
    document last_fetched_;

    std::shared_ptr<detail::poller_shared> shared_;
    std::mutex control_mutex_;  // start() and stop() from different threads
    std::thread thread_;
    std::atomic<bool> running_{false};
    std::atomic<std::thread::id> poller_thread_{};
    bool have_fetched_ = false;
    bool state_loaded_ = false;
    bool dirty_ = false;
};

/// The poller with the real clock.
template <class Client>
using poller = basic_poller<Client, std::chrono::steady_clock>;

FOREWARN_END_NAMESPACE
