// SPDX-License-Identifier: MIT
// basic_poller over a scripted fake client and testing::manual_clock: no sockets, no sleeps.
#include <forewarn/poller.hpp>
#include <forewarn/testing/manual_clock.hpp>

#include "catch.hpp"
#include "poller_fake_client.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using forewarn::approval_handle;
using forewarn::approval_scope;
using forewarn::change;
using forewarn::cloud;
using forewarn::document;
using forewarn::errc;
using forewarn::event;
using forewarn::event_source;
using forewarn::event_status;
using forewarn::event_type;
using forewarn::poller_handlers;
using forewarn::poller_options;
using forewarn::testing::manual_clock;
using namespace std::chrono_literals;
using strings = std::vector<std::string>;

namespace {

event ev(std::string id, event_status status = event_status::scheduled, strings resources = {"vm_0", "vm_1"},
         event_source source = event_source::platform, event_type type = event_type::reboot) {
    event e;
    e.id = std::move(id);
    e.type = type;
    e.raw_type = std::string(forewarn::to_string(type));
    e.status = status;
    e.raw_status = status == event_status::started ? "Started" : "Scheduled";
    e.resource_type = "VirtualMachine";
    e.resources = std::move(resources);
    e.source = source;
    e.raw_source = source == event_source::user ? "User" : "Platform";
    e.duration_in_seconds = -1;
    if (status == event_status::scheduled)
        e.not_before = std::chrono::system_clock::time_point(std::chrono::seconds(1649716018));
    return e;
}

document doc(std::string incarnation, std::vector<event> events, cloud origin = cloud::azure) {
    document d;
    d.origin = origin;
    d.incarnation = std::move(incarnation);
    d.events = std::move(events);
    return d;
}

/// Records every callback as "kind:id[:reason]" and every error; thread-safe.
struct recorder {
    std::mutex mutex;
    strings calls;
    std::vector<forewarn::error> errors;
    std::vector<approval_handle> handles;
    bool ready_at_once = true;

    poller_handlers handlers() {
        poller_handlers h;
        h.on_prepare = [this](const change& c, approval_handle a) {
            std::lock_guard<std::mutex> lock(mutex);
            calls.push_back("prepare:" + c.event.id);
            handles.push_back(a);
            if (ready_at_once) a.ready();
        };
        h.on_started = [this](const change& c) { add("started:" + c.event.id); };
        h.on_recover = [this](const change& c) {
            add("recover:" + c.event.id + ":" + std::string(forewarn::to_string(c.reason)));
        };
        h.on_updated = [this](const change& c) { add("updated:" + c.event.id); };
        h.on_error = [this](const forewarn::error& e) {
            std::lock_guard<std::mutex> lock(mutex);
            errors.push_back(e);
        };
        return h;
    }
    void add(std::string s) {
        std::lock_guard<std::mutex> lock(mutex);
        calls.push_back(std::move(s));
    }
    strings take() {
        std::lock_guard<std::mutex> lock(mutex);
        strings out;
        out.swap(calls);
        return out;
    }
    std::vector<forewarn::error> take_errors() {
        std::lock_guard<std::mutex> lock(mutex);
        std::vector<forewarn::error> out;
        out.swap(errors);
        return out;
    }
};

poller_options own_options(std::string self = "vm_0") {
    poller_options o;
    o.approval.scope = approval_scope::own;
    o.approval.self = std::move(self);
    return o;
}

using azure_poller = forewarn::basic_poller<fake::azure_client, manual_clock>;
using gce_poller = forewarn::basic_poller<fake::gce_client, manual_clock>;

/// A fresh path in the temp directory, removed when the test ends.
struct temp_path {
    std::filesystem::path path;
    explicit temp_path(const std::string& name) {
        static std::atomic<int> counter{0};
        path = std::filesystem::temp_directory_path() /
               ("forewarn-test-" + std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) % 100000) +
                "-" + std::to_string(counter++) + "-" + name);
        std::filesystem::remove(path);
    }
    ~temp_path() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
    std::string str() const { return path.string(); }
};

}  // namespace

