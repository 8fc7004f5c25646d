// SPDX-License-Identifier: MIT
// The prepare hook's policy at its own layer (tools/watch/prepare_policy.hpp): the approve-by
// time (NotBefore less --hook-deadline), the hook's stop (--hook-timeout or that time, whichever
// comes first), whether --lb-drain's hold fits before it (with and without --unready-before),
// and which way a hook's end goes (succeeded in time, late, failed), told by what it logs. The
// agent's end-to-end cases (tests/integration/test_watch.cpp) drive the same through the program.
#include "prepare_policy.hpp"

#include "lines.hpp"

#include "catch.hpp"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

namespace test_prepare_policy {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;

namespace {

forewarn::event at(std::optional<wall::time_point> not_before) {
    forewarn::event e;
    e.id = "E1";
    e.type = forewarn::event_type::reboot;
    e.not_before = not_before;
    return e;
}

// What the agent logs while `f` runs (its log stream pointed at a temporary file).
template <class F>
std::string logged(F&& f) {
    std::FILE* log = std::tmpfile();
    REQUIRE(log != nullptr);
    const auto before = watch::streams();
    watch::set_streams({before.lines, log});
    f();
    watch::set_streams(before);
    std::fflush(log);
    std::rewind(log);
    std::string text;
    char buf[512];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, log)) > 0;) text.append(buf, n);
    std::fclose(log);
    return text;
}

watch::hook_outcome ended(watch::hook_outcome::kind what) {
    watch::hook_outcome o;
    o.what = what;
    return o;
}

}  // namespace

TEST_CASE("prepare policy: the approve-by time is NotBefore less --hook-deadline, on the steady clock, and none without a time") {
    watch::settings s;
    s.hook_deadline = 60s;
    const watch::prepare_policy p(s, true);
    const auto now = wall::now();
    const auto steady_now = steady::now();
    const auto by = p.approve_by(at(now + 10min), now, steady_now);
    REQUIRE(by);
    CHECK(*by - steady_now == std::chrono::duration_cast<steady::duration>(9min));
    CHECK_FALSE(p.approve_by(at(std::nullopt), now, steady_now));
}

TEST_CASE("prepare policy: a hook stops at --hook-timeout, or at its approve-by time when that comes first and is ahead") {
    watch::settings s;
    s.hook_timeout = 300s;
    const watch::prepare_policy p(s, true);
    const auto now = steady::now();
    CHECK(p.deadline(std::nullopt, now) == now + 300s);
    CHECK(p.deadline(now + 100s, now) == now + 100s);  // sooner: the approve-by time
    CHECK(p.deadline(now + 900s, now) == now + 300s);  // later: the timeout
    CHECK(p.deadline(now - 1s, now) == now + 300s);    // passed: the hook still runs to its timeout
}

TEST_CASE("prepare policy: --lb-drain fits when the hold from now, or from --unready-before ahead of NotBefore, ends by the approve-by time") {
    watch::settings s;
    s.hook_deadline = 60s;
    const auto now = wall::now();
    {
        const watch::prepare_policy p(s, true);  // --lb-drain 0: nothing to fit
        CHECK(p.drain_fits(at(now + 1s), now));
    }
    s.lb_drain = 60s;
    {
        const watch::prepare_policy p(s, true);
        CHECK(p.drain_fits(at(now + 10min), now));
        CHECK(p.drain_fits(at(now + 120s), now));       // now + 60 s == NotBefore - 60 s: just fits
        CHECK_FALSE(p.drain_fits(at(now + 119s), now));
        CHECK(p.drain_fits(at(std::nullopt), now));     // no time: nothing to miss
    }
    s.unready_before = 300s;
    {
        const watch::prepare_policy p(s, true);  // the hold starts 300 s before NotBefore
        CHECK(p.drain_fits(at(now + 10min), now));
        s.lb_drain = 250s;                        // NotBefore - 300 + 250 > NotBefore - 60
        CHECK_FALSE(p.drain_fits(at(now + 10min), now));
    }
}

TEST_CASE("prepare policy: a hook ended in time logs nothing, one late or failed logs that its event is not approved, unless quiet") {
    watch::settings s;
    const watch::prepare_policy p(s, true);
    const auto ahead = steady::now() + 1h;
    const auto passed = steady::now() - 1s;
    // A handle with no poller behind it: ready() and decline() do nothing, so only the log tells
    // the branches apart here; that the event is then approved or not is the agent's end-to-end
    // cases' (tests/integration/test_watch.cpp: approved after its hook, never after a failing one).
    CHECK(logged([&] { p.after("E1", ahead, {}, false)(ended(watch::hook_outcome::kind::succeeded)); }).empty());
    CHECK(logged([&] { p.after("E1", std::nullopt, {}, false)(ended(watch::hook_outcome::kind::succeeded)); }).empty());
    CHECK(logged([&] { p.after("E1", passed, {}, false)(ended(watch::hook_outcome::kind::succeeded)); }).find(
              "hook prepare E1: done after its deadline; the event is not approved") != std::string::npos);
    CHECK(logged([&] { p.after("E1", ahead, {}, false)(ended(watch::hook_outcome::kind::failed)); }).find(
              "hook prepare E1: the event is not approved") != std::string::npos);
    CHECK(logged([&] { p.after("E1", ahead, {}, true)(ended(watch::hook_outcome::kind::failed)); }).empty());
}

TEST_CASE("prepare policy: a hold that cannot fit is logged and declined at the announcement, and without approving it always fits") {
    watch::settings s;
    s.hook_deadline = 60s;
    s.lb_drain = 60s;
    forewarn::change c;
    c.kind = forewarn::change_kind::prepare;
    c.event = at(wall::now() + 30s);
    forewarn::approval_handle handle;
    bool fits = true;
    const std::string log = logged([&] { fits = watch::prepare_policy(s, true).hold_fits(c, handle); });
    CHECK_FALSE(fits);
    CHECK(log.find("event E1: announced too close to NotBefore for --lb-drain 60 s") != std::string::npos);
    CHECK(logged([&] { fits = watch::prepare_policy(s, false).hold_fits(c, handle); }).empty());
    CHECK(fits);
}

}  // namespace test_prepare_policy
