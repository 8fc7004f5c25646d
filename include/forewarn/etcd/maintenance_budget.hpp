// SPDX-License-Identifier: MIT
#pragma once

// A fleet-wide maintenance budget on etcd: at most K members of a group in maintenance at once.
// An approval_coordinator (coordinator.hpp) that a poller takes through poller_options::coordinator.
// docs/fleet.md has the guarantees and where they end.
//
// Keys, under `<key_prefix>fleet/<group>/` (member names percent-encoded):
//   members/<name>  this VM's published view: {"member","slot","updated","events":[...]}
//   slots/<name>    this VM's place in the budget: {"member","state","event","since"}
// Both are attached to the member's lease (TTL above the expected downtime), so a slot outlives a
// reboot and etcd frees it when the VM never returns. Slots are served in the order their keys
// were created (create_revision); a slot is taken by a transaction that holds only if nothing in
// slots/ changed since the read it was decided on, so K is never exceeded by two members deciding
// at once. A member started by the platform without a slot is counted anyway ("forced").

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/poller/coordinator.hpp>
#include <forewarn/transport/default.hpp>
#include <forewarn/detail/event_json.hpp>
#include <forewarn/detail/worker.hpp>
#include <forewarn/etcd/client.hpp>
#include <forewarn/fleet.hpp>
#include <forewarn/json.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace etcd {

struct budget_options {
    client_options etcd;                ///< endpoints, auth, timeouts
    std::string group;                  ///< the group of VMs that share the budget (required)
    std::size_t max_in_maintenance = 1;  ///< K: members in maintenance at once
    /// The member's lease: a slot outlives a reboot shorter than this, and is freed this long
    /// after a VM that never comes back. Choose it above the expected downtime.
    std::chrono::seconds lease_ttl{900};
    /// How long a slot is kept after the last event's recover (the service catching up).
    std::chrono::seconds settle_time{0};
    std::string key_prefix = "forewarn/";
    /// How often a waiting member reads the queue again.
    std::chrono::milliseconds poll_interval{std::chrono::seconds(1)};
    /// Called (from the budget's own thread) when this VM's slot changes: for logs and metrics.
    std::function<void(const slot_change&)> on_slot_change;
};

template <class Transport>
class basic_maintenance_budget final : public approval_coordinator {
public:
    explicit basic_maintenance_budget(budget_options options, Transport transport = Transport())
        : options_(std::move(options)), client_(options_.etcd, transport), view_client_(options_.etcd, transport),
          signal_(std::make_shared<detail::wake_signal>()), worker_(signal_) {}
    ~basic_maintenance_budget() override { stop(); }

    basic_maintenance_budget(const basic_maintenance_budget&) = delete;
    basic_maintenance_budget& operator=(const basic_maintenance_budget&) = delete;

    /// A configuration that can never work (no endpoint, no group, K of 0, a TTL under 10 s).
    result<void> validate() const {
        if (auto v = client_.validate(); !v) return v;
        if (options_.group.empty()) return error(errc::invalid_argument, "the fleet budget needs a group name");
        if (options_.max_in_maintenance == 0) return error(errc::invalid_argument, "the fleet budget's maximum must be at least 1");
        if (options_.lease_ttl < std::chrono::seconds(10))
            return error(errc::invalid_argument, "the fleet lease TTL must be at least 10 s");
        return {};
    }