// ---------------------------------------------------------------- driven by poll_once()

TEST_CASE("poller: events present at start are delivered once", "[poller]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("5", {ev("A"), ev("B", event_status::started)}));
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), poller_options{}, manual_clock{});
    REQUIRE(p.poll_once().value() == 2);
    CHECK(r.take() == strings{"prepare:A", "started:B"});
    REQUIRE(p.poll_once().value() == 0);
    s->set(doc("6", {ev("A"), ev("B", event_status::started)}));  // new tag, same content
    REQUIRE(p.poll_once().value() == 0);
    CHECK(r.take().empty());
    CHECK(r.take_errors().empty());
}

TEST_CASE("poller: a whole life cycle, completed and cancelled", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::never;  // nothing approved: a vanished Scheduled event was cancelled
    azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
    s->set(doc("1", {}));
    p.poll_once();
    s->set(doc("2", {ev("A"), ev("C")}));
    p.poll_once();
    auto moved = ev("A");
    moved.not_before = *moved.not_before + 10min;
    s->set(doc("3", {moved, ev("C")}));
    p.poll_once();
    s->set(doc("4", {ev("A", event_status::started), ev("C")}));
    p.poll_once();
    s->set(doc("5", {ev("A", event_status::started)}));  // C withdrawn before it started
    p.poll_once();
    s->set(doc("6", {}));
    p.poll_once();
    CHECK(r.take() == strings{"prepare:A", "prepare:C", "updated:A", "started:A", "recover:C:cancelled",
                              "recover:A:completed"});
}

TEST_CASE("poller: failed, empty and malformed answers change nothing", "[poller]") {
    const std::vector<forewarn::error> faults = {
        forewarn::error(errc::transport, "connection refused"), forewarn::error(errc::timeout, "timed out"),
        forewarn::error(errc::http_status, "busy", 503), forewarn::error(errc::http_status, "too many", 429),
        forewarn::error(errc::http_status, "gone", 410), forewarn::error(errc::empty_body, "200 with no body"),
        forewarn::error(errc::parse_error, "malformed JSON"),
        forewarn::error(errc::invalid_document, "Events is not an array"),
        forewarn::error(errc::body_too_large, "too big")};
    for (const auto& fault : faults) {
        auto s = std::make_shared<fake::service>();
        recorder r;
        azure_poller p(fake::azure_client(s), r.handlers(), poller_options{}, manual_clock{});
        s->set(doc("1", {ev("A")}));
        p.poll_once();
        CHECK(r.take() == strings{"prepare:A"});
        s->fail_next(fault);
        auto failed = p.poll_once();
        REQUIRE_FALSE(failed.has_value());
        CHECK(failed.error().code == fault.code);
        auto errors = r.take_errors();
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].code == fault.code);
        CHECK(r.take().empty());  // no recover for A
        CHECK(p.last_document().events.size() == 1);
        p.poll_once();  // A still there: nothing new
        CHECK(r.take().empty());
    }
}

TEST_CASE("poller: an incarnation that starts over is not replayed", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), poller_options{}, manual_clock{});
    s->set(doc("40", {ev("A")}));
    p.poll_once();
    s->set(doc("1", {ev("A"), ev("B")}));  // service re-enabled
    p.poll_once();
    CHECK(r.take() == strings{"prepare:A", "prepare:B"});
}

TEST_CASE("poller: approves once when on_prepare says ready, several ids in one POST", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), own_options(), manual_clock{});
    s->set(doc("1", {ev("A"), ev("B"), ev("X", event_status::scheduled, {"vm_7"})}));
    p.poll_once();
    CHECK(s->approved() == std::vector<strings>{{"A", "B"}});  // never X: it does not name vm_0
    p.poll_once();
    s->set(doc("2", {ev("A"), ev("B"), ev("X", event_status::scheduled, {"vm_7"}), ev("C")}));
    p.poll_once();
    CHECK(s->approved() == std::vector<strings>{{"A", "B"}, {"C"}});
}

