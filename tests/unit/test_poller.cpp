// SPDX-License-Identifier: MIT
// basic_poller over testing::fake_source on a testing::manual_clock: delivery, approvals and
// their outcomes, identity, errors, stop, the executor, health, logging, the coordinator hook
// and the state store. Nothing sleeps: the poller's thread waits on the manual clock.
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/state_file.hpp>
#include <forewarn/testing/fake_source.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"
#include "temp_dir.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace test_poller {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::approval_handle;
using forewarn::approval_scope;
using forewarn::approval_state;
using forewarn::approval_status;
using forewarn::change;
using forewarn::change_kind;
using forewarn::cloud;
using forewarn::document;
using forewarn::errc;
using forewarn::error;
using forewarn::event;
using forewarn::event_source;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::poller_handlers;
using forewarn::poller_options;
using forewarn::recover_reason;
using forewarn::result;
using forewarn::testing::fake_source;
using forewarn::testing::manual_clock;
using ids = std::vector<std::string>;
using poller = forewarn::poller<fake_source>;

namespace {

event make_event(std::string id, event_status status = event_status::scheduled,
                 std::vector<std::string> resources = {"vm_0"}, event_source source = event_source::platform) {
    event e;
    e.id = std::move(id);
    e.type = event_type::reboot;
    e.raw_type = "Reboot";
    e.status = status;
    e.raw_status = status == event_status::started ? "Started" : "Scheduled";
    e.resources = std::move(resources);
    e.source = source;
    e.raw_source = source == event_source::user ? "User" : "Platform";
    e.duration_in_seconds = -1;
    return e;
}

document make_doc(std::string incarnation, std::vector<event> events) {
    document d;
    d.origin = cloud::azure;
    d.incarnation = std::move(incarnation);
    d.events = std::move(events);
    return d;
}

// Everything the handlers saw, thread-safe, read on the test's thread.
struct recorder {
    std::mutex mutex;
    std::vector<std::string> lines;  // "prepare A", "recover A completed", ...
    std::vector<change> changes;
    std::vector<error> errors;
    std::vector<ids> approved;
    std::vector<std::string> self_at_prepare;
    std::deque<approval_handle> handles;
    bool ready_in_handler = true;

    poller_handlers handlers(std::function<std::string()> self = {}) {
        poller_handlers h;
        auto add = [this](const change& c) {
            std::lock_guard<std::mutex> lock(mutex);
            std::string line = std::string(forewarn::to_string(c.kind)) + " " + c.event.id;
            if (c.kind == change_kind::recover) line += " " + std::string(forewarn::to_string(c.reason));
            lines.push_back(line);
            changes.push_back(c);
        };
        h.on_prepare = [this, add, self](const change& c, approval_handle handle) {
            add(c);
            {
                std::lock_guard<std::mutex> lock(mutex);
                handles.push_back(handle);
                if (self) self_at_prepare.push_back(self());
            }
            if (ready_in_handler) handle.ready();
        };
        h.on_started = add;
        h.on_recover = add;
        h.on_updated = add;
        h.on_error = [this](const error& e) {
            std::lock_guard<std::mutex> lock(mutex);
            errors.push_back(e);
        };
        h.on_approved = [this](const ids& v) {
            std::lock_guard<std::mutex> lock(mutex);
            approved.push_back(v);
        };
        return h;
    }
    std::vector<std::string> seen() {
        std::lock_guard<std::mutex> lock(mutex);
        return lines;
    }
    std::vector<error> errs() {
        std::lock_guard<std::mutex> lock(mutex);
        return errors;
    }
    approval_handle handle(std::size_t i) {
        std::lock_guard<std::mutex> lock(mutex);
        return handles.at(i);
    }
};

forewarn::testing::fake_source_options source_options(const manual_clock& clock) {
    forewarn::testing::fake_source_options o;
    o.clock = clock;
    return o;
}

}  // namespace

TEST_CASE("poller: events present at start are delivered once", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    src.set(make_doc("1", {make_event("A"), make_event("B", event_status::started)}));
    recorder rec;
    poller p(src, rec.handlers());
    REQUIRE(p.poll_once());
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare A", "started B"});
}

TEST_CASE("poller: a whole life cycle, and the reasons the documents give", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    rec.ready_in_handler = false;
    poller p(src, rec.handlers());
    auto a = make_event("A");
    auto c = make_event("C");
    a.not_before = clock.wall_now() + 15min;
    c.not_before = clock.wall_now() + 15min;
    src.set(make_doc("1", {a, c}));
    REQUIRE(p.poll_once());
    auto a_started = a;
    a_started.status = event_status::started;
    a_started.raw_status = "Started";
    src.set(make_doc("2", {a_started, c}));
    clock.advance(1s);
    REQUIRE(p.poll_once());
    src.set(make_doc("3", {}));  // A is over; C vanished before its NotBefore, watched without a gap
    clock.advance(1s);
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare A", "prepare C", "started A", "recover A completed", "recover C cancelled"});
    CHECK(rec.changes.back().evidence == "vanished before NotBefore while watched without a gap");
}

TEST_CASE("poller: a document with a failing key delivers its events and reports the key's error - health names it",
          "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    auto doc = make_doc("", {make_event("spot-instance-action")});
    error e(errc::invalid_document, "EventId listed twice");
    e.url = "http://imds.test/latest/meta-data/events/maintenance/scheduled";
    doc.key_errors.push_back(e);
    src.set(doc);
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare spot-instance-action"});
    const auto errors = rec.errs();
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].url == e.url);
    auto h = p.health();
    REQUIRE(h.key_errors.size() == 1);
    CHECK(h.key_errors[0].message == "EventId listed twice");
    CHECK(h.polls == 1);  // a document was had
    CHECK(h.failures == 0);
    doc.key_errors.clear();  // the key answers again
    src.set(doc);
    clock.advance(1s);
    REQUIRE(p.poll_once());
    CHECK(p.health().key_errors.empty());
    CHECK(rec.errs().size() == 1);
}

