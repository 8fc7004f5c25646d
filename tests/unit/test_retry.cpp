// SPDX-License-Identifier: MIT
#include <forewarn/transport/retry.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace test_retry {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::error;
using forewarn::interruptible_sleep;
using forewarn::result;
using forewarn::retry_options;
using forewarn::retry_policy;
using forewarn::retry_rules;
using forewarn::rate_limiter;
using namespace std::chrono_literals;

namespace {
error status(int s) { return error(errc::http_status, "status", s); }

retry_options fast() {
    retry_options o;
    o.initial_backoff = 1ms;
    o.max_backoff = 2ms;
    return o;
}

// An attempt that fails with `e` the first `failures` times, then succeeds; counts its calls.
struct flaky {
    int failures;
    error e;
    int calls = 0;
    result<int> operator()() {
        ++calls;
        if (calls <= failures) return e;
        return calls;
    }
};
}  // namespace

TEST_CASE("Azure's retry rules", "[retry]") {
    const auto azure = retry_rules::azure;
    for (int s : {410, 429, 500, 503}) CHECK(forewarn::is_retryable(status(s), azure));
    for (int s : {200, 301, 400, 401, 403, 404, 405, 501, 502, 504}) CHECK_FALSE(forewarn::is_retryable(status(s), azure));
    CHECK(forewarn::is_retryable(error(errc::transport, "reset"), azure));
    CHECK(forewarn::is_retryable(error(errc::timeout, "slow"), azure));
    for (auto c : {errc::cancelled, errc::parse_error, errc::invalid_document, errc::empty_body, errc::body_too_large,
                   errc::invalid_argument, errc::not_found})
        CHECK_FALSE(forewarn::is_retryable(error(c, "x"), azure));
}

TEST_CASE("GCE's retry rules", "[retry]") {
    const auto gce = retry_rules::gce;
    for (int s : {429, 500, 502, 503, 504, 599}) CHECK(forewarn::is_retryable(status(s), gce));
    for (int s : {400, 404, 410, 600}) CHECK_FALSE(forewarn::is_retryable(status(s), gce));
    CHECK(forewarn::is_retryable(error(errc::transport, "reset"), gce));
    CHECK_FALSE(forewarn::is_retryable(error(errc::cancelled, "stop"), gce));
}

TEST_CASE("any HTTP service's retry rules: 429, every 5xx, a failed connection and a timeout", "[retry]") {
    const auto http = retry_rules::http;
    for (int s : {429, 500, 501, 503, 599}) CHECK(forewarn::is_retryable(status(s), http));
    for (int s : {400, 401, 404, 409, 410, 600}) CHECK_FALSE(forewarn::is_retryable(status(s), http));
    CHECK(forewarn::is_retryable(error(errc::transport, "reset"), http));
    CHECK(forewarn::is_retryable(error(errc::timeout, "slow"), http));
    CHECK_FALSE(forewarn::is_retryable(error(errc::body_too_large, "big"), http));
    CHECK_FALSE(forewarn::is_retryable(error(errc::cancelled, "stop"), http));
}

TEST_CASE("backoff grows by the multiplier up to max_backoff", "[retry]") {
    retry_options o;
    o.initial_backoff = 100ms;
    o.max_backoff = 1000ms;
    o.multiplier = 2.0;
    o.jitter = 0.0;
    retry_policy p(retry_rules::azure, o);
    CHECK(p.backoff(1) == 100ms);
    CHECK(p.backoff(2) == 200ms);
    CHECK(p.backoff(3) == 400ms);
    CHECK(p.backoff(4) == 800ms);
    CHECK(p.backoff(5) == 1000ms);
    CHECK(p.backoff(60) == 1000ms);  // no overflow far out
}

