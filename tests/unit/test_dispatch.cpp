// SPDX-License-Identifier: MIT
// The poller's dispatch part (detail/poller/dispatch.hpp): where handlers run, what a throwing one
// becomes, and which handler each change goes to (delivery).
#include <forewarn/detail/poller/dispatch.hpp>

#include "catch.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace test_dispatch {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::approval_handle;
using forewarn::change;
using forewarn::change_kind;
using forewarn::errc;
using forewarn::error;
using forewarn::observed_pause;
using forewarn::poller_handlers;
using forewarn::detail::handler_dispatch;

namespace {

change make_change(change_kind k, std::string id) {
    change c;
    c.kind = k;
    c.event.id = std::move(id);
    return c;
}

}  // namespace

TEST_CASE("dispatch: each change goes to its handler in order, a prepare with its handle, a recover with its pause",
          "[dispatch]") {
    std::vector<std::string> seen;
    poller_handlers h;
    h.on_prepare = [&](const change& c, approval_handle) { seen.push_back("prepare " + c.event.id); };
    h.on_started = [&](const change& c) { seen.push_back("started " + c.event.id); };
    h.on_updated = [&](const change& c) { seen.push_back("updated " + c.event.id); };
    h.on_recover = [&](const change& c) {
        seen.push_back("recover " + c.event.id + (c.pause ? " paused " + std::to_string(c.pause->longest.count()) : ""));
    };
    handler_dispatch d(h, {}, {});
    std::vector<std::string> handles_asked, pauses_asked;
    const std::vector<change> changes = {make_change(change_kind::prepare, "A"), make_change(change_kind::started, "B"),
                                         make_change(change_kind::updated, "C"), make_change(change_kind::recover, "D")};
    const auto n = d.deliver(
        changes,
        [&](const std::string& id) {
            handles_asked.push_back(id);
            return approval_handle();
        },
        [&](const std::string& id) -> std::optional<observed_pause> {
            pauses_asked.push_back(id);
            observed_pause p;
            p.longest = 7ms;
            return p;
        },
        [] { return false; });
    CHECK(n == 4);
    CHECK(seen == std::vector<std::string>{"prepare A", "started B", "updated C", "recover D paused 7000000"});
    CHECK(handles_asked == std::vector<std::string>{"A"});
    CHECK(pauses_asked == std::vector<std::string>{"D"});
}

TEST_CASE("dispatch: delivery ends where a handler stopped the poller, and says how far it got", "[dispatch]") {
    bool stopped = false;
    std::vector<std::string> seen;
    poller_handlers h;
    h.on_started = [&](const change& c) {
        seen.push_back(c.event.id);
        stopped = true;  // the handler calls stop()
    };
    handler_dispatch d(h, {}, {});
    const std::vector<change> changes = {make_change(change_kind::started, "A"), make_change(change_kind::started, "B")};
    const auto n = d.deliver(
        changes, [](const std::string&) { return approval_handle(); },
        [](const std::string&) { return std::optional<observed_pause>(); }, [&] { return stopped; });
    CHECK(n == 1);
    CHECK(seen == std::vector<std::string>{"A"});
}

TEST_CASE("dispatch: a throwing handler or a refusing executor becomes handler_failed, noted then on_error",
          "[dispatch]") {
    std::vector<std::string> order;
    poller_handlers h;
    h.on_started = [](const change&) { throw std::runtime_error("boom"); };
    h.on_error = [&](const error& e) {
        order.push_back("on_error " + e.message);
        throw std::runtime_error("on_error throws too");  // swallowed
    };
    handler_dispatch inline_d(h, {}, [&](const error& e) {
        CHECK(e.code == errc::handler_failed);
        order.push_back("noted");
    });
    inline_d.post("on_started", &poller_handlers::on_started, make_change(change_kind::started, "A"));
    CHECK(order == std::vector<std::string>{"noted", "on_error on_started threw: boom"});

    order.clear();
    handler_dispatch refused(h, [](std::function<void()>) { throw std::runtime_error("queue full"); }, {});
    refused.post_task([] {});
    CHECK(order == std::vector<std::string>{"on_error the executor refused a task: queue full"});
}

TEST_CASE("dispatch: with an executor every task is handed to it in order, none runs on the caller", "[dispatch]") {
    std::vector<std::function<void()>> queue;
    std::vector<std::string> seen;
    poller_handlers h;
    h.on_updated = [&](const change& c) { seen.push_back(c.event.id); };
    handler_dispatch d(h, [&](std::function<void()> t) { queue.push_back(std::move(t)); }, {});
    d.post("on_updated", &poller_handlers::on_updated, make_change(change_kind::updated, "A"));
    d.post("on_updated", &poller_handlers::on_updated, make_change(change_kind::updated, "B"));
    d.post("on_recover", &poller_handlers::on_recover, make_change(change_kind::recover, "C"));  // not set: skipped
    CHECK(seen.empty());
    REQUIRE(queue.size() == 2);
    for (auto& t : queue) t();
    CHECK(seen == std::vector<std::string>{"A", "B"});
}

}  // namespace test_dispatch