TEST_CASE("poller: a failed poll changes nothing and is reported", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(p.poll_once());
    for (errc code : {errc::timeout, errc::http_status, errc::parse_error, errc::empty_body}) {
        error e(code, "injected");
        e.url = "http://imds.test/metadata/scheduledevents";
        src.fail_next(e);
        auto r = p.poll_once();
        REQUIRE_FALSE(r);
        CHECK(r.error().code == code);
    }
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare A"});
    const auto errors = rec.errs();
    REQUIRE(errors.size() == 4);
    CHECK(errors[0].url == "http://imds.test/metadata/scheduledevents");
    const auto h = p.health();
    CHECK(h.failures == 4);
    CHECK(h.consecutive_failures == 0);
    CHECK(h.polls == 2);
}

TEST_CASE("poller: an incarnation that starts over is not replayed", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    src.set(make_doc("7", {make_event("A")}));
    REQUIRE(p.poll_once());
    src.set(make_doc("1", {make_event("A")}));  // the service was disabled and came back
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare A"});
}

TEST_CASE("poller: approves once when on_prepare says ready, several ids in one request", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A"), make_event("B"), make_event("X", event_status::scheduled, {"vm_9"})}));
    REQUIRE(p.poll_once());
    REQUIRE(p.poll_once());
    CHECK(src.approvals() == std::vector<ids>{{"A", "B"}});
    CHECK(rec.approved == std::vector<ids>{{"A", "B"}});
    CHECK(rec.handle(0).status().state == approval_state::approved);
    CHECK(rec.handle(1).status().state == approval_state::approved);
    const auto x = rec.handle(2).status();
    CHECK(x.state == approval_state::not_approved);
    CHECK(x.why == "the event does not name this VM");
}

TEST_CASE("poller: nothing is approved until the handle says ready, then without a new document", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    rec.ready_in_handler = false;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(p.poll_once());
    REQUIRE(p.poll_once());
    CHECK(src.approvals().empty());
    CHECK(rec.handle(0).status().state == approval_state::pending);
    std::vector<approval_status> outcomes;
    rec.handle(0).ready([&](const approval_status& s) { outcomes.push_back(s); });
    p.approve_due();
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].state == approval_state::approved);
    // A ready() after the outcome is final calls back at once with it.
    rec.handle(0).ready([&](const approval_status& s) { outcomes.push_back(s); });
    REQUIRE(outcomes.size() == 2);
    CHECK(outcomes[1].state == approval_state::approved);
}

TEST_CASE("poller: an approved event that vanishes before NotBefore completed: approved by this VM", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    auto a = make_event("A");
    a.not_before = clock.wall_now() + 15min;
    src.set(make_doc("1", {a}));
    REQUIRE(p.poll_once());
    REQUIRE(src.approvals().size() == 1);
    src.set(make_doc("2", {}));  // it started and ended between two polls (a short Freeze)
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare A", "recover A completed"});
    CHECK(rec.changes.back().evidence == "approved by this VM");
}

TEST_CASE("poller: a failed approval is reported, its handle says so, and it is tried again", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A")}));
    src.fail_approve(error(errc::http_status, "refused", 500));
    REQUIRE(p.poll_once());
    CHECK(src.approvals().empty());
    const auto st = rec.handle(0).status();
    CHECK(st.state == approval_state::failed);
    CHECK(st.error.http_status == 500);
    REQUIRE(rec.errs().size() == 1);
    REQUIRE(p.poll_once());
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
    CHECK(rec.handle(0).status().state == approval_state::approved);
}

TEST_CASE("poller: the VM's name is known before the first delivery", "[poller]") {
    manual_clock clock;
    auto o = source_options(clock);
    o.self_name = "vm_3";
    fake_source src(o);
    recorder rec;
    poller* pp = nullptr;
    poller p(src, rec.handlers([&] { return pp->self(); }));
    pp = &p;
    src.set(make_doc("1", {make_event("A", event_status::scheduled, {"vm_3"})}));
    REQUIRE(p.poll_once());
    CHECK(rec.self_at_prepare == ids{"vm_3"});
    CHECK(p.health().self == "vm_3");
    CHECK(src.identity_calls() == 1);
    REQUIRE(p.poll_once());
    CHECK(src.identity_calls() == 1);  // asked once
}

TEST_CASE("poller: while its name cannot be learned, it delivers, approves nothing, and retries with a pause",
          "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    src.fail_identity(error(errc::http_status, "instance metadata refused", 500));
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare A"});  // prepares are not held back
    CHECK(src.approvals().empty());
    CHECK(rec.handle(0).status().state == approval_state::waiting);
    CHECK(rec.handle(0).status().why == "this VM's name is not known yet");
    REQUIRE(rec.errs().size() == 1);
    REQUIRE(p.poll_once());  // within the pause: not asked again
    CHECK(src.identity_calls() == 1);
    src.fail_identity(std::nullopt);
    clock.advance(2s);
    REQUIRE(p.poll_once());
    CHECK(src.identity_calls() == 2);
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
}

TEST_CASE("poller: a source that cannot approve never tries, and handles say so", "[poller]") {
    manual_clock clock;
    auto o = source_options(clock);
    o.can_approve = false;
    o.origin = cloud::gce;
    fake_source src(o);
    recorder rec;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A")}));
    std::vector<approval_status> outcomes;
    REQUIRE(p.poll_once());
    rec.handle(0).ready([&](const approval_status& s) { outcomes.push_back(s); });
    p.approve_due();
    CHECK(src.approvals().empty());
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].state == approval_state::not_approved);
    CHECK(outcomes[0].why == "this source cannot approve");
    CHECK(p.health().awaiting_approval.empty());
}