TEST_CASE("jitter keeps each delay within [d * (1 - jitter), d]", "[retry]") {
    retry_options o;
    o.initial_backoff = 1000ms;
    o.max_backoff = 8000ms;
    o.jitter = 0.5;
    retry_policy p(retry_rules::azure, o);
    for (int retry = 1; retry <= 4; ++retry) {
        const auto d = 1000ms * (1 << (retry - 1));
        auto lo = d, hi = 0 * d;
        for (int i = 0; i < 2000; ++i) {
            const auto b = p.backoff(retry);
            lo = std::min(lo, b);
            hi = std::max(hi, b);
        }
        INFO("retry " << retry);
        CHECK(lo >= d / 2);
        CHECK(hi <= d);
        CHECK(hi - lo > d / 4);  // it really is spread out, not a constant
    }
}

TEST_CASE("run retries retryable failures up to max_attempts", "[retry]") {
    interruptible_sleep sleep;
    auto o = fast();
    o.max_attempts = 3;
    retry_policy p(retry_rules::azure, o);
    flaky two{2, status(503)};
    auto r = p.run(std::ref(two), sleep);
    REQUIRE(r.has_value());
    CHECK(*r == 3);
    CHECK(two.calls == 3);

    flaky always{100, status(500)};
    auto bad = p.run(std::ref(always), sleep);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().http_status == 500);
    CHECK(always.calls == 3);

    flaky not_retried{100, status(400)};
    CHECK_FALSE(p.run(std::ref(not_retried), sleep).has_value());
    CHECK(not_retried.calls == 1);
}

TEST_CASE("run with the server's wait: a Retry-After replaces the backoff, at most max_backoff, and without one the backoff", "[retry]") {
    interruptible_sleep sleep;
    retry_options o;
    o.initial_backoff = 1ms;
    o.max_backoff = 40ms;
    o.jitter = 0;
    o.max_attempts = 4;
    const retry_policy p(retry_rules::gce, o);
    std::vector<std::string> said;  // the retry decisions, "retry N in D ms after ...", the delay it then sleeps
    forewarn::logger log;
    log.sink = [&](const forewarn::log_record& r) { said.emplace_back(r.message); };
    // The server asks for 30 ms, then 50 ms (above max_backoff), then names no wait.
    std::vector<std::chrono::milliseconds> asked{30ms, 50ms, 0ms};
    int tries = 0;
    auto attempt = [&]() -> result<int> {
        ++tries;
        if (tries <= 3) return status(429);
        return tries;
    };
    auto r = p.run(attempt, sleep, log, [&] { return asked[static_cast<std::size_t>(tries - 1)]; });
    REQUIRE(r.has_value());
    CHECK(*r == 4);
    REQUIRE(said.size() == 3);
    CHECK(said[0].rfind("retry 1 in 30 ms after", 0) == 0);
    CHECK(said[1].rfind("retry 2 in 40 ms after", 0) == 0);  // 50 ms asked, capped
    CHECK(said[2].rfind("retry 3 in 4 ms after", 0) == 0);   // none asked: the third backoff, 1 ms * 2^2
}

TEST_CASE("run with the call's own retryable: a 400 the call calls throttled is tried again, within the policy's attempts", "[retry]") {
    interruptible_sleep sleep;
    auto o = fast();
    o.max_attempts = 3;
    const retry_policy p(retry_rules::aws, o);
    const auto no_wait = [] { return std::chrono::milliseconds(0); };
    std::vector<const error*> judged;
    const auto throttled = [&](const error& e) {
        judged.push_back(&e);
        return e.http_status == 400 && e.message == "Throttling";
    };
    // Throttled twice, then done: the rules alone would stop at the first 400.
    int tries = 0;
    auto slow_down = [&]() -> result<int> {
        if (++tries <= 2) return error(errc::http_status, "Throttling", 400);
        return tries;
    };
    auto r = p.run(slow_down, sleep, {}, no_wait, throttled);
    REQUIRE(r.has_value());
    CHECK(*r == 3);
    CHECK(judged.size() == 2);
    tries = 0;
    CHECK_FALSE(p.run(slow_down, sleep).has_value());
    CHECK(tries == 1);

    // Always throttled: max_attempts still ends it, with the last answer.
    flaky always{100, status(400)};
    auto spent = p.run(std::ref(always), sleep, {}, no_wait, [](const error&) { return true; });
    REQUIRE_FALSE(spent.has_value());
    CHECK(spent.error().http_status == 400);
    CHECK(always.calls == 3);

    // What the call does not call retryable ends it at once, a 503 the rules would retry included.
    flaky unavailable{100, status(503)};
    CHECK_FALSE(p.run(std::ref(unavailable), sleep, {}, no_wait, [](const error&) { return false; }).has_value());
    CHECK(unavailable.calls == 1);
}

