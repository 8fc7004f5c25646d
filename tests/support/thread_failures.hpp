// SPDX-License-Identifier: MIT
#pragma once

// Failures seen on a thread other than the test's (a transport's lane, a thread the test started):
// Catch's assertions belong to the test's thread (a failing REQUIRE or FAIL elsewhere calls
// std::terminate and ends the whole run), so code there records them here, and they become
// failed assertions on the test's thread when the test ends (or earlier, at check_here()).
//
//     forewarn_test::thread_failures failures;
//     std::thread t([&] { failures.check(s.sleep_for(10s), "the sleep ended by advance()"); });

#include "catch.hpp"

#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace forewarn_test {

class thread_failures {
public:
    thread_failures() = default;
    thread_failures(const thread_failures&) = delete;
    thread_failures& operator=(const thread_failures&) = delete;

    /// Any thread: records `what` when `ok` is false. Returns `ok`.
    bool check(bool ok, const std::string& what) {
        if (!ok) fail(what);
        return ok;
    }
    /// Any thread: records a failure.
    void fail(const std::string& what) {
        std::lock_guard<std::mutex> lock(mutex_);
        seen_.push_back(what);
    }
    /// The test's thread: each failure recorded so far as a failed assertion here.
    void check_here() {
        std::vector<std::string> seen;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            seen.swap(seen_);
        }
        for (const auto& s : seen) FAIL_CHECK("on another thread: " << s);
    }
    /// The test's thread, as the test ends: what is left, unless a REQUIRE is unwinding already.
    ~thread_failures() {
        if (std::uncaught_exceptions() == 0) check_here();
    }

private:
    std::mutex mutex_;
    std::vector<std::string> seen_;
};

}  // namespace forewarn_test
