// SPDX-License-Identifier: MIT
// detail::key_rounds (metadata_exchange.hpp) through a small client of its own (keyed_client.hpp):
// when a document is a plain reading of every key, how a round asks polled keys on their cadence
// and hanging keys on lanes of their own, what ends a round, wake() and cancel(). Everything on a
// manual clock: time moves only when the test advances it.
#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"
#include "keyed_client.hpp"

#include <chrono>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace test_key_rounds {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::errc;
using forewarn::detail::key_plan;
using forewarn::testing::manual_clock;
using forewarn_test::key_server;
using forewarn_test::keyed_client;
using forewarn_test::next_call;

namespace {

std::vector<std::string> ids(const forewarn::document& d) {
    std::vector<std::string> out;
    for (const auto& e : d.events) out.push_back(e.id);
    return out;
}

std::chrono::nanoseconds since_start(forewarn::clock::time_point t) { return t.time_since_epoch(); }

// One round with a document wanted now: nothing in it waits on the clock.
template <class Client>
void round_now(Client& c, const manual_clock& clock) {
    next_call call(c, clock, clock.now());
    REQUIRE(clock.wait_idle());
    REQUIRE(call.done());
    REQUIRE(call.get());
}

}  // namespace

TEST_CASE("key_rounds: the first document is every key read once, plainly, on lane 0 and the caller's thread - "
          "a key planned off is not asked",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 3);
    server->set(0, "a", "t0");
    server->set(1, "b", "t1");
    server->set(2, "c", "t2");
    keyed_client<3, true> c(server, clock, {key_plan::hang(60s), key_plan::poll(1s), key_plan::off()});
    auto doc = c.next();
    REQUIRE(doc);
    CHECK(ids(*doc) == std::vector<std::string>{"a", "b"});
    const auto log = server->log();
    REQUIRE(log.size() == 2);
    for (const auto& s : log) {
        CHECK_FALSE(s.hang);
        CHECK(s.lane == 0);
        CHECK(s.thread == std::this_thread::get_id());
    }
    CHECK(log[0].key == 0);
    CHECK(log[1].key == 1);
    CHECK(since_start(clock.now()) == 0s);  // no wait before the first document
}

TEST_CASE("key_rounds: each polled key is asked on its own cadence, and the round ends once every key was asked",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a");
    server->set(1, "b");
    keyed_client<2> c(server, clock, {key_plan::poll(1s), key_plan::poll(3s)});
    REQUIRE(c.next());
    next_call call(c, clock);
    REQUIRE(clock.wait_idle());
    CHECK(server->log().size() == 2);  // nothing asked before its time
    REQUIRE(clock.advance_and_wait(1s));
    CHECK(server->asked(0) == 2);
    CHECK(server->asked(1) == 1);
    CHECK_FALSE(call.done());
    REQUIRE(clock.advance_and_wait(1s));
    CHECK(server->asked(0) == 3);  // the faster key again: it never waits for the slower one
    CHECK(server->asked(1) == 1);
    CHECK_FALSE(call.done());
    REQUIRE(clock.advance_and_wait(1s));
    REQUIRE(call.done());  // the slower key asked at 3 s: every key was asked, the round is over
    auto doc = call.get();
    REQUIRE(doc);
    CHECK(ids(*doc) == std::vector<std::string>{"a", "b"});
    CHECK(server->asked(0) == 3);  // at 3 s the key not asked yet in this round went first
    CHECK(server->asked(1) == 2);
    const auto log = server->log();
    for (std::size_t i = 0; i < log.size(); ++i) {
        CHECK(log[i].lane == 0);
        CHECK(log[i].thread == (i < 2 ? std::this_thread::get_id() : call.thread_id()));  // fetch, then the round
    }
}

TEST_CASE("key_rounds: not_after brings forward a polled key not asked yet in the round, never one asked already - "
          "it waits for its own cadence while a hanging GET runs on",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    key_server::key held;  // a hanging GET the service answers 5 s after its time
    held.body = "a";
    held.etag = "t0";
    held.late = 5s;
    server->set(0, held);
    server->set(1, "b");
    keyed_client<2, true> c(server, clock, {key_plan::hang(60s), key_plan::poll(10s)});
    REQUIRE(c.next());
    next_call call(c, clock, clock.now() + 1500ms);
    REQUIRE(clock.wait_idle());  // the call waits on the clock: time moves from here
    REQUIRE(clock.advance_and_wait(1500ms));
    CHECK(server->asked(1) == 2);  // at not_after, not at its own 10 s
    CHECK(since_start(server->log().back().at) == 1500ms);
    CHECK_FALSE(call.done());  // the hanging GET (1 s: not_after bounds it) is answered at 6 s
    REQUIRE(clock.advance_and_wait(4500ms));
    REQUIRE(call.done());
    REQUIRE(call.get());
    CHECK(server->asked(0, true) == 1);
    CHECK(server->asked(1) == 2);  // asked once in the round: past not_after it waits for its 10 s
}