TEST_CASE("410 is bounded by gone_window under Azure's rules only", "[retry]") {
    interruptible_sleep sleep;
    auto o = fast();
    o.max_attempts = 2;
    o.gone_window = 30ms;
    o.budget_capacity = 1e6;
    retry_policy azure(retry_rules::azure, o);
    flaky gone{1000000, status(410)};
    const auto start = std::chrono::steady_clock::now();
    auto r = azure.run(std::ref(gone), sleep);
    REQUIRE_FALSE(r.has_value());
    CHECK(std::chrono::steady_clock::now() - start >= 30ms);
    CHECK(gone.calls > 2);  // more than max_attempts: 410 is counted in time

    o.gone_window = 0ms;
    retry_policy closed(retry_rules::azure, o);
    flaky once{1000000, status(410)};
    CHECK_FALSE(closed.run(std::ref(once), sleep).has_value());
    CHECK(once.calls == 1);

    retry_policy gce(retry_rules::gce, o);
    flaky g{1000000, status(410)};
    CHECK_FALSE(gce.run(std::ref(g), sleep).has_value());
    CHECK(g.calls == 1);
}

TEST_CASE("max_elapsed stops retries that would start too late", "[retry]") {
    interruptible_sleep sleep;
    auto o = fast();
    o.max_attempts = 1000;
    o.max_elapsed = 0ms;
    retry_policy p(retry_rules::gce, o);
    flaky f{100, status(503)};
    CHECK_FALSE(p.run(std::ref(f), sleep).has_value());
    CHECK(f.calls == 1);
}

TEST_CASE("the retry budget is shared by copies and refilled by successes", "[retry]") {
    interruptible_sleep sleep;
    auto o = fast();
    o.max_attempts = 100;
    o.budget_capacity = 3;
    o.budget_per_success = 0.5;
    retry_policy p(retry_rules::azure, o);
    retry_policy copy = p;
    CHECK(copy.budget() == p.budget());
    flaky f{100, status(503)};
    CHECK_FALSE(p.run(std::ref(f), sleep).has_value());
    CHECK(f.calls == 4);  // the first try and three retries, then the budget is spent
    CHECK(p.budget()->available() < 1.0);
    flaky g{100, status(503)};
    CHECK_FALSE(copy.run(std::ref(g), sleep).has_value());
    CHECK(g.calls == 1);  // the copy has nothing left either
    flaky ok{0, status(503)};
    REQUIRE(copy.run(std::ref(ok), sleep).has_value());
    REQUIRE(copy.run(std::ref(ok), sleep).has_value());
    CHECK(p.budget()->available() == Approx(1.0));
    flaky h{100, status(503)};
    CHECK_FALSE(p.run(std::ref(h), sleep).has_value());
    CHECK(h.calls == 2);  // one retry earned back by two successes
}