TEST_CASE("poller: an approved event that vanishes between two polls completed, it was not cancelled", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), own_options(), manual_clock{});
    s->set(doc("1", {ev("A"), ev("B", event_status::scheduled, {"vm_9"})}));
    p.poll_once();
    CHECK(s->approved() == std::vector<strings>{{"A"}});
    s->set(doc("3", {}));  // A started and ended between two polls; B (not ours) was withdrawn
    p.poll_once();
    CHECK(r.take() == strings{"prepare:A", "prepare:B", "recover:A:completed", "recover:B:cancelled"});
}

TEST_CASE("poller: nothing is approved until the handle says ready, even later", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    r.ready_at_once = false;
    azure_poller p(fake::azure_client(s), r.handlers(), own_options(), manual_clock{});
    s->set(doc("1", {ev("A")}));
    p.poll_once();
    p.poll_once();
    CHECK(s->approved().empty());
    REQUIRE(r.handles.size() == 1);
    CHECK(r.handles[0].event_id() == "A");
    r.handles[0].ready();
    r.handles[0].ready();  // repeated: still one approval
    p.approve_due();
    p.poll_once();
    CHECK(s->approved() == std::vector<strings>{{"A"}});
}

TEST_CASE("poller: a failed approval is reported and tried again", "[poller]") {
    auto s = std::make_shared<fake::service>();
    s->approve_script.emplace_back(forewarn::error(errc::http_status, "busy", 503));
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), own_options(), manual_clock{});
    s->set(doc("1", {ev("A")}));
    p.poll_once();
    CHECK(s->approved().empty());
    auto errors = r.take_errors();
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].http_status == 503);
    p.poll_once();
    CHECK(s->approved() == std::vector<strings>{{"A"}});
    p.poll_once();
    CHECK(s->approved().size() == 1);
}

TEST_CASE("poller: learns its name from identity(), and approves nothing while it cannot", "[poller]") {
    auto s = std::make_shared<fake::service>();
    s->identity_fails = true;
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::own;  // no self: ask the client
    azure_poller p(fake::azure_client(s, "vm_1"), r.handlers(), o, manual_clock{});
    s->set(doc("1", {ev("A")}));
    p.poll_once();
    CHECK(s->approved().empty());
    auto errors = r.take_errors();
    REQUIRE_FALSE(errors.empty());
    CHECK(errors[0].http_status == 500);
    CHECK(p.self().empty());
    {
        std::lock_guard<std::mutex> lock(s->mutex);
        s->identity_fails = false;
    }
    p.poll_once();
    CHECK(p.self() == "vm_1");
    CHECK(s->approved() == std::vector<strings>{{"A"}});
}

TEST_CASE("poller: identity is not asked when nothing needs it", "[poller]") {
    for (auto scope : {approval_scope::never, approval_scope::all}) {
        auto s = std::make_shared<fake::service>();
        recorder r;
        poller_options o;
        o.approval.scope = scope;
        azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
        s->set(doc("1", {ev("A", event_status::scheduled, {"someone_else"})}));
        p.poll_once();
        CHECK(s->identity_calls == 0);
        CHECK(s->approved() == (scope == approval_scope::all ? std::vector<strings>{{"A"}} : std::vector<strings>{}));
    }
}

