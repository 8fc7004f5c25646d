// SPDX-License-Identifier: MIT
// tests/support/thread_failures.hpp: a failure recorded on another thread fails the test that
// owns the recorder. The [!shouldfail] cases are passed by Catch only when they fail: were a
// recorded failure dropped, they would pass, and so be reported as failures.
#include "catch.hpp"
#include "thread_failures.hpp"

#include <thread>

namespace test_thread_failures {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

TEST_CASE("thread_failures: a check that holds on another thread says so and records nothing", "[thread_failures]") {
    forewarn_test::thread_failures failures;
    bool held = false;
    std::thread t([&] { held = failures.check(true, "holds"); });
    t.join();
    CHECK(held);
}  // nothing recorded: no failed assertion here

TEST_CASE("thread_failures: a failure recorded on another thread fails the test as it ends",
          "[thread_failures][!shouldfail]") {
    forewarn_test::thread_failures failures;
    std::thread t([&] { failures.check(false, "recorded on another thread"); });
    t.join();
}  // the recorder's destructor: a failed assertion here

TEST_CASE("thread_failures: check_here() turns what another thread recorded into a failed assertion now",
          "[thread_failures][!shouldfail]") {
    forewarn_test::thread_failures failures;
    std::thread t([&] { failures.fail("recorded on another thread"); });
    t.join();
    failures.check_here();
    SUCCEED("the failure above is this case's");
}

}  // namespace test_thread_failures