TEST_CASE("interruptible_sleep: interrupt is sticky until reset and wakes a sleeper", "[retry]") {
    interruptible_sleep s;
    CHECK(s.sleep_for(1ms));
    s.interrupt();
    CHECK(s.interrupted());
    CHECK_FALSE(s.sleep_for(std::chrono::hours(1)));  // returns at once
    s.reset();
    CHECK_FALSE(s.interrupted());

    std::thread t([&] {
        std::this_thread::sleep_for(20ms);
        s.interrupt();
    });
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(s.sleep_for(std::chrono::seconds(30)));
    t.join();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("run returns cancelled when its backoff is interrupted", "[retry]") {
    interruptible_sleep sleep;
    retry_options o;
    o.initial_backoff = std::chrono::seconds(30);
    o.max_backoff = std::chrono::seconds(30);
    retry_policy p(retry_rules::azure, o);
    std::atomic<int> calls{0};
    std::thread t([&] {
        for (int i = 0; i < 5000 && calls.load() == 0; ++i) std::this_thread::sleep_for(1ms);
        std::this_thread::sleep_for(10ms);
        sleep.interrupt();
    });
    const auto start = std::chrono::steady_clock::now();
    auto r = p.run([&]() -> result<int> { ++calls; return status(503); }, sleep);
    t.join();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::cancelled);
    CHECK(calls.load() == 1);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("rate_limiter: at most 5 in any second, a sliding window", "[retry][rate]") {
    forewarn::testing::manual_clock clock;
    rate_limiter l(5, 1s, clock);
    for (int i = 0; i < 3; ++i) CHECK(l.try_acquire().count() == 0);  // t = 0
    clock.advance(600ms);
    for (int i = 0; i < 2; ++i) CHECK(l.try_acquire().count() == 0);  // t = 0.6 s: five in the window
    CHECK(l.try_acquire() == 400ms);  // the first three leave the window at t = 1 s
    CHECK(l.try_acquire() == 400ms);  // a refused try takes nothing
    clock.advance(400ms);
    for (int i = 0; i < 3; ++i) CHECK(l.try_acquire().count() == 0);
    CHECK(l.try_acquire() == 600ms);  // the two of t = 0.6 s are still in it
    // Over any second, never more than five: a token bucket with a burst of 5 would have let ten.
    rate_limiter unlimited(0, 1s, clock);
    for (int i = 0; i < 1000; ++i) REQUIRE(unlimited.try_acquire().count() == 0);
}

TEST_CASE("rate_limiter: acquire waits on the clock, and an interrupted wait gives up", "[retry][rate]") {
    forewarn::testing::manual_clock clock;
    rate_limiter l(1, 1s, clock);
    interruptible_sleep sleep(clock);
    REQUIRE(l.acquire(sleep));
    std::atomic<bool> got{false};
    clock.thread_started();
    std::thread t([&] {
        got = l.acquire(sleep);
        clock.thread_ended();
    });
    // Not wait_idle(): a rate-limit wait is work in progress, which wait_idle() would end.
    REQUIRE(clock.wait_for_sleepers(1));
    CHECK_FALSE(got);
    clock.advance(1s);
    t.join();
    CHECK(got);
    sleep.interrupt();
    CHECK_FALSE(l.acquire(sleep));
}

TEST_CASE("rate_limiter::for_host shares one limiter per host and clock", "[retry][rate]") {
    auto a = rate_limiter::for_host("test-for-host-a:80");
    auto a2 = rate_limiter::for_host("test-for-host-a:80");
    auto b = rate_limiter::for_host("test-for-host-b:80");
    forewarn::testing::manual_clock clock;
    auto a_manual = rate_limiter::for_host("test-for-host-a:80", clock);
    CHECK(a == a2);
    CHECK(a != b);
    CHECK(a != a_manual);
    CHECK(a->limit() == 5);
    CHECK(a->window() == 1s);
    for (int i = 0; i < 5; ++i) CHECK(a->try_acquire().count() == 0);
    CHECK(a2->try_acquire().count() > 0);  // the same window
    CHECK(b->try_acquire().count() == 0);  // another host is not affected
    CHECK(a_manual->try_acquire().count() == 0);  // nor another clock
}

}  // namespace test_retry
