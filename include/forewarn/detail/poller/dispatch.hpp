// SPDX-License-Identifier: MIT
#pragma once

// The part that runs the poller's handlers (detail::handler_dispatch): where they run, what a
// throwing one becomes, and which handler each change goes to (poller/handlers.hpp declares them).

#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/detail/std_function.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/poller/approval.hpp>
#include <forewarn/poller/handlers.hpp>
#include <forewarn/result.hpp>

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

namespace detail {

/**
 * The poller's dispatch part: where and how handlers run. Each call is handed to the executor
 * (in order) or run at once; a handler that throws, or an executor that refuses a task, becomes
 * errc::handler_failed on report(). report() tells `noted` (health, log) and then on_error, on
 * the calling thread. Holds no lock: it is used by the poller's thread (report() by any).
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
    void post_task(std::function<void()> task);

    /// Runs `f(args...)` here, turning an exception into a report.
    template <class F, class... A>
    void call(const char* name, const F& f, A&&... args) noexcept {
        try {
            f(std::forward<A>(args)...);
        } catch (const std::exception& ex) {
            report(error(errc::handler_failed, cat({name, " threw: ", ex.what()})));
        } catch (...) {
            report(error(errc::handler_failed, cat({name, " threw a non-standard exception"})));
        }
    }

    /// Tells `noted`, then on_error; neither may escape (on_error throwing is swallowed).
    void report(const error& e) noexcept;

    /**
     * Delivery: hands each change to its handler (a prepare with `handle_for(id)`, a recover
     * with `pause_for(id)` as its change::pause), in order, until `stopping()` says a handler
     * stopped the poller. Returns how many were handed on.
     */
    std::size_t deliver(const std::vector<change>& changes, function_ref<approval_handle(const std::string&)> handle_for,
                        function_ref<std::optional<observed_pause>(const std::string&)> pause_for,
                        function_ref<bool()> stopping);

    /// The outcome callbacks of approval handles, each where handlers run.
    void complete(std::vector<approver::completion> done);

private:
    poller_handlers handlers_;
    executor_type executor_;
    std::function<void(const error&)> noted_;
};

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/poller/dispatch-inl.hpp>
#endif