TEST_CASE("poller: a handler that throws is reported and the poller goes on", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    auto h = r.handlers();
    h.on_prepare = [&](const change& c, approval_handle a) {
        r.add("prepare:" + c.event.id);
        if (c.event.id == "A") throw std::runtime_error("drain failed");
        if (c.event.id == "B") throw 42;
        a.ready();
    };
    azure_poller p(fake::azure_client(s), h, own_options(), manual_clock{});
    s->set(doc("1", {ev("A"), ev("B"), ev("C")}));
    REQUIRE(p.poll_once().value() == 3);
    CHECK(r.take() == strings{"prepare:A", "prepare:B", "prepare:C"});
    auto errors = r.take_errors();
    REQUIRE(errors.size() == 2);
    CHECK(errors[0].code == errc::handler_failed);
    CHECK(errors[0].message.find("drain failed") != std::string::npos);
    CHECK(errors[1].code == errc::handler_failed);
    CHECK(s->approved() == std::vector<strings>{{"C"}});  // A and B never said ready
    s->set(doc("2", {}));
    p.poll_once();
    // C was approved, so it completed; A and B were never approved and vanished Scheduled.
    CHECK(r.take() == strings{"recover:A:cancelled", "recover:B:cancelled", "recover:C:completed"});
}

TEST_CASE("poller: an on_error that throws does not kill the poller", "[poller]") {
    auto s = std::make_shared<fake::service>();
    poller_handlers h;
    int prepared = 0;
    h.on_prepare = [&](const change&, approval_handle) {
        ++prepared;
        throw std::runtime_error("x");
    };
    h.on_error = [](const forewarn::error&) { throw std::runtime_error("y"); };
    azure_poller p(fake::azure_client(s), h, poller_options{}, manual_clock{});
    s->set(doc("1", {ev("A")}));
    CHECK(p.poll_once().has_value());
    s->fail_next(forewarn::error(errc::transport, "down"));
    CHECK_FALSE(p.poll_once().has_value());
    CHECK(prepared == 1);
}

TEST_CASE("poller: stop() from a handler delivers nothing more, and the rest comes next time", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    azure_poller* self = nullptr;
    auto h = r.handlers();
    h.on_prepare = [&](const change& c, approval_handle) {
        r.add("prepare:" + c.event.id);
        if (c.event.id == "A") self->stop();
    };
    azure_poller p(fake::azure_client(s), h, own_options(), manual_clock{});
    self = &p;
    s->set(doc("1", {ev("A"), ev("B")}));
    REQUIRE(p.poll_once().value() == 1);
    CHECK(p.stop_requested());
    CHECK(r.take() == strings{"prepare:A"});
    CHECK(p.last_document().events.size() == 1);
    REQUIRE(p.poll_once().value() == 1);  // a new poll_once() goes on from there
    CHECK(r.take() == strings{"prepare:B"});
}

TEST_CASE("poller: the follower approves a user event once the leader stayed silent for the grace", "[poller]") {
    auto s = std::make_shared<fake::service>();
    manual_clock clock;
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::leader;
    o.approval.self = "vm_1";  // vm_0 is listed first: the leader, and it is silent
    azure_poller follower(fake::azure_client(s, "vm_1"), r.handlers(), o, clock);
    s->set(doc("1", {ev("U", event_status::scheduled, {"vm_0", "vm_1"}, event_source::user),
                     ev("P", event_status::scheduled, {"vm_0", "vm_1"}, event_source::platform)}));
    follower.poll_once();
    for (int i = 0; i < 29; ++i) {
        clock.advance(1s);
        follower.poll_once();
    }
    CHECK(s->approved().empty());
    clock.advance(1s);
    follower.poll_once();
    CHECK(s->approved() == std::vector<strings>{{"U"}});  // never the platform event
    clock.advance(10min);
    follower.poll_once();
    CHECK(s->approved().size() == 1);
}

TEST_CASE("poller: two VMs on one service, exactly one approval, by the leader", "[poller]") {
    auto s = std::make_shared<fake::service>();
    manual_clock clock;
    recorder r0, r1;
    poller_options o;
    o.approval.scope = approval_scope::leader;
    azure_poller vm0(fake::azure_client(s, "vm_0"), r0.handlers(), o, clock);
    azure_poller vm1(fake::azure_client(s, "vm_1"), r1.handlers(), o, clock);
    s->set(doc("1", {ev("F", event_status::scheduled, {"vm_0", "vm_1"}, event_source::platform, event_type::freeze)}));
    for (int i = 0; i < 60; ++i) {
        vm1.poll_once();
        vm0.poll_once();
        clock.advance(1s);
    }
    CHECK(s->approved() == std::vector<strings>{{"F"}});
    CHECK(s->approved_by == strings{"vm_0"});
    CHECK(r0.take() == strings{"prepare:F"});
    CHECK(r1.take() == strings{"prepare:F"});
}

