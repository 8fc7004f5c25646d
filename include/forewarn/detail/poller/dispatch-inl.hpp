// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/poller/dispatch.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/poller/dispatch.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD void handler_dispatch::post_task(std::function<void()> task) {
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

FOREWARN_INLINE FOREWARN_COLD void handler_dispatch::report(const error& e) noexcept {
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

FOREWARN_INLINE FOREWARN_COLD std::size_t handler_dispatch::deliver(const std::vector<change>& changes,
                                                      function_ref<approval_handle(const std::string&)> handle_for,
                                                      function_ref<std::optional<observed_pause>(const std::string&)> pause_for,
                                                      function_ref<bool()> stopping) {
    std::size_t n = 0;
    for (const auto& c : changes) {
        if (stopping()) break;
        switch (c.kind) {
        case change_kind::prepare: post("on_prepare", &poller_handlers::on_prepare, c, handle_for(c.event.id)); break;
        case change_kind::started: post("on_started", &poller_handlers::on_started, c); break;
        case change_kind::recover: {
            change r = c;
            r.pause = pause_for(c.event.id);
            post("on_recover", &poller_handlers::on_recover, r);
            break;
        }
        case change_kind::updated: post("on_updated", &poller_handlers::on_updated, c); break;
        }
        ++n;
    }
    return n;
}

FOREWARN_INLINE FOREWARN_COLD void handler_dispatch::complete(std::vector<approver::completion> done) {
    for (auto& c : done) {
        auto task = [this, c = std::move(c)] { call("approval outcome callback", c.first, c.second); };
        post_task(std::move(task));
    }
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif
