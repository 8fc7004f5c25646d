// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/min_max.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

namespace detail {

/// A uniform draw from [0, 1) for backoff jitter: a splitmix64 stream per thread, seeded from the
/// steady clock and the thread's own address. Jitter needs spread between processes and threads,
/// not secrecy, and <random> would cost every translation unit that includes a client.
double jitter_draw() noexcept;

}  // namespace detail

/// Jittered exponential backoff. Plain struct: set the members you care about.
struct retry_options {
    int max_attempts = 5;  ///< tries per call, the first included (410 is bounded by gone_window instead)
    std::chrono::milliseconds initial_backoff{200};
    std::chrono::milliseconds max_backoff{5000};
    double multiplier = 2.0;
    double jitter = 0.5;  ///< each delay is drawn uniformly from [d * (1 - jitter), d]
    std::chrono::milliseconds max_elapsed{30000};  ///< no retry starts later than this after the first try
    std::chrono::milliseconds gone_window{70000};  ///< Azure 410: keep retrying for at most this long
    double budget_capacity = 20.0;     ///< retries that may be spent in a burst across calls
    double budget_per_success = 0.2;   ///< retries earned back by each successful call
};

/// Which status codes a service wants retried.
enum class retry_rules {
    azure,  ///< 410 (within gone_window), 429, 500, 503 and transport errors; never 400 or 404
    gce,    ///< 429, every 5xx and transport errors
    aws,    ///< 429, every 5xx and transport errors (401 is a token to renew, handled by the client)
    http,   ///< any other HTTP service's: 429, every 5xx and transport errors (the Spot reclaim notices' services, forewarn-watch's webhook and Kubernetes API calls)
};

/// Whether an error is worth another try under a service's rules.
bool is_retryable(const error& e, retry_rules rules) noexcept;

/**
 * Retries that may still be spent, shared by every call of a client: a token bucket that each
 * retry draws from and each success refills a little, so a dead service is not hammered by every
 * call retrying in full. Thread-safe.
 */
class retry_budget {
public:
    explicit retry_budget(double capacity = 20.0, double per_success = 0.2)
        : capacity_(capacity), per_success_(per_success), tokens_(capacity) {}

    bool try_spend();
    void on_success();
    double available() const;

private:
    mutable std::mutex mutex_;
    double capacity_, per_success_, tokens_;
};

/**
 * Keeps a process at or below a request rate towards one host: at most `limit` requests in any
 * `window` (a sliding window, so no burst at the edge of two windows goes over it). IMDS answers
 * 429 beyond 5 requests in a second across all of a VM's IMDS calls, so every client of the same
 * host shares one limiter: see for_host(). Time is the clock's (a manual clock lets requests
 * through again only when a test advances it). Thread-safe.
 */
class rate_limiter {
public:
    /// `limit` requests per `window`; a limit of 0 lets everything through.
    rate_limiter(std::size_t limit, std::chrono::nanoseconds window, forewarn::clock c = {})
        : clock_(std::move(c)), limit_(limit), window_(window) {}

    /// Takes a slot if the window has one; otherwise returns how long until it will (and takes nothing).
    std::chrono::nanoseconds try_acquire();

    /// Waits for a slot on `sleep` (which should be on this limiter's clock); false when it was
    /// interrupted first.
    bool acquire(interruptible_sleep& sleep);

    std::size_t limit() const noexcept { return limit_; }
    std::chrono::nanoseconds window() const noexcept { return window_; }
    const forewarn::clock& clock() const noexcept { return clock_; }

    /// The process-wide limiter for a host ("169.254.169.254:80") on a clock: 5 requests in any
    /// second. Clients on one clock share it; a manual clock gets limiters of its own (each keeps
    /// its clock alive, so a clock's address is never reused while its limiters exist).
    static std::shared_ptr<rate_limiter> for_host(std::string_view authority, const forewarn::clock& c = {});

private:
    forewarn::clock clock_;
    std::mutex mutex_;
    std::size_t limit_;
    std::chrono::nanoseconds window_;
    // The last `limit_` requests' times, a ring whose oldest is at next_ once it is full: a
    // request may go when fewer than limit_ of them are within the window.
    std::vector<forewarn::clock::time_point> sent_;
    std::size_t next_ = 0;
};