TEST_CASE("poller: a handler that throws is reported and the poller goes on", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    auto h = rec.handlers();
    h.on_prepare = [](const change& c, approval_handle) {
        if (c.event.id == "A") throw std::runtime_error("boom");
    };
    int errors_thrown = 0;
    h.on_error = [&](const error& e) {
        rec.errors.push_back(e);
        ++errors_thrown;
        throw std::logic_error("on_error throws too");
    };
    poller p(src, h);
    src.set(make_doc("1", {make_event("A"), make_event("B")}));
    REQUIRE(p.poll_once());
    REQUIRE(rec.errors.size() == 1);
    CHECK(rec.errors[0].code == errc::handler_failed);
    CHECK(rec.errors[0].message == "on_prepare threw: boom");
    CHECK(errors_thrown == 1);
    CHECK(p.last_document().events.size() == 2);  // both delivered (A's handler ran, and threw)
}

TEST_CASE("poller: stop() from a handler delivers nothing more, and the rest comes next time", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller* pp = nullptr;
    auto h = rec.handlers();
    auto record = h.on_prepare;
    h.on_prepare = [&](const change& c, approval_handle handle) {
        record(c, handle);
        if (c.event.id == "A") pp->stop();
    };
    poller p(src, h);
    pp = &p;
    src.set(make_doc("1", {make_event("A"), make_event("B"), make_event("C")}));
    auto r = p.poll_once();
    REQUIRE(r);
    CHECK(*r == 1);
    CHECK(p.last_document().events.size() == 1);
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare A", "prepare B", "prepare C"});
}

TEST_CASE("poller: leader scope, two VMs, exactly one approval, by the leader", "[poller][leader]") {
    manual_clock clock;
    fake_source service(source_options(clock));
    poller_options o;
    o.approval.scope = approval_scope::leader;
    recorder r0, r1;
    poller vm0(service.as_vm("vm_0"), r0.handlers(), o);
    poller vm1(service.as_vm("vm_1"), r1.handlers(), o);
    service.set(make_doc("1", {make_event("A", event_status::scheduled, {"vm_0", "vm_1"})}));
    for (int i = 0; i < 3; ++i) {
        REQUIRE(vm1.poll_once());
        REQUIRE(vm0.poll_once());
    }
    CHECK(service.approvals() == std::vector<ids>{{"A"}});
    CHECK(service.approved_by() == ids{"vm_0"});
    CHECK(r1.handle(0).status().state == approval_state::not_approved);
    CHECK(r1.handle(0).status().why == "a follower leaves a platform event to the leader");
}

TEST_CASE("poller: the follower approves a user event once the leader stayed silent for the grace", "[poller][leader]") {
    manual_clock clock;
    fake_source service(source_options(clock));
    poller_options o;
    o.approval.scope = approval_scope::leader;
    o.approval.follower_grace = 30s;
    recorder rec;
    poller follower(service.as_vm("vm_1"), rec.handlers(), o);
    service.set(make_doc("1", {make_event("U", event_status::scheduled, {"vm_0", "vm_1"}, event_source::user)}));
    REQUIRE(follower.poll_once());
    CHECK(service.approvals().empty());
    CHECK(rec.handle(0).status().state == approval_state::waiting);
    clock.advance(29s);
    REQUIRE(follower.poll_once());
    CHECK(service.approvals().empty());
    clock.advance(1s);
    REQUIRE(follower.poll_once());
    CHECK(service.approved_by() == ids{"vm_1"});
}

TEST_CASE("poller: approval rules at once for user events and short Freezes", "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    poller_options o;
    o.approval.approve_user_events = true;
    o.approval.approve_freeze_shorter_than = 9s;
    recorder rec;
    rec.ready_in_handler = false;
    poller p(src, rec.handlers(), o);
    auto f = make_event("F");
    f.type = event_type::freeze;
    f.duration_in_seconds = 5;
    src.set(make_doc("1", {make_event("U", event_status::scheduled, {"vm_0"}, event_source::user), f, make_event("R")}));
    REQUIRE(p.poll_once());
    CHECK(src.approvals() == std::vector<ids>{{"U", "F"}});
    CHECK(p.health().awaiting_approval.empty());
}

TEST_CASE("poller: start() fails at once on a configuration that can never work, saying what and where", "[poller]") {
    forewarn::azure::client_options o;
    o.endpoint = "ftp://169.254.169.254";
    forewarn::azure::basic_scheduled_events_client<forewarn::testing::fake_transport> client(o);
    forewarn::poller<decltype(client)> p(std::move(client));
    auto r = p.start();
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_argument);
    CHECK(r.error().message.find("azure::client_options::endpoint") != std::string::npos);
    CHECK_FALSE(p.running());
    auto once = p.poll_once();
    REQUIRE_FALSE(once);
    CHECK(once.error().code == errc::invalid_argument);
}

TEST_CASE("poller: handlers can run on the user's executor, in order", "[poller][executor]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    std::deque<std::function<void()>> queue;
    poller_options o;
    o.executor = [&](std::function<void()> task) { queue.push_back(std::move(task)); };
    recorder rec;
    std::vector<approval_status> outcomes;
    auto h = rec.handlers();
    h.on_prepare = [&](const change& c, approval_handle handle) {
        rec.lines.push_back("prepare " + c.event.id);
        handle.ready([&](const approval_status& s) { outcomes.push_back(s); });
    };
    poller p(src, h, o);
    src.set(make_doc("1", {make_event("A"), make_event("B", event_status::started)}));
    REQUIRE(p.poll_once());
    CHECK(rec.lines.empty());  // nothing ran on the poller's side
    REQUIRE(queue.size() == 2);
    while (!queue.empty()) {
        auto task = std::move(queue.front());
        queue.pop_front();
        task();
    }
    CHECK(rec.lines == ids{"prepare A", "started B"});
    p.approve_due();  // the readiness given on the executor is seen; the outcome callback is posted too
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
    REQUIRE(queue.size() == 2);  // on_approved and the outcome callback
    while (!queue.empty()) {
        auto task = std::move(queue.front());
        queue.pop_front();
        task();
    }
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].state == approval_state::approved);
}

