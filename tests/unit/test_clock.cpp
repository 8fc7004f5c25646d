// SPDX-License-Identifier: MIT
// clock.hpp and testing/manual_clock.hpp: the one clock, its waits, and knowing when every
// thread on a manual clock is idle.
#include <forewarn/clock.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"
#include "thread_failures.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

namespace test_clock {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::interruptible_sleep;
using forewarn::testing::manual_clock;

TEST_CASE("clock: the default is real time", "[clock]") {
    forewarn::clock c;
    CHECK(c.is_real_time());
    const auto a = c.now();
    CHECK(c.now() >= a);
    auto signal = std::make_shared<forewarn::detail::wake_signal>();
    std::unique_lock<std::mutex> lock(signal->mutex);
    CHECK_FALSE(c.wait_for(signal, lock, 1ms, [] { return false; }));  // a deadline in the past ends at once
    CHECK(c.wait_for(signal, lock, 1h, [] { return true; }));          // so does a true predicate
    CHECK(forewarn::clock::saturating_add(forewarn::clock::time_point::max() - 1s, 1h) ==
          forewarn::clock::time_point::max());
}

TEST_CASE("manual clock: time moves only when advanced - the wall clock moves with it", "[clock]") {
    manual_clock c(std::chrono::system_clock::time_point(1700000000s));
    CHECK_FALSE(c.is_real_time());
    CHECK(c.now().time_since_epoch() == 0s);
    CHECK(c.wall_now() == std::chrono::system_clock::time_point(1700000000s));
    c.advance(90s);
    CHECK(c.now().time_since_epoch() == 90s);
    CHECK(c.wall_now() == std::chrono::system_clock::time_point(1700000090s));
    forewarn::clock copy = c;  // copies share the time line
    CHECK(copy == c);
    CHECK(copy.now().time_since_epoch() == 90s);
}

TEST_CASE("manual clock: a sleep ends exactly when advance() reaches its deadline", "[clock]") {
    manual_clock c;
    interruptible_sleep s(c);
    std::atomic<bool> done{false};
    forewarn_test::thread_failures failures;
    c.thread_started();
    std::thread t([&] {
        failures.check(s.sleep_for(10s), "the sleep ended by reaching its deadline");
        done = true;
        c.thread_ended();
    });
    // Not wait_idle(): that would move time through the sleep (a backoff is work in progress).
    REQUIRE(c.wait_for_sleepers(1));
    c.advance(9s);
    REQUIRE(c.wait_for_sleepers(1));
    CHECK_FALSE(done);
    c.advance(1s);
    t.join();
    CHECK(done);
    CHECK(c.now().time_since_epoch() == 10s);
    CHECK(c.threads() == 0);
}

TEST_CASE("manual clock: interrupt() wakes a sleep, and the woken thread counts as busy until it sleeps again",
          "[clock]") {
    manual_clock c;
    interruptible_sleep s(c);
    std::atomic<int> phase{0};
    forewarn_test::thread_failures failures;
    c.thread_started();
    std::thread t([&] {
        failures.check(!s.sleep_for(1h), "the sleep was interrupted");
        phase = 1;
        s.reset();
        failures.check(!s.sleep_for(1h), "the sleep was interrupted again");
        phase = 2;
        c.thread_ended();
    });
    REQUIRE(c.wait_for_sleepers(1));
    s.interrupt();
    // The notification marked the sleeper busy before it ran: asleep again means it went back.
    REQUIRE(c.wait_for_sleepers(1));
    CHECK(phase == 1);
    s.interrupt();
    t.join();
    CHECK(phase == 2);
    CHECK(c.now().time_since_epoch() == 0s);  // nothing moved time
    CHECK(c.wait_idle());  // no thread left: idle at once
}

TEST_CASE("manual clock: idle means the work is done - wait_idle() moves time through a backoff, never through "
          "a wait for the next work",
          "[clock]") {
    manual_clock c;
    // A thread waiting for its next work (a poll interval): idle, time stands still.
    auto next_work = std::make_shared<forewarn::detail::wake_signal>();
    std::atomic<bool> woke{false};
    c.thread_started();
    std::thread waiter([&] {
        std::unique_lock<std::mutex> lock(next_work->mutex);
        c.wait_until(next_work, lock, forewarn::clock::time_point(30s), [] { return false; });
        woke = true;
        c.thread_ended();
    });
    REQUIRE(c.wait_idle());
    CHECK(c.now().time_since_epoch() == 0s);
    CHECK_FALSE(woke);

    // A thread in a 5 s backoff: not idle; wait_idle() moves time to its end.
    interruptible_sleep backoff(c);
    std::atomic<bool> slept{false};
    c.thread_started();
    std::thread busy([&] {
        slept = backoff.sleep_for(5s);
        c.thread_ended();
    });
    REQUIRE(c.wait_idle());
    busy.join();
    CHECK(slept);
    CHECK(c.now().time_since_epoch() == 5s);
    CHECK_FALSE(woke);  // the idle waiter's 30 s are not reached
    REQUIRE(c.advance_and_wait(25s));
    waiter.join();
    CHECK(woke);
}

TEST_CASE("manual clock: a backoff on a thread no one counts (a test driving poll_once()) ends by itself when "
          "the clock stands still",
          "[clock]") {
    manual_clock c;
    interruptible_sleep backoff(c);
    const auto started = std::chrono::steady_clock::now();
    CHECK(backoff.sleep_for(3s));  // would wait forever without the safety net
    CHECK(c.now().time_since_epoch() == 3s);
    CHECK(std::chrono::steady_clock::now() - started < 30s);  // a bound, not a timing
}

TEST_CASE("interruptible_sleep: sticky until reset", "[clock]") {
    manual_clock c;
    interruptible_sleep s(c);
    s.interrupt();
    CHECK(s.interrupted());
    CHECK_FALSE(s.sleep_for(1h));  // at once: no thread waits, nothing to advance
    s.reset();
    CHECK_FALSE(s.interrupted());
    CHECK(s.sleep_for(0s));
}

}  // namespace test_clock