    result<void> start(const coordinator_context& context) override {
        if (auto v = validate(); !v) return v;
        stop();
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            ctx_ = context;
            self_key_ = detail::encode_key_part(context.self);
            observed_ = false;
        }
        client_.reset();
        auto r = worker_.start(ctx_.clock, [this] { run(); }, [this] { client_.cancel(); });
        if (!r) return error(errc::unknown, "could not start the fleet budget's thread: " + r.error().message);
        return {};
    }

    /// Ends the budget's thread. The slot and the lease stay in etcd: a restart finds them.
    void stop() noexcept override { worker_.stop(); }

    void observe(const std::vector<local_event>& events) override {
        bool changed = false;
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            changed = !same(events, local_);
            local_ = events;
            changed = changed || !observed_;
            observed_ = true;
            dirty_ = dirty_ || changed;
            // Wanted ids that are no longer waiting for approval stop asking.
            wanted_.erase(std::remove_if(wanted_.begin(), wanted_.end(),
                                         [&](const std::string& id) {
                                             return std::none_of(events.begin(), events.end(), [&](const local_event& le) {
                                                 return le.event.id == id && !le.approved &&
                                                        le.event.status == event_status::scheduled;
                                             });
                                         }),
                          wanted_.end());
        }
        if (changed) signal_->notify_all();
    }

    result<bool> admit(const event& e) override {
        std::unique_lock<std::mutex> lock(signal_->mutex);
        if (std::find(wanted_.begin(), wanted_.end(), e.id) == wanted_.end()) {
            wanted_.push_back(e.id);
            dirty_ = true;
            lock.unlock();
            signal_->notify_all();
            lock.lock();
        }
        const auto now = ctx_.clock.now();
        if ((slot_ == slot_state::holding || slot_ == slot_state::forced) && lease_valid(now)) return true;
        if (last_error_) return *last_error_;
        return false;
    }

    std::string save_state() const override {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        return lease_id_ != 0 ? std::to_string(lease_id_) : std::string();
    }
    void load_state(std::string_view saved) override {
        std::int64_t id = 0;
        for (const char c : saved) {
            if (c < '0' || c > '9' || id > (INT64_MAX - 9) / 10) return;
            id = id * 10 + (c - '0');
        }
        std::lock_guard<std::mutex> lock(signal_->mutex);
        if (lease_id_ == 0) saved_lease_ = id;
    }

    /// This VM's slot as the budget last saw it in etcd.
    slot_state slot() const {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        return slot_;
    }
    /// The lease that holds this VM's keys (0 before the first grant).
    std::int64_t lease_id() const {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        return lease_id_;
    }

    /// The group as its members last published it (for handlers: move a primary to a replica
    /// that is not about to go down too). Any thread; one etcd read.
    result<std::vector<fleet_member>> fleet() {
        std::lock_guard<std::mutex> lock(view_mutex_);
        auto r = view_client_.range_prefix(group_prefix() + "members/");
        if (!r) return r.error();
        std::vector<fleet_member> out;
        for (const auto& kv : r->kvs) {
            auto m = parse_member(kv.value);
            if (!m) continue;  // a value some other writer put there: not a member
            out.push_back(std::move(*m));
        }
        return out;
    }

    const budget_options& options() const noexcept { return options_; }