TEST_CASE("key_rounds: a key on its own cadence (a heartbeat) is asked once planned, then every `every` - "
          "never sooner for not_after, wake() or a plain reading, and a round never waits for it",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a");
    keyed_client<2> c(server, clock, {key_plan::poll(1s), key_plan::off()});
    REQUIRE(c.next());
    CHECK(server->asked(1) == 0);
    c.plans[1] = key_plan::beat(3s);  // the heartbeat turns on
    auto beats = [&] {
        std::vector<std::chrono::nanoseconds> at;
        for (const auto& s : server->log())
            if (s.key == 1) at.push_back(since_start(s.at));
        return at;
    };
    using at_list = std::vector<std::chrono::nanoseconds>;
    {
        next_call call(c, clock);
        REQUIRE(clock.wait_idle());
        CHECK(beats() == at_list{0s});  // at once: it was off
        CHECK_FALSE(call.done());
        REQUIRE(clock.advance_and_wait(1s));
        REQUIRE(call.done());  // key 0 asked at 1 s: the round is over, not waiting for the beat's 3 s
        REQUIRE(call.get());
    }
    {
        next_call call(c, clock, clock.now() + 200ms);  // a document wanted sooner
        REQUIRE(clock.wait_idle());
        REQUIRE(clock.advance_and_wait(200ms));
        REQUIRE(call.done());
        REQUIRE(call.get());
        CHECK(server->asked(0) == 3);  // key 0 brought forward to 1.2 s
        CHECK(beats() == at_list{0s});  // the beat was not
    }
    c.wake();
    REQUIRE(c.next());  // a plain reading of every key (no wait): not the beat's time either
    CHECK(server->asked(0) == 4);
    CHECK(beats() == at_list{0s});
    {
        next_call call(c, clock);
        REQUIRE(clock.wait_idle());
        REQUIRE(clock.advance_and_wait(1s));  // 2.2 s: key 0, and the round is over
        REQUIRE(call.done());
        REQUIRE(call.get());
    }
    {
        next_call call(c, clock);
        REQUIRE(clock.wait_idle());
        REQUIRE(clock.advance_and_wait(800ms));  // 3 s: the beat's time
        CHECK(beats() == at_list{0s, 3s});
        CHECK_FALSE(call.done());
        REQUIRE(clock.advance_and_wait(200ms));  // 3.2 s: key 0
        REQUIRE(call.done());
        REQUIRE(call.get());
    }
    c.plans[1] = key_plan::off();  // the heartbeat stops
    {
        next_call call(c, clock);
        REQUIRE(clock.wait_idle());
        REQUIRE(clock.advance_and_wait(1s));  // 4.2 s: key 0
        REQUIRE(call.done());
        REQUIRE(call.get());
    }
    c.plans[1] = key_plan::beat(3s);  // and turns on again: at once
    next_call call(c, clock);
    REQUIRE(clock.wait_idle());
    CHECK(beats() == at_list{0s, 3s, 4200ms});
}

TEST_CASE("key_rounds: not_after never brings forward a key on its own cadence, even one due before every other key",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(1, "b");
    // The beat is key 0, first in the keys' order: brought forward, it would tie with key 1 at
    // not_after and be picked first.
    keyed_client<2> c(server, clock, {key_plan::beat(2s), key_plan::poll(10s)});
    REQUIRE(c.next());    // the first document, a plain reading: key 1 alone
    round_now(c, clock);  // a round at 0 s: the beat's first ask, then key 1
    REQUIRE(server->asked(0) == 1);
    REQUIRE(server->asked(1) == 2);
    next_call call(c, clock, clock.now() + 1500ms);  // wanted at 1.5 s: before the beat's 2 s and key 1's 10 s
    REQUIRE(clock.wait_idle());
    REQUIRE(clock.advance_and_wait(1500ms));
    REQUIRE(call.done());
    REQUIRE(call.get());
    CHECK(server->asked(1) == 3);  // key 1 brought forward to 1.5 s
    CHECK(server->asked(0) == 1);  // the beat was not: its next time is 2 s
}