TEST_CASE("poller: the logging hook hears approvals and failures", "[poller][log]") {
    manual_clock clock;
    auto so = source_options(clock);
    std::vector<std::string> lines;
    so.log.level = forewarn::log_level::info;
    so.log.sink = [&](const forewarn::log_record& r) {
        lines.push_back(std::string(forewarn::to_string(r.level)) + " " + std::string(r.message) + " [" +
                        std::string(r.event_id) + "]");
    };
    fake_source src(so);
    recorder rec;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(p.poll_once());
    src.fail_next(error(errc::timeout, "no answer"));
    REQUIRE_FALSE(p.poll_once());
    CHECK(lines == ids{"info approved A [A]", "warn timeout: no answer []"});
}

namespace {

// A coordinator that a test drives by hand: what admit() answers, what it was told.
struct scripted_coordinator : forewarn::approval_coordinator {
    result<bool> answer = true;
    std::vector<std::vector<forewarn::local_event>> observed;
    std::vector<std::string> admitted;
    forewarn::coordinator_context ctx;
    bool started = false;
    bool stopped = false;

    result<void> start(const forewarn::coordinator_context& c) override {
        ctx = c;
        started = true;
        return {};
    }
    void stop() noexcept override { stopped = true; }
    void observe(const std::vector<forewarn::local_event>& events) override { observed.push_back(events); }
    result<bool> admit(const event& e) override {
        admitted.push_back(e.id);
        return answer;
    }
    std::string save_state() const override { return "lease=42"; }
};

}  // namespace

TEST_CASE("poller: a coordinator decides when an approval may go, and never on its error", "[poller][coordinator]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    auto coord = std::make_shared<scripted_coordinator>();
    poller_options o;
    o.coordinator = coord;
    recorder rec;
    poller p(src, rec.handlers(), o);
    src.set(make_doc("1", {make_event("A")}));

    coord->answer = false;  // no slot yet
    REQUIRE(p.poll_once());
    CHECK(coord->started);
    CHECK(coord->ctx.self == "vm_0");
    CHECK(src.approvals().empty());
    CHECK(rec.handle(0).status().why == "waiting for a fleet slot");
    REQUIRE_FALSE(coord->observed.empty());
    CHECK(coord->observed.back().at(0).ready);

    coord->answer = error(errc::transport, "etcd unreachable");
    REQUIRE(p.poll_once());
    CHECK(src.approvals().empty());
    REQUIRE_FALSE(rec.errs().empty());
    CHECK(rec.errs().back().event_id == "A");
    CHECK(rec.handle(0).status().why == "the fleet coordinator failed: not approving early");

    coord->answer = true;
    REQUIRE(p.poll_once());
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
    CHECK(coord->observed.back().at(0).approved);
}

TEST_CASE("poller: events that cannot be approved never wait, never ask the coordinator, never join a batch",
          "[poller][coordinator]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    auto coord = std::make_shared<scripted_coordinator>();
    poller_options o;
    o.coordinator = coord;
    recorder rec;
    poller p(src, rec.handlers(), o);
    auto spot = make_event("S");
    spot.type = event_type::preempt;
    spot.approvable = false;  // the source says so (a Spot notice, a rebalance recommendation)
    auto rebalance = make_event("R");
    rebalance.type = event_type::rebalance;
    rebalance.approvable = false;
    auto asg = make_event("T");
    asg.type = event_type::terminate;
    asg.approvable = true;
    src.set(make_doc("1", {spot, make_event("A"), rebalance, asg}));  // A: not said, the source can approve

    src.fail_approve(error(errc::http_status, "refused", 500));
    REQUIRE(p.poll_once());
    CHECK(coord->admitted == ids{"A", "T"});  // S and R never asked for a slot
    // The failed request named A and T: only they failed; S and R were settled at once.
    for (std::size_t i : {0, 2}) {
        const auto st = rec.handle(i).status();
        CHECK(st.state == approval_state::not_approved);
        CHECK(st.why == "its source cannot approve this event");
    }
    CHECK(rec.handle(1).status().state == approval_state::failed);
    CHECK(rec.handle(3).status().state == approval_state::failed);
    CHECK(p.health().awaiting_approval == ids{"A", "T"});
    REQUIRE_FALSE(coord->observed.empty());
    for (const auto& le : coord->observed.back()) CHECK(le.ready == (le.event.id == "A" || le.event.id == "T"));
    // The poller filled in what the source did not say, for every reader of the document.
    const auto latest = p.latest_document();
    CHECK(latest.find("A")->approvable == true);
    CHECK(latest.find("S")->approvable == false);

    REQUIRE(p.poll_once());  // the next request goes through
    CHECK(src.approvals() == std::vector<ids>{{"A", "T"}});
    CHECK(p.health().awaiting_approval.empty());
    std::vector<approval_status> outcomes;
    rec.handle(0).ready([&](const approval_status& st) { outcomes.push_back(st); });  // final already: at once
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].state == approval_state::not_approved);
}

namespace {

// A coordinator that reads the poller from inside admit() and observe(), as a user's may.
struct reading_coordinator : forewarn::approval_coordinator {
    poller* p = nullptr;
    std::vector<std::string> seen;  // what each call read

    result<void> start(const forewarn::coordinator_context&) override { return {}; }
    void stop() noexcept override {}
    void read(const char* from) {
        const auto latest = p->latest_document();
        const auto last = p->last_document();
        const auto st = p->approval("A").status();
        const auto h = p->health();
        seen.push_back(std::string(from) + " " + std::to_string(latest.events.size()) + " " +
                       std::string(forewarn::to_string(st.state)) + " " + p->self() + " " +
                       std::to_string(h.awaiting_approval.size()) + " " + std::to_string(last.events.size()));
    }
    void observe(const std::vector<forewarn::local_event>&) override { read("observe"); }
    result<bool> admit(const event&) override {
        read("admit");
        return true;
    }
};

// A coordinator whose admit() blocks until the test says, at most 10 s: how long a network call
// to a scheduling service may take.
struct blocking_coordinator : forewarn::approval_coordinator {
    std::mutex m;
    std::condition_variable cv;
    bool in_admit = false;
    bool released = false;
    bool released_in_time = false;

    result<void> start(const forewarn::coordinator_context&) override { return {}; }
    void stop() noexcept override {}
    void observe(const std::vector<forewarn::local_event>&) override {}
    result<bool> admit(const event&) override {
        std::unique_lock<std::mutex> lock(m);
        in_admit = true;
        cv.notify_all();
        released_in_time = cv.wait_for(lock, 10s, [&] { return released; });
        return true;
    }
};

}  // namespace

TEST_CASE("poller: a coordinator may read the poller from admit() and observe() (no lock is held)",
          "[poller][coordinator]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    auto coord = std::make_shared<reading_coordinator>();
    poller_options o;
    o.coordinator = coord;
    recorder rec;
    poller p(src, rec.handlers(), o);
    coord->p = &p;
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(p.poll_once());  // a deadlock before: the ledger's lock was held around both calls
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
    // observe() after the document (nothing delivered yet), admit() and observe() after the
    // prepare said ready, observe() after the approval.
    CHECK(coord->seen == ids{"observe 1 pending vm_0 0 0", "admit 1 pending vm_0 0 1", "observe 1 pending vm_0 0 1",
                             "observe 1 approved vm_0 1 1"});  // health catches up after the call
}

TEST_CASE("poller: a coordinator that blocks in admit() holds up no reader on another thread",
          "[poller][coordinator]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    auto coord = std::make_shared<blocking_coordinator>();
    poller_options o;
    o.coordinator = coord;
    recorder rec;
    poller p(src, rec.handlers(), o);
    src.set(make_doc("1", {make_event("A")}));
    std::thread cycle([&] { (void)p.poll_once(); });
    {
        std::unique_lock<std::mutex> lock(coord->m);
        REQUIRE(coord->cv.wait_for(lock, 30s, [&] { return coord->in_admit; }));
    }
    // While admit() blocks: each read answers (before, each waited for the ledger's lock, which
    // admit() was called under, so admit() ran out its 10 s first).
    const auto latest = p.latest_document();
    const auto st = p.approval("A").status();
    const auto h = p.health();
    {
        std::lock_guard<std::mutex> lock(coord->m);
        coord->released = true;
    }
    coord->cv.notify_all();
    cycle.join();
    CHECK(coord->released_in_time);
    CHECK(latest.events.size() == 1);
    CHECK(st.state == approval_state::pending);  // ready, being decided
    CHECK(h.self == "vm_0");
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
}

TEST_CASE("poller: a declined event is settled not_approved, never approved after, and its source lets go of it",
          "[poller]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    rec.ready_in_handler = false;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A"), make_event("B")}));
    REQUIRE(p.poll_once());
    std::vector<approval_status> outcomes;
    rec.handle(0).ready([&](const approval_status& st) { outcomes.push_back(st); });  // pending: waits
    rec.handle(0).decline("hook prepare failed (exit 3)");
    rec.handle(1).ready();
    p.approve_due();
    CHECK(src.approvals() == std::vector<ids>{{"B"}});
    CHECK(src.abandoned() == std::vector<ids>{{"A"}});
    const auto st = rec.handle(0).status();
    CHECK(st.state == approval_state::not_approved);
    CHECK(st.why == "hook prepare failed (exit 3)");
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].state == approval_state::not_approved);
    rec.handle(0).ready();  // too late: final
    REQUIRE(p.poll_once());
    CHECK(src.approvals() == std::vector<ids>{{"B"}});
    CHECK(src.abandoned().size() == 1);
    rec.handle(1).decline();  // approved already: nothing
    p.approve_due();
    CHECK(src.abandoned().size() == 1);
    CHECK(rec.handle(1).status().state == approval_state::approved);
}

TEST_CASE("poller: health says when it last had a document, and what waits for approval", "[poller][health]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    rec.ready_in_handler = false;
    poller_options o;
    o.approval.scope = approval_scope::leader;
    o.approval.follower_grace = 1h;
    poller p(src, rec.handlers(), o);
    CHECK_FALSE(p.health().last_success);
    src.set(make_doc("1", {make_event("U", event_status::scheduled, {"vm_9", "vm_0"}, event_source::user)}));
    REQUIRE(p.poll_once());
    rec.handle(0).ready();
    p.approve_due();
    auto h = p.health();
    REQUIRE(h.last_success);
    CHECK(*h.last_success == clock.wall_now());
    CHECK(h.events == 1);
    CHECK(h.awaiting_approval == ids{"U"});  // a follower, within its grace
    clock.advance(5s);
    src.fail_next(error(errc::timeout, "t"));
    src.fail_next(error(errc::timeout, "t"));
    (void)p.poll_once();
    (void)p.poll_once();
    h = p.health();
    CHECK(h.consecutive_failures == 2);
    CHECK(*h.last_success == clock.wall_now() - 5s);
    REQUIRE(h.last_error);
    CHECK(h.last_error->code == errc::timeout);
}

// --- the state store ---------------------------------------------------------------------------

namespace {

// A state file in a directory of its own, removed when the test ends (passed or failed).
struct temp_path {
    forewarn_test::temp_dir dir;
    std::filesystem::path path;
    explicit temp_path(const std::string& name) : dir("test-" + name), path(dir.path / "state.json") {}
};

poller_options with_state(const temp_path& f, std::string boot_id = "boot-1") {
    poller_options o;
    o.state = std::make_shared<forewarn::state_file>(f.path.string());
    o.tracking.boot_id = std::move(boot_id);
    return o;
}

}  // namespace