private:
    std::string group_prefix() const { return options_.key_prefix + "fleet/" + detail::encode_key_part(options_.group) + "/"; }
    std::string slot_key() const { return group_prefix() + "slots/" + self_key_; }
    std::string member_key() const { return group_prefix() + "members/" + self_key_; }

    static bool same(const std::vector<local_event>& a, const std::vector<local_event>& b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a[i].event.id != b[i].event.id || a[i].event.status != b[i].event.status ||
                a[i].approved != b[i].approved || a[i].ready != b[i].ready)
                return false;
        return true;
    }

    // Holding a slot counts only while the lease that carries it is surely alive.
    bool lease_valid(clock::time_point now) const {
        return lease_id_ != 0 && now < lease_valid_until_;
    }

    // The budget's thread: every etcd exchange happens here, never on the poller's thread.
    void run() {
        auto backoff = std::chrono::milliseconds(500);
        for (;;) {
            clock::time_point next;
            if (worker_.stop_requested()) break;
            auto r = step();
            const auto now = ctx_.clock.now();
            {
                std::lock_guard<std::mutex> lock(signal_->mutex);
                if (!r) {
                    if (r.error().code != errc::cancelled) last_error_ = r.error();
                    next = now + backoff;
                    backoff = std::min(backoff * 2, std::chrono::milliseconds(std::chrono::seconds(5)));
                } else {
                    last_error_.reset();
                    backoff = std::chrono::milliseconds(500);
                    next = *r;
                }
            }
            if (!r && r.error().code != errc::cancelled && ctx_.log.enabled(log_level::warn))
                ctx_.log(log_level::warn, "fleet budget: " + r.error().describe(), r.error().url);
            std::unique_lock<std::mutex> lock(signal_->mutex);
            ctx_.clock.wait_until(signal_, lock, next, [this] { return worker_.stop_requested_locked() || dirty_; });
        }
    }

    // One round: the lease, the slot, the published view. Returns when to come back.
    result<clock::time_point> step() {
        std::vector<local_event> local;
        std::vector<std::string> wanted;
        std::int64_t saved_lease = 0;
        bool observed = false;
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            observed = observed_;
            local = local_;
            wanted = wanted_;
            saved_lease = saved_lease_;
            dirty_ = false;
        }
        auto now = ctx_.clock.now();
        const auto ttl = options_.lease_ttl;
        // 1. The lease: adopt the one this VM had (state file, or the lease on its own keys), or grant one.
        if (lease_id_ == 0) {
            if (auto r = adopt_lease(saved_lease); !r) return r.error();
        }
        if (lease_id_ == 0) {
            auto g = client_.grant(ttl.count());
            if (!g) return g.error();
            if (g->ttl <= 0) return error(errc::invalid_document, "etcd granted a lease without a TTL");
            set_lease(g->id, ctx_.clock.now() + std::chrono::seconds(g->ttl));
            next_keepalive_ = ctx_.clock.now() + ttl / 3;
        } else if (now >= next_keepalive_) {
            auto k = client_.keepalive(lease_id_);
            if (!k && k.error().message.find("lease not found") == std::string::npos) return k.error();
            if (!k || k->ttl <= 0) {  // expired while we could not reach etcd: our keys went with it
                lost_lease();
                return ctx_.clock.now();
            }
            set_lease(lease_id_, ctx_.clock.now() + std::chrono::seconds(k->ttl));
            next_keepalive_ = ctx_.clock.now() + ttl / 3;
        }
        // Until the poller has told what is on this VM (its first document since this start), a
        // slot kept from before a restart is neither released nor published as empty.
        if (!observed) return next_keepalive_;
        // 2. The slot.
        const bool in_maintenance = detail::in_maintenance(local, ctx_.self);
        const bool started = detail::any_started(local, ctx_.self);
        slot_state slot = current_slot();
        std::optional<clock::time_point> come_back;
        if (started && slot != slot_state::holding && slot != slot_state::forced) {
            // Down all the same: counted, beyond K if need be.
            if (auto r = write_slot(slot_state::forced, {}); !r) return r.error();
        } else if (!wanted.empty() && slot == slot_state::none) {
            if (auto r = enqueue(wanted.front()); !r) return r.error();
        }
        slot = current_slot();
        if (slot == slot_state::waiting) {
            if (wanted.empty() && !in_maintenance) {
                if (auto r = release(); !r) return r.error();
            } else {
                auto r = try_take(wanted.empty() ? std::string() : wanted.front());
                if (!r) return r.error();
                if (!*r) come_back = ctx_.clock.now() + options_.poll_interval;
            }
        } else if ((slot == slot_state::holding || slot == slot_state::forced) && wanted.empty() && !in_maintenance) {
            if (!release_at_) release_at_ = ctx_.clock.now() + options_.settle_time;
            if (ctx_.clock.now() >= *release_at_) {
                if (auto r = release(); !r) return r.error();
            } else {
                come_back = *release_at_;
            }
        } else {
            release_at_.reset();
        }
        // 3. The view others read.
        if (auto r = publish(local); !r) return r.error();
        auto next = next_keepalive_;
        if (come_back && *come_back < next) next = *come_back;
        return next;
    }

    result<void> adopt_lease(std::int64_t saved) {
        std::vector<std::int64_t> candidates;
        if (saved != 0) candidates.push_back(saved);
        for (const auto& key : {slot_key(), member_key()}) {
            auto r = client_.range(key);
            if (!r) return r.error();
            for (const auto& kv : r->kvs)
                if (kv.lease != 0 && std::find(candidates.begin(), candidates.end(), kv.lease) == candidates.end())
                    candidates.push_back(kv.lease);
        }
        for (const auto id : candidates) {
            auto t = client_.time_to_live(id);
            if (!t) return t.error();
            if (t->ttl > 0) {
                set_lease(id, ctx_.clock.now() + std::chrono::seconds(t->ttl));
                next_keepalive_ = ctx_.clock.now();  // renew at once
                if (ctx_.log.enabled(log_level::info))
                    ctx_.log(log_level::info, "fleet budget: kept lease " + std::to_string(id) + " from before the restart", {}, {});
                return read_own_slot();
            }
        }
        return {};
    }

    // Reads this VM's slot key (after adopting a lease): keeps a slot it held before a restart.
    result<void> read_own_slot() {
        auto r = client_.range(slot_key());
        if (!r) return r.error();
        if (r->kvs.empty() || r->kvs.front().lease != lease_id_) return {};
        const auto& kv = r->kvs.front();
        auto state = parse_slot_state(kv.value);
        own_create_ = kv.create_revision;
        set_slot(state, {});
        return {};
    }

    void set_lease(std::int64_t id, clock::time_point valid_until) {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        lease_id_ = id;
        // A margin: never count on the last seconds of a lease.
        const auto margin = std::min<clock::duration>(options_.lease_ttl / 3, std::chrono::seconds(10));
        lease_valid_until_ = valid_until - margin;
        saved_lease_ = 0;
    }

    void lost_lease() {
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            lease_id_ = 0;
        }
        own_create_ = 0;
        published_.clear();
        set_slot(slot_state::none, {});
        if (ctx_.log.enabled(log_level::warn))
            ctx_.log(log_level::warn, "fleet budget: the lease expired while etcd was out of reach; asking again", {}, {});
    }

    slot_state current_slot() const {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        return slot_;
    }

    void set_slot(slot_state s, const std::string& event_id) {
        slot_state from;
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            from = slot_;
            slot_ = s;
            if (s != slot_state::holding && s != slot_state::forced) release_at_.reset();
        }
        if (from == s) return;
        if ((s == slot_state::holding || s == slot_state::forced) && ctx_.wake) ctx_.wake();
        if (ctx_.log.enabled(log_level::info))
            ctx_.log(log_level::info, "fleet budget: slot " + std::string(to_string(from)) + " -> " + std::string(to_string(s)) +
                                          " (group " + options_.group + ")", {}, event_id);
        if (options_.on_slot_change) {
            slot_change c{options_.group, ctx_.self, from, s, event_id};
            try {
                options_.on_slot_change(c);
            } catch (...) {
            }
        }
    }

    std::string slot_value(slot_state s, const std::string& event_id) const {
        detail::json_writer w(true);
        w.begin_object();
        w.key("member");
        w.string(ctx_.self);
        w.key("state");
        w.string(to_string(s));
        w.key("event");
        w.string(event_id);
        w.key("since");
        w.string(format_iso8601(ctx_.clock.wall_now()));
        w.end_object();
        return w.str();
    }

    static slot_state parse_slot_state(std::string_view value) {
        auto doc = detail::parse_json(value);
        if (!doc || !doc->IsObject()) return slot_state::none;
        const auto* s = detail::json_member(*doc, "state");
        return s && s->IsString() ? slot_state_from_string(detail::json_string_view(*s)) : slot_state::none;
    }

    // Queue for a slot: the key is created once (a restart finds it and never makes a second).
    result<void> enqueue(const std::string& event_id) {
        txn_request t;
        t.compares.push_back({compare::target::create, compare::op::equal, slot_key(), {}, 0, {}});
        t.success.push_back({operation::kind::put, slot_key(), slot_value(slot_state::waiting, event_id), lease_id_});
        auto r = client_.txn(t);
        if (!r) return r.error();
        auto own = client_.range(slot_key());
        if (!own) return own.error();
        if (own->kvs.empty()) return error(errc::invalid_document, "etcd lost this VM's slot key just written");
        own_create_ = own->kvs.front().create_revision;
        set_slot(r->succeeded ? slot_state::waiting : parse_slot_state(own->kvs.front().value), event_id);
        return {};
    }

    // Reads the queue and takes a slot if the rule allows, in one transaction that fails if the
    // queue changed since the read. true: holding now.
    result<bool> try_take(const std::string& event_id) {
        const std::string slots = group_prefix() + "slots/";
        for (int attempt = 0; attempt < 5; ++attempt) {
            auto r = client_.range_prefix(slots);
            if (!r) return r.error();
            std::vector<detail::slot_entry> entries;
            bool mine = false;
            for (const auto& kv : r->kvs) {
                const std::string member = kv.key.substr(slots.size());
                if (member == self_key_) mine = kv.create_revision == own_create_;
                entries.push_back({member, parse_slot_state(kv.value), kv.create_revision});
            }
            if (!mine) {  // our key went (the lease expired, someone deleted it): queue again
                own_create_ = 0;
                set_slot(slot_state::none, {});
                return false;
            }
            if (!detail::slot_admits(entries, self_key_, options_.max_in_maintenance)) return false;
            txn_request t;
            t.compares.push_back({compare::target::mod, compare::op::less, slots, prefix_end(slots), r->revision + 1, {}});
            t.compares.push_back({compare::target::create, compare::op::equal, slot_key(), {}, own_create_, {}});
            t.success.push_back({operation::kind::put, slot_key(), slot_value(slot_state::holding, event_id), lease_id_});
            auto done = client_.txn(t);
            if (!done) return done.error();
            if (done->succeeded) {
                set_slot(slot_state::holding, event_id);
                return true;
            }
        }
        return false;  // the queue kept moving: read it again at the next round
    }

    result<void> write_slot(slot_state s, const std::string& event_id) {
        auto r = client_.put(slot_key(), slot_value(s, event_id), lease_id_);
        if (!r) return r.error();
        auto own = client_.range(slot_key());
        if (!own) return own.error();
        if (!own->kvs.empty()) own_create_ = own->kvs.front().create_revision;
        set_slot(s, event_id);
        return {};
    }

    result<void> release() {
        auto r = client_.remove(slot_key());
        if (!r) return r.error();
        own_create_ = 0;
        set_slot(slot_state::none, {});
        return {};
    }

    result<void> publish(const std::vector<local_event>& local) {
        const slot_state slot = current_slot();
        auto write = [&](const std::string* updated) {
            detail::json_writer w(true);
            w.begin_object();
            w.key("member");
            w.string(ctx_.self);
            w.key("slot");
            w.string(to_string(slot));
            if (updated) {
                w.key("updated");
                w.string(*updated);
            }
            w.key("events");
            w.begin_array();
            for (const auto& le : local) {
                if (!detail::concerns(le.event, ctx_.self)) continue;  // another VM's: its own member publishes it
                w.begin_object();
                detail::write_event_members(w, le.event);
                w.end_object();
            }
            w.end_array();
            w.end_object();
            return w.str();
        };
        const std::string body = write(nullptr);  // without the time: publish only what changed
        if (body == published_) return {};
        const std::string now = format_iso8601(ctx_.clock.wall_now());
        auto r = client_.put(member_key(), write(&now), lease_id_);
        if (!r) return r.error();
        published_ = body;
        return {};
    }

    static result<fleet_member> parse_member(std::string_view value) {
        auto doc = detail::parse_json(value);
        if (!doc) return doc.error();
        if (!doc->IsObject()) return detail::json_type_error("", "an object", *doc);
        fleet_member m;
        const auto* name = detail::json_member(*doc, "member");
        if (!name || !name->IsString()) return detail::json_shape_error("member", "missing");
        m.name = std::string(detail::json_string_view(*name));
        if (const auto* s = detail::json_member(*doc, "slot"); s && s->IsString())
            m.slot = slot_state_from_string(detail::json_string_view(*s));
        if (const auto* u = detail::json_member(*doc, "updated"); u && u->IsString())
            m.updated = std::string(detail::json_string_view(*u));
        if (const auto* evs = detail::json_member(*doc, "events"); evs && evs->IsArray()) {
            for (rapidjson::SizeType i = 0; i < evs->Size(); ++i) {
                auto e = detail::read_event((*evs)[i], "events[" + std::to_string(i) + "].");
                if (!e) return e.error();
                m.events.push_back(std::move(*e));
            }
        }
        return m;
    }

    budget_options options_;
    basic_client<Transport> client_;       // the budget's thread only
    basic_client<Transport> view_client_;  // fleet(), under view_mutex_
    std::mutex view_mutex_;
    std::shared_ptr<detail::wake_signal> signal_;
    detail::worker worker_;  // the budget's thread (its stop flag under signal_->mutex)

    // Under signal_->mutex:
    coordinator_context ctx_;
    std::string self_key_;
    bool dirty_ = false;
    bool observed_ = false;  // observe() was called since start()
    std::vector<local_event> local_;
    std::vector<std::string> wanted_;
    slot_state slot_ = slot_state::none;
    std::int64_t lease_id_ = 0;
    std::int64_t saved_lease_ = 0;
    clock::time_point lease_valid_until_{};
    std::optional<error> last_error_;
    std::optional<clock::time_point> release_at_;

    // The budget's thread only:
    std::int64_t own_create_ = 0;
    clock::time_point next_keepalive_{};
    std::string published_;
};

/// The budget over the default transport (WinHTTP on Windows, libcurl elsewhere).
using maintenance_budget = basic_maintenance_budget<default_transport>;

}  // namespace etcd
FOREWARN_END_NAMESPACE