/// Retry rules, backoff and budget of one client. Copies share the budget.
class retry_policy {
public:
    explicit retry_policy(retry_rules rules = retry_rules::azure, retry_options options = {});

    /// The message of run()'s errc::cancelled when `sleep` was interrupted in a pause before a
    /// retry (not a try's own cancel): a caller that names itself in its errors tells them apart by it.
    static constexpr std::string_view cancelled_message = "cancelled while waiting to retry";

    const retry_options& options() const noexcept { return options_; }
    retry_rules rules() const noexcept { return rules_; }
    const std::shared_ptr<retry_budget>& budget() const noexcept { return budget_; }

    /// The delay before retry number `retry` (1 for the first retry), jittered.
    std::chrono::milliseconds backoff(int retry) const;

    /**
     * Runs `attempt` (a callable returning result<R>) until it succeeds, fails for good, or the
     * policy says stop. Sleeps between tries on `sleep` (on its clock), so cancel() cuts a
     * backoff short. Each retry decision is logged at info, with what failed. Returns the last
     * result.
     */
    template <class Attempt>
    auto run(Attempt&& attempt, interruptible_sleep& sleep, const logger& log = {}) const -> decltype(attempt()) {
        return run(std::forward<Attempt>(attempt), sleep, log, [] { return std::chrono::milliseconds(0); });
    }

    /**
     * The same, with the server's own wait where it named one: after a failed try, `server_wait()`
     * (a callable returning std::chrono::milliseconds) gives the delay the answer asked for, such
     * as a 429's Retry-After; above zero, it replaces the backoff, at most max_backoff.
     */
    template <class Attempt, class ServerWait>
    auto run(Attempt&& attempt, interruptible_sleep& sleep, const logger& log, ServerWait&& server_wait) const
        -> decltype(attempt()) {
        return run(std::forward<Attempt>(attempt), sleep, log, std::forward<ServerWait>(server_wait),
                   [this](const error& e) { return is_retryable(e, rules_); });
    }

    /**
     * The same, with the call's own judgement of which failures are worth another try:
     * `retryable(const error&)` (returning bool) in place of the rules' is_retryable, for a
     * service that asks to slow down in the body of an answer the rules never retry (a 400 whose
     * error code says throttled). The attempts, the time, the budget and the log are the policy's.
     */
    template <class Attempt, class ServerWait, class Retryable>
    auto run(Attempt&& attempt, interruptible_sleep& sleep, const logger& log, ServerWait&& server_wait,
             Retryable&& retryable) const -> decltype(attempt()) {
        const forewarn::clock& clock = sleep.clock();
        const auto start = clock.now();
        for (int tries = 1;; ++tries) {
            auto r = attempt();
            if (r.has_value()) {
                budget_->on_success();
                return r;
            }
            const error& e = r.error();
            if (!retryable(e)) return r;
            const auto elapsed = clock.now() - start;
            const bool gone = rules_ == retry_rules::azure && e.code == errc::http_status && e.http_status == 410;
            const char* why_not = nullptr;
            if (gone) {
                if (elapsed >= options_.gone_window) why_not = "410 for longer than the gone window";
            } else if (tries >= options_.max_attempts) {
                why_not = "out of attempts";
            } else if (elapsed >= options_.max_elapsed) {
                why_not = "out of time";
            }
            if (!why_not && !budget_->try_spend()) why_not = "the retry budget is spent";
            if (why_not) {
                if (log.enabled(log_level::info))
                    log(log_level::info, detail::cat({"not retrying (", why_not, "): ", e.describe()}), e.url);
                return r;
            }
            const std::chrono::milliseconds asked = server_wait();
            const auto delay = asked.count() > 0 ? detail::smaller(asked, options_.max_backoff) : backoff(tries);
            if (log.enabled(log_level::info))
                log(log_level::info,
                    detail::cat({"retry ", detail::num(tries), " in ", detail::num(delay.count()), " ms after ", e.describe()}),
                    e.url);
            if (!sleep.sleep_for(delay)) return error(errc::cancelled, std::string(cancelled_message));
        }
    }

private:
    retry_rules rules_;
    retry_options options_;
    std::shared_ptr<retry_budget> budget_;
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/transport/retry-inl.hpp>
#endif