TEST_CASE("poller: with a state file, a restart delivers and approves nothing again, and keeps readiness",
          "[poller][state]") {
    temp_path f("restart");
    manual_clock clock;
    fake_source src(source_options(clock));
    src.set(make_doc("1", {make_event("A"), make_event("B", event_status::started)}));
    {
        recorder rec;
        poller p(src, rec.handlers(), with_state(f));
        REQUIRE(p.poll_once());
        CHECK(rec.seen() == ids{"prepare A", "started B"});
        CHECK(src.approvals().size() == 1);
        REQUIRE(rec.errs().empty());  // a missing file on a first run is not an error
    }
    // C arrives while down; its handler said ready, then the process died before approving.
    src.set(make_doc("2", {make_event("A"), make_event("B", event_status::started), make_event("C")}));
    {
        recorder rec;
        rec.ready_in_handler = true;
        fake_source fails = src;
        fails.fail_approve(error(errc::transport, "the process dies here"));
        poller p(src, rec.handlers(), with_state(f));
        REQUIRE(p.poll_once());
        CHECK(rec.seen() == ids{"prepare C"});
    }
    CHECK(src.approvals().size() == 1);
    {
        recorder rec;
        rec.ready_in_handler = false;  // no new prepare: readiness must come from the file
        poller p(src, rec.handlers(), with_state(f));
        REQUIRE(p.poll_once());
        CHECK(rec.seen().empty());
        CHECK(src.approvals() == std::vector<ids>{{"A"}, {"C"}});
    }
}

TEST_CASE("poller: recover reasons across a restart, from the state file's evidence", "[poller][state][reason]") {
    temp_path f("reasons");
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder first;
    first.ready_in_handler = false;
    auto reboot = make_event("R");
    reboot.not_before = clock.wall_now() + 15min;
    auto gone_early = make_event("G");
    gone_early.not_before = clock.wall_now() + 15min;
    src.set(make_doc("1", {reboot, gone_early}));
    {
        poller p(src, first.handlers(), with_state(f, "boot-1"));
        REQUIRE(p.poll_once());
    }
    SECTION("the VM rebooted (another boot id): completed") {
        src.set(make_doc("2", {}));
        recorder rec;
        poller p(src, rec.handlers(), with_state(f, "boot-2"));
        REQUIRE(p.poll_once());
        CHECK(rec.seen() == ids{"recover R completed", "recover G completed"});
        CHECK(rec.changes[0].evidence == "this VM rebooted since it saw the event");
    }
    SECTION("the same boot, NotBefore passed while down: completed") {
        clock.advance(16min);
        src.set(make_doc("2", {}));
        recorder rec;
        poller p(src, rec.handlers(), with_state(f, "boot-1"));
        REQUIRE(p.poll_once());
        CHECK(rec.seen() == ids{"recover R completed", "recover G completed"});
        CHECK(rec.changes[0].evidence == "NotBefore had passed by this VM's clock when it vanished");
    }
    SECTION("the same boot, before NotBefore, not watched meanwhile: unknown, never cancelled") {
        clock.advance(1min);
        src.set(make_doc("2", {}));
        recorder rec;
        poller p(src, rec.handlers(), with_state(f, "boot-1"));
        REQUIRE(p.poll_once());
        CHECK(rec.seen() == ids{"recover R unknown", "recover G unknown"});
        CHECK(rec.changes[0].evidence == "last seen before this process started (a gap in watching)");
    }
}

TEST_CASE("poller: a corrupt or unwritable state file is reported and never fatal", "[poller][state]") {
    temp_path f("corrupt");
    manual_clock clock;
    fake_source src(source_options(clock));
    src.set(make_doc("1", {make_event("A")}));
    SECTION("corrupt: treated as empty") {
        {
            std::ofstream out(f.path);
            out << "{\"format\":\"forewarn-state/2\",\"events\":[{\"id\":";
        }
        recorder rec;
        poller p(src, rec.handlers(), with_state(f));
        REQUIRE(p.poll_once());
        CHECK(rec.seen() == ids{"prepare A"});
        REQUIRE_FALSE(rec.errs().empty());
        CHECK(rec.errs()[0].code == errc::parse_error);
        CHECK(rec.errs()[0].message.find("starting with no events known") != std::string::npos);
    }
    SECTION("unwritable: reported each cycle that changed something, the poller goes on") {
        poller_options o;
        o.state = std::make_shared<forewarn::state_file>("/nonexistent-dir/forewarn/state.json");
        recorder rec;
        poller p(src, rec.handlers(), o);
        REQUIRE(p.poll_once());
        CHECK(rec.seen() == ids{"prepare A"});
        REQUIRE_FALSE(rec.errs().empty());
        CHECK(rec.errs().back().code == errc::io_error);
    }
}

TEST_CASE("poller: text that JSON cannot hold is reported, never a broken state file", "[poller][state]") {
    temp_path f("utf8");
    manual_clock clock;
    fake_source src(source_options(clock));
    src.set(make_doc("1", {make_event("A")}));
    {
        recorder rec;
        poller p(src, rec.handlers(), with_state(f));
        REQUIRE(p.poll_once());
    }
    auto bad = make_event("B");
    bad.description = std::string("cut \xE2\x82", 6);
    src.set(make_doc("2", {make_event("A"), bad}));
    recorder rec;
    poller p(src, rec.handlers(), with_state(f));
    REQUIRE(p.poll_once());
    REQUIRE_FALSE(rec.errs().empty());
    CHECK(rec.errs().back().message.find("not valid UTF-8") != std::string::npos);
    auto text = forewarn::platform::read_small_file(f.path);
    REQUIRE(text);
    auto st = forewarn::state_file::read(*text);
    REQUIRE(st);  // the old file, whole
    CHECK(st->delivered.events.size() == 1);
}