TEST_CASE("poller: approval rules at once for user events and short Freezes", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    r.ready_at_once = false;
    auto o = own_options();
    o.approval.approve_user_events = true;
    o.approval.approve_freeze_shorter_than = 9s;
    azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
    auto freeze = ev("F", event_status::scheduled, {"vm_0"}, event_source::platform, event_type::freeze);
    freeze.duration_in_seconds = 5;
    auto long_freeze = freeze;
    long_freeze.id = "F30";
    long_freeze.duration_in_seconds = 30;
    s->set(doc("1", {ev("U", event_status::scheduled, {"vm_0"}, event_source::user), freeze, long_freeze}));
    p.poll_once();
    CHECK(s->approved() == std::vector<strings>{{"U", "F"}});
}

TEST_CASE("poller: GCE never tries to approve", "[poller]") {
    auto s = std::make_shared<fake::service>();
    recorder r;
    poller_options o;
    o.approval.scope = approval_scope::all;
    gce_poller p(fake::gce_client(s), r.handlers(), o, manual_clock{});
    event m;
    m.id = "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE";
    m.type = event_type::live_migrate;
    m.raw_type = "MIGRATE_ON_HOST_MAINTENANCE";
    m.status = event_status::scheduled;
    s->set(doc("e2/p1", {m}, cloud::gce));
    p.poll_once();
    s->set(doc("e3/p1", {}, cloud::gce));
    p.poll_once();
    CHECK(r.take() == strings{"prepare:" + m.id, "recover:" + m.id + ":completed"});
    CHECK(s->approve_calls == 0);
    CHECK(r.take_errors().empty());
}

TEST_CASE("poller: options are clamped to the rate limit", "[poller]") {
    auto s = std::make_shared<fake::service>();
    poller_options o;
    o.interval = 10ms;
    azure_poller p(fake::azure_client(s), {}, o, manual_clock{});
    CHECK(p.get_options().interval == 200ms);
}

// ---------------------------------------------------------------- the state file

TEST_CASE("poller: with a state file, a restart does not deliver or approve again", "[poller][state]") {
    temp_path state("state.json");
    auto s = std::make_shared<fake::service>();
    auto o = own_options();
    o.state_file = state.str();
    {
        recorder r;
        azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
        s->set(doc("1", {ev("A"), ev("B", event_status::started), ev("C")}));
        p.poll_once();
        CHECK(r.take() == strings{"prepare:A", "started:B", "prepare:C"});
        auto errors = r.take_errors();  // the first run has no file yet: said once
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].code == errc::not_found);
    }
    CHECK(s->approved() == std::vector<strings>{{"A", "C"}});
    REQUIRE(std::filesystem::exists(state.path));
    // No temporary file left beside it.
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(state.path.parent_path()))
        if (entry.path().filename().string().rfind(state.path.filename().string(), 0) == 0) ++files;
    CHECK(files == 1);

    // While down, C (approved before the restart) ended and D appeared.
    s->set(doc("2", {ev("A"), ev("B", event_status::started), ev("D")}));
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
    p.poll_once();
    CHECK(r.take() == strings{"prepare:D", "recover:C:completed"});  // the approval was remembered
    CHECK(r.take_errors().empty());
    CHECK(s->approved() == std::vector<strings>{{"A", "C"}, {"D"}});  // A not approved again
}