TEST_CASE("key_rounds: next()'s plain readings never ask a key on its own cadence, even one due - the next round asks "
          "it first thing, and a caller's own fetch() asks it when due",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a");
    keyed_client<2> c(server, clock, {key_plan::poll(10s), key_plan::beat(1s)});
    REQUIRE(c.next());  // the first document, a plain reading: key 0 alone
    CHECK(server->asked(0) == 1);
    CHECK(server->asked(1) == 0);
    round_now(c, clock);
    CHECK(server->asked(1) == 1);  // planned and never asked: the round's first ask
    clock.advance(1500ms);         // no call under way: the beat is due from 1 s
    c.wake();
    REQUIRE(c.next());  // a plain reading at 1.5 s
    CHECK(server->asked(0) == 3);
    CHECK(server->asked(1) == 1);  // due, and still left to the round
    round_now(c, clock);
    REQUIRE(server->asked(1) == 2);
    const auto log = server->log();
    REQUIRE(log.size() == 6);
    CHECK(log[4].key == 1);  // before key 0: due since 1 s
    CHECK(since_start(log[4].at) == 1500ms);
    clock.advance(1s);   // 2.5 s: due again
    REQUIRE(c.fetch());  // the caller's own plain reading
    CHECK(server->asked(1) == 3);
    REQUIRE(c.fetch());  // not again before its time
    CHECK(server->asked(1) == 3);
}

TEST_CASE("key_rounds: a change ends the round at once - a key not asked yet keeps its last reading", "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a");
    server->set(1, "b");
    keyed_client<2> c(server, clock, {key_plan::poll(1s), key_plan::poll(5s)});
    REQUIRE(c.next());
    server->set(0, "a2");
    server->set(1, "b2");  // not asked before the round ends
    next_call call(c, clock);
    REQUIRE(clock.wait_idle());  // the call waits on the clock: time moves from here
    REQUIRE(clock.advance_and_wait(1s));
    REQUIRE(call.done());
    auto doc = call.get();
    REQUIRE(doc);
    CHECK(ids(*doc) == std::vector<std::string>{"a2", "b"});
    CHECK(server->asked(1) == 1);
    CHECK(since_start(clock.now()) == 1s);
}

TEST_CASE("key_rounds: a failure that is the service's ends the round - the next call waits error_pause, then reads "
          "every key plainly",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a");
    server->set(1, "b");
    keyed_client<2> c(server, clock, {key_plan::poll(1s), key_plan::poll(1s)}, 7s);
    REQUIRE(c.next());
    key_server::key refused;
    refused.status = 403;  // about the client's standing: no document at all
    server->set(0, refused);
    {
        next_call call(c, clock);
        REQUIRE(clock.wait_idle());  // the call waits on the clock: time moves from here
        REQUIRE(clock.advance_and_wait(1s));
        REQUIRE(call.done());
        auto doc = call.get();
        REQUIRE_FALSE(doc);
        CHECK(doc.error().http_status == 403);
        CHECK(server->asked(1) == 1);  // the round ended at the failure
    }
    server->set(0, "a");
    const auto before = server->log().size();
    next_call call(c, clock);
    REQUIRE(clock.wait_idle());  // the call waits on the clock: time moves from here
    REQUIRE(clock.advance_and_wait(6999ms));
    CHECK(server->log().size() == before);  // the pause first
    CHECK_FALSE(call.done());
    REQUIRE(clock.advance_and_wait(1ms));
    REQUIRE(call.done());
    REQUIRE(call.get());
    CHECK(server->log().size() == before + 2);  // then every key, at once
    CHECK(server->asked(0) == 3);
    CHECK(server->asked(1) == 2);
}

