// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/worker.hpp> (spdlog's -inl files). Header-only: included at the end of
// that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and empty in a
// user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/worker.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE result<void> worker::start(const forewarn::clock& c, std::function<void()> loop,
                                          std::function<void()> interrupt, const std::function<void()>& prepare) {
    std::lock_guard<std::mutex> control(control_);
    if (thread_.joinable()) {
        if (running_.load() && !stop_requested()) return error(errc::invalid_argument, "already running");
        thread_.join();  // asked to stop from its own thread: it has ended or is about to
    }
    if (prepare) prepare();
    set_stop(false);
    interrupt_ = std::move(interrupt);
    running_.store(true);
    c.thread_started();
    try {
        thread_ = std::thread([this, c, loop = std::move(loop)] {
            thread_id_.store(std::this_thread::get_id());
            loop();
            thread_id_.store(std::thread::id());
            running_.store(false);
            c.thread_ended();
        });
    } catch (const std::exception& ex) {
        running_.store(false);
        c.thread_ended();
        return error(errc::io_error, std::string("cannot start a thread: ") + ex.what());
    }
    return {};
}

FOREWARN_INLINE void worker::stop() noexcept {
    if (on_worker_thread()) {
        request_stop();
        return;
    }
    // Under the control mutex, so that a start() racing on another thread cannot clear the
    // request and leave this call joining a thread that was never asked to stop.
    std::lock_guard<std::mutex> control(control_);
    request_stop();
    if (thread_.joinable()) thread_.join();
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif
