// SPDX-License-Identifier: MIT
// A GCE upcoming-maintenance window started early through the public API: a poller over the GCE
// client against the emulated metadata server and Compute (in-process). A window that can be
// rescheduled gets one performMaintenance once the handler says ready, and then shows as started;
// one that cannot gets none; a live migration is never approvable; a 403 is an error in Google's
// words; the token's scope is checked.
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>

#include "catch.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace test_gce_perform_maintenance_simulated {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;
using forewarn::approval_handle;
using forewarn::approval_state;
using forewarn::testing::scenario;
using forewarn::testing::simulated_transport;
using client = forewarn::gce::basic_metadata_client<simulated_transport>;

namespace {

std::string window(bool can_reschedule, const char* status = "PENDING") {
    return std::string(R"({"can_reschedule":")") + (can_reschedule ? "true" : "false") +
           R"(","maintenance_reasons":["PLANNED_UPDATE"],"maintenance_status":")" + status +
           R"(","type":"SCHEDULED","window_start_time":"2026-12-03T10:00:00Z","window_end_time":"2026-12-03T14:00:00Z"})";
}

struct world {
    std::shared_ptr<scenario> s = std::make_shared<scenario>();
    std::mutex m;
    std::vector<std::string> seen;
    std::vector<forewarn::error> errors;
    bool ready = true;

    client make() {
        forewarn::gce::client_options o;
        o.endpoint = "http://169.254.169.254";
        o.rate_limit = false;
        o.retry.initial_backoff = 1ms;
        o.retry.max_backoff = 2ms;
        o.compute_endpoint = "http://169.254.169.254";  // the emulator answers Compute at /compute/v1/
        return client(o, simulated_transport(s));
    }
    forewarn::poller_handlers handlers() {
        forewarn::poller_handlers h;
        h.on_prepare = [this](const forewarn::change& c, approval_handle a) {
            std::lock_guard<std::mutex> lock(m);
            seen.push_back("prepare " + c.event.id + (c.event.approvable == true ? " approvable" : ""));
            if (ready) a.ready();
        };
        h.on_started = [this](const forewarn::change& c) {
            std::lock_guard<std::mutex> lock(m);
            seen.push_back("started " + c.event.id);
        };
        h.on_error = [this](const forewarn::error& e) {
            std::lock_guard<std::mutex> lock(m);
            errors.push_back(e);
        };
        return h;
    }
};

}  // namespace

TEST_CASE("GCE performMaintenance: a window that can be rescheduled is started once, after ready, and shows as started",
          "[gce][emulator][approve]") {
    world w;
    REQUIRE(w.s->set_gce_upcoming(window(true)));
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.poll_once());  // the window, ready in the handler: one performMaintenance
    const auto calls = w.s->gce_compute_calls();
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].path == "/compute/v1/projects/forewarn-test/zones/europe-west1-b/instances/vm0/performMaintenance");
    CHECK(calls[0].token_valid);
    CHECK(calls[0].status == 200);
    CHECK(calls[0].request_id.size() == 36);  // a UUID
    CHECK(p.approval("upcoming-maintenance").status().state == approval_state::approved);
    REQUIRE(p.poll_once());  // the notice now says ONGOING
    CHECK(w.seen == std::vector<std::string>{"prepare upcoming-maintenance approvable", "started upcoming-maintenance"});
    CHECK(w.s->gce_compute_calls().size() == 1);
    CHECK(w.errors.empty());
}

TEST_CASE("GCE performMaintenance: a window that cannot be rescheduled, and a live migration, are never approved",
          "[gce][emulator][approve]") {
    world w;
    REQUIRE(w.s->set_gce_upcoming(window(false)));
    w.s->set_gce("instance/maintenance-event", "MIGRATE_ON_HOST_MAINTENANCE");
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.poll_once());
    REQUIRE(p.poll_once());
    CHECK(w.s->gce_compute_calls().empty());
    for (const char* id : {"upcoming-maintenance", "maintenance-event:MIGRATE_ON_HOST_MAINTENANCE"}) {
        INFO(id);
        const auto st = p.approval(id).status();
        CHECK(st.state == approval_state::not_approved);
        CHECK(st.why == "its source cannot approve this event");
    }
    CHECK(w.errors.empty());
}

TEST_CASE("GCE performMaintenance: a 503 is sent again within the same approval, with the same request id, and accepted",
          "[gce][emulator][approve]") {
    world w;
    REQUIRE(w.s->set_gce_upcoming(window(true)));
    w.s->gce_compute_fault(503);
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.poll_once());
    const auto calls = w.s->gce_compute_calls();
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].status == 503);
    CHECK(calls[1].status == 200);
    CHECK(calls[0].request_id == calls[1].request_id);
    CHECK(p.approval("upcoming-maintenance").status().state == approval_state::approved);
}

TEST_CASE("GCE performMaintenance: a 403 is an error in Google's words on the event, tried again with the same request id",
          "[gce][emulator][approve]") {
    world w;
    REQUIRE(w.s->set_gce_upcoming(window(true)));
    w.s->gce_compute_fault(403);
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.poll_once());
    const auto st = p.approval("upcoming-maintenance").status();
    CHECK(st.state == approval_state::failed);
    CHECK(st.error.http_status == 403);
    CHECK(st.error.message ==
          "Compute performMaintenance: 403 Required 'compute.instances.performMaintenance' permission for "
          "'projects/forewarn-test/zones/europe-west1-b/instances/vm0' (forbidden)");
    REQUIRE_FALSE(w.errors.empty());
    p.approve_due();  // tried again: accepted now
    const auto calls = w.s->gce_compute_calls();
    REQUIRE(calls.size() == 2);
    CHECK(calls[1].status == 200);
    CHECK(calls[0].request_id == calls[1].request_id);  // one approval, one request id
    CHECK(p.approval("upcoming-maintenance").status().state == approval_state::approved);
}

TEST_CASE("GCE performMaintenance: a token without the compute scope is refused, and perform_maintenance off sends nothing",
          "[gce][emulator][approve]") {
    world w;
    REQUIRE(w.s->set_gce_upcoming(window(true)));
    w.s->set_gce("instance/service-accounts/default/scopes",
                 "https://www.googleapis.com/auth/devstorage.read_only\nhttps://www.googleapis.com/auth/logging.write\n");
    forewarn::poller<client> p(w.make(), w.handlers());
    REQUIRE(p.poll_once());
    const auto st = p.approval("upcoming-maintenance").status();
    CHECK(st.state == approval_state::failed);
    CHECK(st.error.message == "Compute performMaintenance: 403 Request had insufficient authentication scopes. "
                              "(insufficientPermissions)");

    world off;
    REQUIRE(off.s->set_gce_upcoming(window(true)));
    auto o = forewarn::gce::client_options{};
    o.endpoint = "http://169.254.169.254";
    o.rate_limit = false;
    o.perform_maintenance = false;
    forewarn::poller<client> q(client(o, simulated_transport(off.s)), off.handlers());
    REQUIRE(q.poll_once());
    CHECK(off.s->gce_compute_calls().empty());
    CHECK(q.approval("upcoming-maintenance").status().why == "this source cannot approve");
}

}  // namespace test_gce_perform_maintenance_simulated