TEST_CASE("key_rounds: hanging keys each wait on a lane of their own (k + 1) while a polled key is asked on the "
          "caller's thread on its cadence",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 3);
    server->set(0, "a", "t0");
    server->set(1, "b", "t1");
    server->set(2, "c", "t2");
    keyed_client<3, true> c(server, clock, {key_plan::hang(60s), key_plan::hang(60s), key_plan::poll(1s)});
    REQUIRE(c.next());
    next_call call(c, clock);
    const auto caller = call.thread_id();
    REQUIRE(clock.wait_idle());
    CHECK(server->asked(0, true) == 1);
    CHECK(server->asked(1, true) == 1);
    for (int s = 1; s <= 5; ++s) {
        REQUIRE(clock.advance_and_wait(1s));
        CHECK(server->asked(2) == std::size_t(1 + s));  // the polled key never waits for the hanging ones
        CHECK_FALSE(call.done());
    }
    // A change on key 1: its hanging GET answers, the round ends, key 0's GET is cut short.
    server->set(1, "b2", "t1b");
    REQUIRE(clock.wait_idle());
    REQUIRE(call.done());
    auto doc = call.get();
    REQUIRE(doc);
    CHECK(ids(*doc) == std::vector<std::string>{"a", "b2", "c"});
    CHECK(doc->incarnation == "t0/t1b/t2");
    CHECK(since_start(clock.now()) == 5s);  // not the hanging GETs' 60 s

    std::set<std::thread::id> hang_threads;
    for (const auto& s : server->log()) {
        if (s.hang) {
            CHECK(s.lane == s.key + 1);
            CHECK(s.thread != caller);
            hang_threads.insert(s.thread);
        } else if (s.at > clock.now() - 5s) {
            CHECK(s.lane == 0);
            CHECK(s.thread == caller);
        }
    }
    CHECK(hang_threads.size() == 2);
    CHECK_FALSE(c.transport().cancelled());  // the lane cut short is usable again

    // The next round asks again from what each key holds: key 1 with its new ETag.
    next_call again(c, clock);
    REQUIRE(clock.wait_idle());
    CHECK(server->asked(0, true) == 2);
    CHECK(server->asked(1, true) == 2);
    CHECK_FALSE(again.done());
}

TEST_CASE("key_rounds: with nothing changing a round ends when every hanging GET answered after its time", "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a", "t0");
    server->set(1, "b", "t1");
    keyed_client<2, true> c(server, clock, {key_plan::hang(30s), key_plan::hang(60s)});
    REQUIRE(c.next());
    next_call call(c, clock);
    REQUIRE(clock.wait_idle());  // the call waits on the clock: time moves from here
    REQUIRE(clock.advance_and_wait(30s));
    CHECK_FALSE(call.done());  // key 0 answered, key 1 still hangs
    CHECK(server->asked(0, true) == 1);  // and key 0 waits for the round's end, not asked again
    REQUIRE(clock.advance_and_wait(30s));
    REQUIRE(call.done());
    auto doc = call.get();
    REQUIRE(doc);
    CHECK(ids(*doc) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("key_rounds: wake() cuts the hanging GETs short and the document is a plain reading of every key",
          "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a", "t0");
    server->set(1, "b", "t1");
    keyed_client<2, true> c(server, clock, {key_plan::hang(60s), key_plan::hang(60s)});
    REQUIRE(c.next());
    next_call call(c, clock);
    REQUIRE(clock.wait_idle());
    REQUIRE(server->asked(0, true) == 1);
    REQUIRE(server->asked(1, true) == 1);
    c.wake();
    REQUIRE(clock.wait_idle());
    REQUIRE(call.done());
    REQUIRE(call.get());
    CHECK(server->asked(0) == 2);  // plain reads after the wake
    CHECK(server->asked(1) == 2);
    CHECK(since_start(clock.now()) == 0s);
    CHECK_FALSE(c.transport().cancelled());
}

TEST_CASE("key_rounds: cancel() ends the hanging GETs and the wait - sticky until reset()", "[key_rounds]") {
    manual_clock clock;
    auto server = std::make_shared<key_server>(clock, 2);
    server->set(0, "a", "t0");
    server->set(1, "b", "t1");
    keyed_client<2, true> c(server, clock, {key_plan::hang(60s), key_plan::poll(10s)});
    REQUIRE(c.next());
    next_call call(c, clock);
    REQUIRE(clock.wait_idle());
    REQUIRE(server->asked(0, true) == 1);
    c.cancel();
    REQUIRE(clock.wait_idle());
    REQUIRE(call.done());
    auto doc = call.get();
    REQUIRE_FALSE(doc);
    CHECK(doc.error().code == errc::cancelled);
    const auto before = server->log().size();
    auto again = c.next();
    REQUIRE_FALSE(again);
    CHECK(again.error().code == errc::cancelled);
    CHECK(server->log().size() == before);  // nothing sent while cancelled
    c.reset();
    REQUIRE(c.next());  // after the cancelled round: a plain reading again
    CHECK(server->log().size() == before + 2);
}

}  // namespace test_key_rounds