TEST_CASE("poller: a corrupt state file is reported and treated as empty", "[poller][state]") {
    const std::vector<std::string> bodies = {
        "", "{", "[]", "{\"format\":\"something-else\"}", "{\"format\":\"forewarn-state/1\",\"cloud\":\"azure\"}",
        "{\"format\":\"forewarn-state/1\",\"cloud\":\"azure\",\"incarnation\":\"1\",\"events\":[{\"id\":7}]}",
        std::string("\xff\xfe garbage", 10)};
    for (const auto& body : bodies) {
        temp_path state("corrupt.json");
        {
            std::ofstream out(state.path, std::ios::binary);
            out << body;
        }
        auto s = std::make_shared<fake::service>();
        s->set(doc("1", {ev("A")}));
        recorder r;
        poller_options o;
        o.state_file = state.str();
        azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
        REQUIRE(p.poll_once().has_value());
        CHECK(r.take() == strings{"prepare:A"});
        auto errors = r.take_errors();
        REQUIRE(errors.size() == 1);
        CHECK(errors[0].message.find("unreadable") != std::string::npos);
        // And the file is good again afterwards.
        recorder r2;
        azure_poller p2(fake::azure_client(s), r2.handlers(), o, manual_clock{});
        p2.poll_once();
        CHECK(r2.take().empty());
        CHECK(r2.take_errors().empty());
    }
}

TEST_CASE("poller: the state file keeps every field of an event", "[poller][state]") {
    forewarn::detail::poller_state st;
    st.last = doc("9", {ev("A"), ev("B", event_status::started, {}, event_source::user, event_type::freeze)});
    st.last.events[0].description = "h\xc3\xa9llo \"quoted\"";
    st.last.events[0].duration_in_seconds = 5;
    st.last.events[1].source.reset();
    st.last.events[1].raw_source.clear();
    st.last.events[1].duration_in_seconds.reset();
    auto odd = ev("C");
    odd.type = event_type::unknown;
    odd.raw_type = "Hibernate";
    odd.status = event_status::unknown;
    odd.raw_status = "Pending";
    st.last.events.push_back(odd);
    st.approved = {"A"};
    auto text = forewarn::detail::write_state(st);
    REQUIRE(text.has_value());
    auto back = forewarn::detail::read_state(*text);
    REQUIRE(back.has_value());
    CHECK(back->last == st.last);
    CHECK(back->approved == st.approved);
}

TEST_CASE("poller: text that JSON cannot hold is reported, never a broken state file", "[poller][state]") {
    temp_path state("utf8.json");
    auto s = std::make_shared<fake::service>();
    auto bad = ev("A");
    bad.raw_type = std::string("Fr\xff\xfe" "eze", 7);  // not UTF-8 (a GCE value can be anything)
    s->set(doc("1", {bad}));
    recorder r;
    poller_options o;
    o.state_file = state.str();
    o.approval.scope = approval_scope::never;
    azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
    REQUIRE(p.poll_once().has_value());
    CHECK(r.take() == strings{"prepare:A"});
    auto errors = r.take_errors();
    REQUIRE(errors.size() == 2);  // no file yet; cannot save
    CHECK(errors[1].message.find("not valid UTF-8") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(state.path));
    s->set(doc("2", {}));
    p.poll_once();  // the poller goes on, and saves once it can
    CHECK(r.take() == strings{"recover:A:cancelled"});
    CHECK(std::filesystem::exists(state.path));
}

TEST_CASE("poller: after a restart the first document is diffed by content, even with the saved incarnation",
          "[poller][state][regression]") {
    // The service may start DocumentIncarnation over while the process is away (24 h without a
    // request) and reach the saved number again with other events: trusting the saved tag made
    // diff() skip that document, and B's prepare was lost.
    temp_path state("incarnation.json");
    auto s = std::make_shared<fake::service>();
    poller_options o;
    o.state_file = state.str();
    o.approval.scope = approval_scope::never;
    {
        s->set(doc("3", {ev("A")}));
        recorder r;
        azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
        REQUIRE(p.poll_once().has_value());
        CHECK(r.take() == strings{"prepare:A"});
    }
    s->set(doc("3", {ev("B")}));
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
    REQUIRE(p.poll_once().has_value());
    auto got = r.take();
    std::sort(got.begin(), got.end());
    CHECK(got == strings{"prepare:B", "recover:A:cancelled"});
    REQUIRE(p.poll_once().has_value());
    CHECK(r.take().empty());  // and nothing twice
}