// --- the thread ---------------------------------------------------------------------------------

TEST_CASE("poller thread: one document per interval of the injected clock, nothing between", "[poller][thread]") {
    manual_clock clock;
    auto o = source_options(clock);
    o.interval = 1s;
    fake_source src(o);
    recorder rec;
    poller p(src, rec.handlers());
    REQUIRE(p.start());
    REQUIRE(clock.wait_idle());
    CHECK(src.answers() == 1);
    REQUIRE(clock.advance_and_wait(999ms));
    CHECK(src.answers() == 1);
    REQUIRE(clock.advance_and_wait(1ms));
    CHECK(src.answers() == 2);
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(clock.advance_and_wait(1s));
    CHECK(rec.seen() == ids{"prepare A"});
    p.stop();
    CHECK_FALSE(p.running());
}

TEST_CASE("poller thread: a handle made ready later is approved at once, without the clock moving",
          "[poller][thread]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    rec.ready_in_handler = false;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(p.start());
    REQUIRE(clock.wait_idle());
    CHECK(src.approvals().empty());
    std::thread other([&] { rec.handle(0).ready(); });
    other.join();
    REQUIRE(clock.wait_idle());  // ready() woke the source's wait: a document, then the approval
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
    CHECK(src.answers() == 2);
}

TEST_CASE("poller thread: stop() returns in the middle of a wait - the destructor stops too", "[poller][thread]") {
    manual_clock clock;
    auto o = source_options(clock);
    o.hanging = true;
    o.interval = 1h;
    fake_source src(o);
    auto p = std::make_unique<poller>(src);
    REQUIRE(p->start());
    REQUIRE(clock.wait_idle());
    REQUIRE(clock.advance_and_wait(1s));  // a hanging wait of an hour: nothing to do
    auto again = p->start();
    REQUIRE_FALSE(again);
    CHECK(again.error().code == errc::invalid_argument);
    CHECK_FALSE(p->poll_once());
    p->stop();
    CHECK_FALSE(p->running());
    CHECK(clock.threads() == 0);
    REQUIRE(p->start());  // and again
    REQUIRE(clock.wait_idle());
    p.reset();  // the destructor stops it
    CHECK(clock.threads() == 0);
}

TEST_CASE("poller thread: stop() from a handler ends the thread", "[poller][thread]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    poller* pp = nullptr;
    poller_handlers h;
    h.on_prepare = [&](const change&, approval_handle) { pp->stop(); };
    poller p(src, h);
    pp = &p;
    src.set(make_doc("1", {make_event("A"), make_event("B")}));
    REQUIRE(p.start());
    REQUIRE(clock.wait_idle());
    CHECK(clock.threads() == 0);
    CHECK_FALSE(p.running());
    CHECK(p.last_document().events.size() == 1);
}

TEST_CASE("poller thread: a hanging source is waited on, and a change wakes it", "[poller][thread]") {
    manual_clock clock;
    auto o = source_options(clock);
    o.hanging = true;
    o.interval = 60s;
    o.can_approve = false;
    fake_source src(o);
    recorder rec;
    poller p(src, rec.handlers());
    REQUIRE(p.start());
    REQUIRE(clock.wait_idle());
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(clock.wait_idle());
    CHECK(rec.seen() == ids{"prepare A"});
    CHECK(src.answers() == 2);  // no time passed: the change itself answered
    REQUIRE(clock.advance_and_wait(60s));
    CHECK(src.answers() == 3);
}

TEST_CASE("poller thread: errors between documents are reported and the thread goes on", "[poller][thread]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A")}));
    REQUIRE(p.start());
    REQUIRE(clock.wait_idle());
    src.fail_next(error(errc::timeout, "t1"));
    REQUIRE(clock.advance_and_wait(1s));
    src.set(make_doc("2", {}));
    REQUIRE(clock.advance_and_wait(1s));
    CHECK(rec.seen() == ids{"prepare A", "recover A completed"});  // approved by this VM
    REQUIRE(rec.errs().size() == 1);
    CHECK(rec.errs()[0].message == "t1");
}

TEST_CASE("poller thread: the pause a Started event of this VM lived through comes with its recover",
          "[poller][thread][pause]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    recorder rec;
    poller p(src, rec.handlers());
    src.set(make_doc("1", {make_event("A"), make_event("B", event_status::scheduled, {"vm_1"})}));
    REQUIRE(p.start());
    REQUIRE(clock.wait_idle());
    CHECK(clock.threads() == 1);  // nothing Started: no meter thread
    src.set(make_doc("2", {make_event("A", event_status::started), make_event("B", event_status::started, {"vm_1"})}));
    REQUIRE(clock.advance_and_wait(1s));
    CHECK(clock.threads() == 2);  // A is Started and names this VM: watched
    REQUIRE(clock.advance_and_wait(100ms));
    REQUIRE(clock.advance_and_wait(100ms));
    REQUIRE(clock.advance_and_wait(3s));  // the freeze: 3 s with nothing running
    src.set(make_doc("3", {}));
    REQUIRE(clock.advance_and_wait(1s));
    std::vector<change> recovers;
    {
        std::lock_guard<std::mutex> lock(rec.mutex);
        for (const auto& c : rec.changes)
            if (c.kind == change_kind::recover) recovers.push_back(c);
    }
    REQUIRE(recovers.size() == 2);
    for (const auto& c : recovers) {
        if (c.event.id == "A") {
            REQUIRE(c.pause);
            CHECK(c.pause->longest == 2900ms);  // 3 s after the last look, which was due 100 ms after it
            CHECK(c.pause->seen_by() == "monotonic");
        } else {
            CHECK_FALSE(c.pause);  // another VM's event is not this VM's pause
        }
    }
    p.stop();
    CHECK(clock.threads() == 0);  // the meter's thread stopped with the poller
}

