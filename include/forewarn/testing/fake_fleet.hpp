// SPDX-License-Identifier: MIT
#pragma once

// An in-process fleet budget for users' unit tests: the same rule as etcd::maintenance_budget
// (fleet.hpp's slot_admits, served in request order, forced slots beyond K), decided at once in
// memory, with what a test wants to check afterwards (the most members ever in maintenance).
//
//   forewarn::testing::fake_fleet fleet(2);            // K = 2
//   forewarn::poller_options o;
//   o.coordinator = fleet.member();                    // one per poller; named by the poller's VM
//   ...
//   REQUIRE(fleet.max_in_maintenance_seen() <= 2);

#include <forewarn/config.hpp>
#include <forewarn/poller/coordinator.hpp>
#include <forewarn/fleet.hpp>
#include <forewarn/result.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

class fake_fleet {
public:
    explicit fake_fleet(std::size_t max_in_maintenance = 1, clock::duration settle_time = {})
        : shared_(std::make_shared<state>()) {
        shared_->max = max_in_maintenance;
        shared_->settle = settle_time;
    }

    /// A coordinator for one poller; it takes the poller's VM name when it starts.
    std::shared_ptr<approval_coordinator> member() { return std::make_shared<member_coordinator>(shared_); }

    /// Members holding a slot or forced into maintenance now.
    std::size_t in_maintenance() const {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        return shared_->busy();
    }
    /// The most members ever in maintenance at once.
    std::size_t max_in_maintenance_seen() const {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        return shared_->max_seen;
    }
    /// How many slots were taken (holding) over the test, and forced.
    std::size_t slots_taken() const {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        return shared_->taken;
    }
    slot_state slot_of(const std::string& member) const {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        const auto it = shared_->slots.find(member);
        return it == shared_->slots.end() ? slot_state::none : it->second.state;
    }
    /// The group's view: each started member's last published events.
    std::vector<fleet_member> view() const {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        std::vector<fleet_member> out;
        for (const auto& [name, events] : shared_->views) {
            fleet_member m;
            m.name = name;
            const auto it = shared_->slots.find(name);
            m.slot = it == shared_->slots.end() ? slot_state::none : it->second.state;
            m.events = events;
            out.push_back(std::move(m));
        }
        return out;
    }
    /// While set, every admit() fails as a coordinator cut off from its store does.
    void set_unreachable(bool unreachable) {
        std::lock_guard<std::mutex> lock(shared_->mutex);
        shared_->unreachable = unreachable;
    }

private:
    struct slot {
        slot_state state = slot_state::none;
        std::int64_t order = 0;
    };
    struct state {
        std::mutex mutex;
        std::size_t max = 1;
        clock::duration settle{};
        std::map<std::string, slot> slots;
        std::map<std::string, std::vector<event>> views;
        std::map<std::string, std::function<void()>> wakes;
        std::int64_t next_order = 1;
        std::size_t max_seen = 0;
        std::size_t taken = 0;
        bool unreachable = false;

        std::size_t busy() const {
            return static_cast<std::size_t>(std::count_if(slots.begin(), slots.end(), [](const auto& s) {
                return s.second.state == slot_state::holding || s.second.state == slot_state::forced;
            }));
        }
        std::vector<detail::slot_entry> entries() const {
            std::vector<detail::slot_entry> out;
            for (const auto& [name, s] : slots) out.push_back({name, s.state, s.order});
            return out;
        }
        void set(const std::string& name, slot_state to) {
            auto& s = slots[name];
            if (s.order == 0) s.order = next_order++;
            if (to == slot_state::holding) ++taken;
            s.state = to;
            max_seen = (std::max)(max_seen, busy());
        }
    };

    class member_coordinator final : public approval_coordinator {
    public:
        explicit member_coordinator(std::shared_ptr<state> s) : shared_(std::move(s)) {}

        result<void> start(const coordinator_context& context) override {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            ctx_ = context;
            shared_->wakes[ctx_.self] = context.wake;
            return {};
        }
        void stop() noexcept override {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            shared_->wakes.erase(ctx_.self);
        }
        void observe(const std::vector<local_event>& events) override {
            std::vector<std::function<void()>> to_wake;
            {
                std::lock_guard<std::mutex> lock(shared_->mutex);
                std::vector<event> published;
                for (const auto& le : events)
                    if (detail::concerns(le.event, ctx_.self)) published.push_back(le.event);
                shared_->views[ctx_.self] = std::move(published);
                const auto it = shared_->slots.find(ctx_.self);
                const slot_state now_state = it == shared_->slots.end() ? slot_state::none : it->second.state;
                if (detail::any_started(events, ctx_.self) && now_state != slot_state::holding &&
                    now_state != slot_state::forced)
                    shared_->set(ctx_.self, slot_state::forced);
                const bool wanted = std::any_of(events.begin(), events.end(), [&](const local_event& le) {
                    return le.event.status == event_status::scheduled && !le.approved &&
                           std::find(asked_.begin(), asked_.end(), le.event.id) != asked_.end();
                });
                if (it != shared_->slots.end() && !wanted && !detail::in_maintenance(events, ctx_.self)) {
                    const auto t = ctx_.clock.now();
                    if (it->second.state == slot_state::waiting || shared_->settle.count() == 0 ||
                        (release_at_ && t >= *release_at_)) {
                        shared_->slots.erase(it);
                        release_at_.reset();
                        for (const auto& [name, w] : shared_->wakes)
                            if (name != ctx_.self && w) to_wake.push_back(w);
                    } else if (!release_at_) {
                        release_at_ = t + shared_->settle;
                    }
                } else {
                    release_at_.reset();
                }
            }
            for (auto& w : to_wake) w();
        }
        result<bool> admit(const event& e) override {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            if (shared_->unreachable) return error(errc::transport, "the fake fleet is unreachable");
            if (std::find(asked_.begin(), asked_.end(), e.id) == asked_.end()) asked_.push_back(e.id);
            auto it = shared_->slots.find(ctx_.self);
            if (it == shared_->slots.end()) {
                shared_->set(ctx_.self, slot_state::waiting);
                it = shared_->slots.find(ctx_.self);
            }
            if (it->second.state == slot_state::holding || it->second.state == slot_state::forced) return true;
            if (!detail::slot_admits(shared_->entries(), ctx_.self, shared_->max)) return false;
            shared_->set(ctx_.self, slot_state::holding);
            return true;
        }

    private:
        std::shared_ptr<state> shared_;
        coordinator_context ctx_;
        std::vector<std::string> asked_;
        std::optional<clock::time_point> release_at_;
    };

    std::shared_ptr<state> shared_;
};

}  // namespace testing
FOREWARN_END_NAMESPACE