TEST_CASE("poller: a state file that cannot be written is reported, never fatal", "[poller][state]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("1", {ev("A")}));
    recorder r;
    poller_options o;
    o.state_file = (std::filesystem::temp_directory_path() / "forewarn-no-such-dir" / "x" / "state.json").string();
    azure_poller p(fake::azure_client(s), r.handlers(), o, manual_clock{});
    REQUIRE(p.poll_once().has_value());
    CHECK(r.take() == strings{"prepare:A"});
    auto errors = r.take_errors();
    REQUIRE(errors.size() == 2);  // no file to read, and none can be written
    CHECK(errors[1].code == errc::io_error);
}

// ---------------------------------------------------------------- its own thread

TEST_CASE("poller thread: polls once per interval of the injected clock", "[poller][thread]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("1", {ev("A")}));
    manual_clock clock;
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), own_options(), clock);
    REQUIRE(p.start().has_value());
    REQUIRE(clock.wait_for_sleepers(1));
    CHECK(s->fetch_count() == 1);
    CHECK(r.take() == strings{"prepare:A"});
    CHECK(s->approved() == std::vector<strings>{{"A"}});
    REQUIRE(clock.advance_and_wait(999ms));
    CHECK(s->fetch_count() == 1);  // not yet
    s->set(doc("2", {}));
    REQUIRE(clock.advance_and_wait(1ms));
    CHECK(s->fetch_count() == 2);
    CHECK(r.take() == strings{"recover:A:completed"});
    for (int i = 0; i < 5; ++i) REQUIRE(clock.advance_and_wait(1s));
    CHECK(s->fetch_count() == 7);
    p.stop();
    CHECK_FALSE(p.running());
}

TEST_CASE("poller thread: a handle made ready later approves without waiting for the next poll", "[poller][thread]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("1", {ev("A")}));
    manual_clock clock;
    recorder r;
    r.ready_at_once = false;
    azure_poller p(fake::azure_client(s), r.handlers(), own_options(), clock);
    p.start();
    REQUIRE(clock.wait_for_sleepers(1));
    CHECK(s->approved().empty());
    approval_handle h;
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        REQUIRE(r.handles.size() == 1);
        h = r.handles[0];
    }
    const auto sleeps = clock.sleeps();
    std::thread other([h] { h.ready(); });  // from another thread, e.g. when a drain finishes
    other.join();
    REQUIRE(clock.wait_for_sleeps(sleeps));  // woke, approved, went back to sleep
    CHECK(s->approved() == std::vector<strings>{{"A"}});
    CHECK(s->fetch_count() == 1);  // no extra fetch for it
}

TEST_CASE("poller thread: stop() returns promptly in the middle of a request", "[poller][thread]") {
    auto s = std::make_shared<fake::service>();
    s->block_fetch = true;
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), poller_options{}, manual_clock{});
    p.start();
    REQUIRE(s->wait_in_fetch());
    const auto t0 = std::chrono::steady_clock::now();
    p.stop();
    const auto took = std::chrono::steady_clock::now() - t0;
    CHECK(took < 5s);  // a generous bound: the request would otherwise hang for ever
    CHECK_FALSE(p.running());
    CHECK(r.take_errors().empty());  // a cancel caused by stop() is not an error
}

