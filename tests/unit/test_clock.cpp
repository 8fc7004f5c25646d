// SPDX-License-Identifier: MIT
// clock.hpp and testing/manual_clock.hpp: the one clock, its waits, and knowing when every
// thread on a manual clock is idle.
#include <forewarn/clock.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

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
    c.thread_started();
    std::thread t([&] {
        CHECK(s.sleep_for(10s));
        done = true;
        c.thread_ended();
    });
    REQUIRE(c.wait_idle());
    CHECK(c.sleepers() == 1);
    REQUIRE(c.advance_and_wait(9s));
    CHECK_FALSE(done);
    REQUIRE(c.advance_and_wait(1s));
    CHECK(done);
    t.join();
    CHECK(c.threads() == 0);
}

TEST_CASE("manual clock: interrupt() wakes a sleep, and the woken thread counts as busy until it sleeps again",
          "[clock]") {
    manual_clock c;
    interruptible_sleep s(c);
    std::mutex m;
    bool proceed = false;
    std::atomic<int> phase{0};
    c.thread_started();
    std::thread t([&] {
        CHECK_FALSE(s.sleep_for(1h));  // interrupted
        phase = 1;
        {
            std::lock_guard<std::mutex> lock(m);
            (void)proceed;
        }
        s.reset();
        CHECK_FALSE(s.sleep_for(1h));  // interrupted again below
        phase = 2;
        c.thread_ended();
    });
    REQUIRE(c.wait_idle());
    s.interrupt();
    // The notification marked the sleeper busy before it ran: idle means it went back to sleep.
    REQUIRE(c.wait_idle());
    CHECK(phase == 1);
    CHECK(c.sleepers() == 1);
    s.interrupt();
    t.join();
    CHECK(phase == 2);
    CHECK(c.wait_idle());  // no thread left: idle at once
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