TEST_CASE("poller thread: an event the source says is under way once announced is watched from its notice "
          "(GCE's live migration: never marked Started)",
          "[poller][thread][pause]") {
    manual_clock clock;
    auto o = source_options(clock);
    o.origin = cloud::gce;
    o.can_approve = false;
    fake_source src(o);
    recorder rec;
    poller p(src, rec.handlers());
    event migration = make_event("maintenance-event:MIGRATE_ON_HOST_MAINTENANCE", event_status::scheduled, {});
    migration.type = event_type::live_migrate;
    migration.raw_type = "MIGRATE_ON_HOST_MAINTENANCE";
    REQUIRE(p.start());
    REQUIRE(clock.wait_idle());
    document notice = make_doc("1", {migration});
    notice.under_way_when_announced = {event_type::live_migrate};  // the GCE client's word
    src.set(notice);
    REQUIRE(clock.advance_and_wait(1s));
    CHECK(clock.threads() == 2);  // watched from the notice
    REQUIRE(clock.advance_and_wait(100ms));
    REQUIRE(clock.advance_and_wait(5s));  // the migration's blackout
    src.set(make_doc("2", {}));
    REQUIRE(clock.advance_and_wait(1s));
    std::lock_guard<std::mutex> lock(rec.mutex);
    REQUIRE(rec.changes.size() == 2);
    REQUIRE(rec.changes[1].kind == change_kind::recover);
    REQUIRE(rec.changes[1].pause);
    CHECK(rec.changes[1].pause->longest == 4900ms);
}

TEST_CASE("poller: no pause is measured with pause_look 0, nor by poll_once()", "[poller][pause]") {
    manual_clock clock;
    for (const bool threaded : {true, false}) {
        CAPTURE(threaded);
        fake_source src(source_options(clock));
        recorder rec;
        poller_options o;
        if (threaded) o.pause_look = 0ms;
        poller p(src, rec.handlers(), o);
        src.set(make_doc("1", {make_event("A", event_status::started)}));
        if (threaded) {
            REQUIRE(p.start());
            REQUIRE(clock.wait_idle());
        } else {
            REQUIRE(p.poll_once());
        }
        CHECK(clock.threads() == (threaded ? 1u : 0u));  // no meter thread
        clock.advance(5s);
        src.set(make_doc("2", {}));
        if (threaded) {
            REQUIRE(clock.advance_and_wait(1s));
            p.stop();
        } else {
            REQUIRE(p.poll_once());
        }
        std::lock_guard<std::mutex> lock(rec.mutex);
        REQUIRE(rec.changes.size() == 2);
        CHECK(rec.changes[1].kind == change_kind::recover);
        CHECK_FALSE(rec.changes[1].pause);
    }
}

TEST_CASE("poller: a prepare whose work outlived the process - approval(id) after the restart approves it once",
          "[poller][state][approval]") {
    temp_path f("resume");
    manual_clock clock;
    fake_source src(source_options(clock));
    src.set(make_doc("1", {make_event("A"), make_event("D")}));
    {
        recorder rec;
        rec.ready_in_handler = false;
        poller p(src, rec.handlers(), with_state(f));
        REQUIRE(p.poll_once());
        CHECK(rec.seen() == ids{"prepare A", "prepare D"});
        rec.handle(0).ready();  // A is ready in time; D's work is cut short by the "crash"
        p.approve_due();
        REQUIRE(p.poll_once());  // saves A as approved
    }
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
    recorder rec;
    rec.ready_in_handler = false;
    poller p(src, rec.handlers(), with_state(f));
    // Asked for before the state is loaded, as a restarted program does at once.
    auto d = p.approval("D");
    auto a = p.approval("A");
    auto unknown = p.approval("Z");
    CHECK(d.event_id() == "D");
    CHECK(d.status().state == approval_state::pending);
    REQUIRE(p.poll_once());
    CHECK(rec.seen().empty());  // no prepare again: the handle is the only way to approve D
    CHECK(src.approvals() == std::vector<ids>{{"A"}});
    CHECK(a.status().state == approval_state::approved);  // restored, not sent again
    CHECK(unknown.status().state == approval_state::gone);
    CHECK(d.status().state != approval_state::approved);
    d.ready();
    p.approve_due();
    CHECK(src.approvals() == std::vector<ids>{{"A"}, {"D"}});
    CHECK(d.status().state == approval_state::approved);
    // Asking again, and saying ready again, changes nothing.
    p.approval("D").ready();
    p.approve_due();
    REQUIRE(p.poll_once());
    CHECK(src.approvals() == std::vector<ids>{{"A"}, {"D"}});
    CHECK(p.approval("D").status().state == approval_state::approved);
}

TEST_CASE("poller: a filter leaves the events it declines out of everything - changes, approvals, health, last_document",
          "[poller][filter]") {
    manual_clock clock;
    fake_source src(source_options(clock));
    auto freeze = make_event("F");
    freeze.type = event_type::freeze;
    src.set(make_doc("1", {freeze, make_event("R")}));
    recorder rec;
    poller_options o;
    o.filter = [](const event& e) { return e.type == event_type::freeze; };
    poller p(src, rec.handlers(), o);
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare F"});
    CHECK(src.approvals() == std::vector<ids>{{"F"}});
    CHECK(p.health().events == 1);
    REQUIRE(p.last_document().events.size() == 1);
    CHECK(p.last_document().events[0].id == "F");
    // R starting and ending changes nothing either.
    src.set(make_doc("2", {freeze, make_event("R", event_status::started)}));
    REQUIRE(p.poll_once());
    src.set(make_doc("3", {freeze}));
    REQUIRE(p.poll_once());
    CHECK(rec.seen() == ids{"prepare F"});
}

}  // namespace test_poller