TEST_CASE("poller thread: stop() from inside a handler ends the thread", "[poller][thread]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("1", {ev("A"), ev("B")}));
    manual_clock clock;
    recorder r;
    azure_poller* self = nullptr;
    auto h = r.handlers();
    std::promise<void> stopped;
    h.on_prepare = [&](const change& c, approval_handle) {
        r.add("prepare:" + c.event.id);
        if (c.event.id == "A") {
            self->stop();  // must not deadlock, must not join itself
            stopped.set_value();
        }
    };
    azure_poller p(fake::azure_client(s), h, poller_options{}, clock);
    self = &p;
    p.start();
    REQUIRE(stopped.get_future().wait_for(10s) == std::future_status::ready);
    // The thread ends by itself once the handler returns (bounded spin, a safety net only).
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (p.running() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    CHECK_FALSE(p.running());
    p.stop();  // joins
    CHECK(r.take() == strings{"prepare:A"});
    CHECK(s->fetch_count() == 1);
    // It can start again and goes on from where it stopped.
    REQUIRE(p.start().has_value());
    REQUIRE(clock.wait_for_sleepers(1));
    p.stop();
    CHECK(r.take() == strings{"prepare:B"});
}

TEST_CASE("poller thread: the destructor stops it, start twice is refused, poll_once is refused", "[poller][thread]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("1", {}));
    manual_clock clock;
    {
        azure_poller p(fake::azure_client(s), {}, poller_options{}, clock);
        REQUIRE(p.start().has_value());
        auto again = p.start();
        REQUIRE_FALSE(again.has_value());
        CHECK(again.error().code == errc::invalid_argument);
        auto once = p.poll_once();
        REQUIRE_FALSE(once.has_value());
        CHECK(once.error().code == errc::invalid_argument);
        REQUIRE(clock.wait_for_sleepers(1));
    }
    CHECK(clock.sleepers() == 0);
}

TEST_CASE("poller thread: errors between polls are reported and the thread goes on", "[poller][thread]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("1", {ev("A")}));
    manual_clock clock;
    recorder r;
    azure_poller p(fake::azure_client(s), r.handlers(), poller_options{}, clock);
    p.start();
    REQUIRE(clock.wait_for_sleepers(1));
    s->fail_next(forewarn::error(errc::http_status, "busy", 503));
    REQUIRE(clock.advance_and_wait(1s));
    REQUIRE(clock.advance_and_wait(1s));
    CHECK(s->fetch_count() == 3);
    CHECK(r.take() == strings{"prepare:A"});
    auto errors = r.take_errors();
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].http_status == 503);
}

TEST_CASE("poller thread: GCE uses hanging GETs, no fixed sleep", "[poller][thread]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("e1/p1", {}, cloud::gce));
    manual_clock clock;
    recorder r;
    gce_poller p(fake::gce_client(s), r.handlers(), poller_options{}, clock);
    p.start();
    REQUIRE(s->wait_in_fetch());  // the first hanging GET after the first fetch
    event m;
    m.id = "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE";
    m.type = event_type::live_migrate;
    m.status = event_status::scheduled;
    {
        std::lock_guard<std::mutex> lock(s->mutex);
        s->in_fetch = false;
    }
    s->set(doc("e2/p1", {m}, cloud::gce));  // the clock never moves: the change alone wakes it
    REQUIRE(s->wait_in_fetch());
    p.stop();
    CHECK(r.take() == strings{"prepare:" + m.id});
    CHECK(clock.sleeps() == 0);
    {
        std::lock_guard<std::mutex> lock(s->mutex);
        CHECK(s->fetches == 1);
        CHECK(s->waits >= 2);
    }
}

TEST_CASE("poller thread: a GCE error pauses on the clock before the next hanging GET", "[poller][thread]") {
    auto s = std::make_shared<fake::service>();
    s->set(doc("e1/p1", {}, cloud::gce));
    s->fail_next(forewarn::error(errc::http_status, "maintenance", 503));
    manual_clock clock;
    recorder r;
    gce_poller p(fake::gce_client(s), r.handlers(), poller_options{}, clock);
    p.start();
    REQUIRE(clock.wait_for_sleepers(1));  // the first fetch failed: it waits, it does not spin
    CHECK(s->fetch_count() == 1);
    clock.advance(1s);
    REQUIRE(s->wait_in_fetch());
    p.stop();
    CHECK(s->fetch_count() == 2);
    CHECK(r.take_errors().size() == 1);
}
