// SPDX-License-Identifier: MIT
// One approval run (detail/poller/approval_run.hpp) and the ledger it reads (detail/poller/ledger.hpp): the
// approvals due sent once, or withheld in a dry run; the outcome recorded and handed on.
#include <forewarn/detail/poller/approval_run.hpp>

#include "catch.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace test_approval_run {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::approval_handle;
using forewarn::approval_options;
using forewarn::approval_state;
using forewarn::change;
using forewarn::change_kind;
using forewarn::clock;
using forewarn::cloud;
using forewarn::document;
using forewarn::errc;
using forewarn::error;
using forewarn::event;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::logger;
using forewarn::poller_handlers;
using forewarn::result;
using forewarn::detail::handler_dispatch;
using forewarn::detail::health_record;
using forewarn::detail::poller_ledger;
using forewarn::detail::state_keeper;
using ids = std::vector<std::string>;

namespace {

document doc_with(std::string incarnation, std::vector<std::string> event_ids) {
    document d;
    d.origin = cloud::azure;
    d.incarnation = std::move(incarnation);
    for (auto& id : event_ids) {
        event e;
        e.id = id;
        e.type = event_type::reboot;
        e.status = event_status::scheduled;
        e.resources = {"vm0"};
        d.events.push_back(e);
    }
    return d;
}

// A poller's parts around one ledger, with `A` announced and its prepare said ready.
struct parts {
    poller_ledger ledger{{}, approval_options{}, nullptr, true, [] {}};
    health_record health;
    std::vector<std::string> told;  // what the handlers heard
    handler_dispatch dispatch{handlers(), {}, {}};
    state_keeper state{nullptr};
    logger log;
    clock::time_point now{10s};
    clock::wall_time_point wall{std::chrono::seconds(1700000000)};
    approval_handle a;

    parts() {
        ledger.set_self("vm0");
        auto changes = ledger.track(doc_with("1", {"A"}), {now, wall});
        REQUIRE(changes.size() == 1);
        a = ledger.handle("A");
        ledger.delivered(changes.size());
        a.ready();
    }

    poller_handlers handlers() {
        poller_handlers h;
        h.on_approved = [this](const ids& v) { told.push_back("approved " + v.at(0)); };
        h.on_would_approve = [this](const ids& v) { told.push_back("would approve " + v.at(0)); };
        h.on_error = [this](const error& e) { told.push_back("error " + e.message); };
        return h;
    }

    ids run(bool dry_run, std::function<result<void>(const ids&)> approve, bool quiet = false) {
        return forewarn::detail::approval_run({ledger, health, dispatch, state, log}, now, wall, dry_run, approve,
                                              [] { return false; }, [&](const error&) { return quiet; });
    }
};

}  // namespace

TEST_CASE("approval run: what is due is approved in one request, recorded and told", "[approval_run]") {
    parts p;
    std::vector<ids> sent;
    auto handled = p.run(false, [&](const ids& v) -> result<void> {
        sent.push_back(v);
        return {};
    });
    CHECK(handled == ids{"A"});
    CHECK(sent == std::vector<ids>{{"A"}});
    CHECK(p.told == std::vector<std::string>{"approved A"});
    CHECK(p.a.status().state == approval_state::approved);
    const auto h = p.health.snapshot(true);
    CHECK(h.approvals == 1);
    CHECK(h.awaiting_approval.empty());
    CHECK(p.state.dirty());  // worth saving: it is never approved twice
    // Never sent again.
    CHECK(p.run(false, [&](const ids& v) -> result<void> {
                 sent.push_back(v);
                 return {};
             }).empty());
    CHECK(sent.size() == 1);
}

TEST_CASE("approval run: a dry run sends nothing, tells on_would_approve, and settles the handle", "[approval_run]") {
    parts p;
    int sends = 0;
    auto handled = p.run(true, [&](const ids&) -> result<void> {
        ++sends;
        return {};
    });
    CHECK(handled == ids{"A"});
    CHECK(sends == 0);
    CHECK(p.told == std::vector<std::string>{"would approve A"});
    CHECK(p.a.status().state == approval_state::not_approved);
    CHECK(p.health.snapshot(true).approvals == 0);
    CHECK(p.health.snapshot(true).awaiting_approval.empty());
    CHECK(p.run(true, [&](const ids&) -> result<void> { return {}; }).empty());  // once
}

TEST_CASE("approval run: a failed request is reported, kept waiting and tried at the next run - a stop's is quiet",
          "[approval_run]") {
    parts p;
    auto failing = [](const ids&) -> result<void> { return error(errc::http_status, "refused"); };
    CHECK(p.run(false, failing).empty());
    CHECK(p.told == std::vector<std::string>{"error refused"});
    CHECK(p.a.status().state == approval_state::failed);
    CHECK(p.health.snapshot(true).awaiting_approval == ids{"A"});
    CHECK_FALSE(p.state.dirty());

    p.told.clear();
    CHECK(p.run(false, failing, true).empty());  // quiet: a cancellation by stop()
    CHECK(p.told.empty());

    CHECK(p.run(false, [](const ids&) -> result<void> { return {}; }) == ids{"A"});
    CHECK(p.a.status().state == approval_state::approved);
}

TEST_CASE("ledger: a delivered document whose incarnation moved is worth saving even without a change", "[ledger]") {
    poller_ledger ledger{{}, approval_options{}, nullptr, true, [] {}};
    const clock::time_point now{1s};
    const clock::wall_time_point wall{std::chrono::seconds(1700000000)};
    auto changes = ledger.track(doc_with("1", {"A"}), {now, wall});
    CHECK(changes.size() == 1);
    CHECK(ledger.delivered(1));  // from nothing to "1"
    CHECK(ledger.delivered_document().incarnation == "1");
    changes = ledger.track(doc_with("1", {"A"}), {now + 1s, wall + 1s});
    CHECK(changes.empty());
    CHECK_FALSE(ledger.delivered(0));  // same content
    changes = ledger.track(doc_with("2", {"A"}), {now + 2s, wall + 2s});
    CHECK(changes.empty());
    CHECK(ledger.delivered(0));  // the incarnation moved: the state should follow it
    CHECK(ledger.latest().incarnation == "2");
}

}  // namespace test_approval_run
