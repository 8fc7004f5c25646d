// SPDX-License-Identifier: MIT
#pragma once

// A thread that runs its owner's loop until asked to stop: spdlog's periodic_worker, on a
// forewarn::clock (a manual clock counts the thread). The poller and the etcd fleet budget each
// own one; the loop itself, and what it waits on, stay theirs.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/std_function.hpp>
#include <forewarn/result.hpp>

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

class worker {
public:
    /// `signal`: the owner's, when its loop waits on one: its mutex guards the stop flag and
    /// stop() wakes that wait. None: the flag has a mutex of its own.
    explicit worker(std::shared_ptr<wake_signal> signal = nullptr) : signal_(std::move(signal)) {}
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;
    /// The owner stops it first (its loop uses the owner's members); this only joins.
    ~worker() {
        if (thread_.joinable()) thread_.join();
    }

    /**
     * Starts the thread: `loop()` runs once on it (looping while !stop_requested()), then the
     * thread ends. stop() calls `interrupt()` after raising the flag, to cut short what the loop
     * waits for (a request). `prepare()` runs first, once an earlier thread is joined (clearing
     * an interrupt then can no longer reach that thread). Fails when it runs already and no
     * stop was asked.
     */
    result<void> start(const forewarn::clock& c, std::function<void()> loop, std::function<void()> interrupt,
                       const std::function<void()>& prepare = {});

    /// Raises the stop flag, wakes the owner's wait and interrupts; never joins.
    void request_stop() noexcept {
        set_stop(true);
        if (signal_) signal_->notify_all();
        if (interrupt_) interrupt_();
    }

    /// Stops and joins; from the worker's own thread (a handler) it only asks.
    void stop() noexcept;

    bool stop_requested() const {
        std::lock_guard<std::mutex> lock(flag_mutex());
        return stop_;
    }
    /// The flag, for a wait's predicate: the caller holds the owner's signal's mutex.
    bool stop_requested_locked() const noexcept { return stop_; }
    bool running() const noexcept { return running_.load(); }
    bool on_worker_thread() const noexcept { return thread_id_.load() == std::this_thread::get_id(); }

    /// Runs `f` on the calling thread as if it were the worker's (a caller driving the owner's
    /// cycle itself): the flag is cleared first, and a stop() from within only asks.
    template <class F>
    auto run_here(F&& f) -> decltype(f()) {
        set_stop(false);
        thread_id_.store(std::this_thread::get_id());
        struct leave {
            std::atomic<std::thread::id>& id;
            ~leave() { id.store(std::thread::id()); }
        } guard{thread_id_};
        return f();
    }

private:
    std::mutex& flag_mutex() const { return signal_ ? signal_->mutex : own_mutex_; }
    void set_stop(bool v) {
        std::lock_guard<std::mutex> lock(flag_mutex());
        stop_ = v;
    }

    std::shared_ptr<wake_signal> signal_;
    mutable std::mutex own_mutex_;
    bool stop_ = false;  // under flag_mutex()
    std::mutex control_;  // start() and stop() from different threads
    std::function<void()> interrupt_;
    std::thread thread_;
    std::atomic<bool> running_{false};
    std::atomic<std::thread::id> thread_id_{};
};

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/worker-inl.hpp>
#endif
