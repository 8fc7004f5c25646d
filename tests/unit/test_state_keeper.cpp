// SPDX-License-Identifier: MIT
// The poller's state keeping (detail/poller/state_keeper.hpp): read once, written when something
// changed, a failed write tried again.
#include <forewarn/detail/poller/state_keeper.hpp>

#include "catch.hpp"

#include <memory>
#include <string>
#include <vector>

namespace test_state_keeper {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::errc;
using forewarn::error;
using forewarn::logger;
using forewarn::poller_state;
using forewarn::result;
using forewarn::state_store;
using forewarn::detail::state_keeper;

namespace {

struct memory_store : state_store {
    std::optional<error> load_error;   // else the saved state
    std::optional<error> save_error;
    poller_state saved;
    int loads = 0, saves = 0;

    result<poller_state> load() override {
        ++loads;
        if (load_error) return *load_error;
        return saved;
    }
    result<void> save(const poller_state& st) override {
        ++saves;
        if (save_error) return *save_error;
        saved = st;
        return {};
    }
    std::string where() const override { return "memory"; }
};

struct reports {
    std::vector<error> errors;
    void operator()(const error& e) { errors.push_back(e); }
};

}  // namespace

TEST_CASE("state keeper: the saved state is read once - none saved yet is no error, an unreadable one is reported",
          "[state_keeper]") {
    auto store = std::make_shared<memory_store>();
    store->saved.delivered.incarnation = "7";
    std::vector<std::string> logged;
    logger log;
    log.sink = [&](const forewarn::log_record& r) { logged.emplace_back(r.message); };
    reports rep;
    {
        state_keeper k(store);
        auto st = k.load(log, [&](const error& e) { rep(e); });
        REQUIRE(st);
        CHECK(st->delivered.incarnation == "7");
        CHECK_FALSE(k.load(log, [&](const error& e) { rep(e); }));  // once
        CHECK(store->loads == 1);
    }
    store->load_error = error(errc::not_found, "no file");
    {
        state_keeper k(store);
        CHECK_FALSE(k.load(log, [&](const error& e) { rep(e); }));
        CHECK(rep.errors.empty());
        REQUIRE(logged.size() == 1);
        CHECK(logged[0] == "no saved state at memory yet: starting with no events known");
    }
    store->load_error = error(errc::parse_error, "garbage");
    {
        state_keeper k(store);
        CHECK_FALSE(k.load(log, [&](const error& e) { rep(e); }));
        REQUIRE(rep.errors.size() == 1);
        CHECK(rep.errors[0].code == errc::parse_error);
        CHECK(rep.errors[0].message == "the saved state at memory is unreadable, starting with no events known: garbage");
    }
    state_keeper none(nullptr);
    CHECK_FALSE(none.load(log, [&](const error& e) { rep(e); }));
}

TEST_CASE("state keeper: written only when touched - a failed write is reported and tried again", "[state_keeper]") {
    auto store = std::make_shared<memory_store>();
    state_keeper k(store);
    reports rep;
    int snapshots = 0;
    auto snapshot = [&] {
        ++snapshots;
        poller_state st;
        st.delivered.incarnation = std::to_string(snapshots);
        return st;
    };
    k.save(snapshot, [&](const error& e) { rep(e); });
    CHECK(store->saves == 0);  // nothing changed
    CHECK(snapshots == 0);     // not even looked at

    k.touch();
    store->save_error = error(errc::io_error, "disk full");
    k.save(snapshot, [&](const error& e) { rep(e); });
    CHECK(store->saves == 1);
    REQUIRE(rep.errors.size() == 1);
    CHECK(rep.errors[0].message == "disk full");
    CHECK(k.dirty());

    store->save_error.reset();
    k.save(snapshot, [&](const error& e) { rep(e); });  // tried again without a new change
    CHECK(store->saves == 2);
    CHECK(store->saved.delivered.incarnation == "2");
    CHECK_FALSE(k.dirty());
    k.save(snapshot, [&](const error& e) { rep(e); });
    CHECK(store->saves == 2);
}

}  // namespace test_state_keeper
