// SPDX-License-Identifier: MIT
#pragma once

// A fleet-wide maintenance budget on etcd: at most K members of a group in maintenance at once.
// An approval_coordinator (coordinator.hpp) that a poller takes through poller_options::coordinator.
// docs/fleet.md has the guarantees and where they end.
//
// Keys, under `<key_prefix>fleet/<group>/` (member names percent-encoded):
//   members/<name>  this VM's published view: {"member","slot","updated","events":[...]}
//   queue/<name>    this VM waiting for a slot: {"member","state":"waiting","event","since"}
//   slots/<name>    this VM in maintenance: {"member","state","event","since"}, holding or forced
// All are attached to the member's lease (TTL above the expected downtime), so a slot outlives a
// reboot and etcd frees it when the VM never returns. Slots are served in the order the queue keys
// were created (create_revision); a slot is taken by a transaction that moves the member's key
// from queue/ to slots/ if that key is still the one the decision counted on, a decision made on
// what the member read after it queued (take_slot() says why that keeps K). Members joining the
// queue or deciding at once never make that transaction fail. A member started by the platform
// without a slot is counted anyway ("forced").
//
// A waiting member watches etcd (on a thread and a connection of its own) for what can let it in:
// one of the first K in the queue watches queue/ and slots/ and takes a slot as soon as one frees
// for it, any other watches the queue key of the member K places ahead (wait_turn() says why). A
// release so costs one request of the member it lets in, and reaches the first K and the member
// K places behind a key that went. Without a watch (a transport that cannot stream, etcd refusing it,
// budget_options::watch false) it reads the queue every poll_interval. A member at rest keeps
// only its lease alive: no watch, no reads. The watch's thread waits on the network,
// not on the poller's clock: under testing::manual_clock a member hears a release in real time,
// and wait_idle() may return before it has acted on it (the next step sees it).

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
    /// How often a waiting member reads the queue again when it cannot watch it.
    std::chrono::milliseconds poll_interval{std::chrono::seconds(1)};
    /// A waiting member watches the queue instead of reading it every poll_interval, where the
    /// transport can stream (libcurl; not WinHTTP yet) and etcd grants the watch.
    bool watch = true;
    /// The longest silence on a watch before the member reads the queue again and watches anew:
    /// how soon a stream that died without a word is noticed. etcd is asked for progress
    /// notifications, which it sends every 10 minutes unless its
    /// --experimental-watch-progress-notify-interval says more often; a quiet queue costs each
    /// waiting member one read per watch_idle.
    std::chrono::seconds watch_idle{60};
    /// Called (from the budget's own thread) when this VM's slot changes: for logs and metrics.
    std::function<void(const slot_change&)> on_slot_change;
};

template <class Transport>
class basic_maintenance_budget final : public approval_coordinator {
public:
    explicit basic_maintenance_budget(budget_options options, Transport transport = Transport())
        : options_(std::move(options)), client_(options_.etcd, transport), view_client_(options_.etcd, transport),
          watch_client_(options_.etcd, transport), signal_(std::make_shared<detail::wake_signal>()), worker_(signal_) {}
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
        auto r = worker_.start(ctx_.clock, [this] { run(); }, [this] {
            client_.cancel();
            watch_client_.cancel();
        });
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
    /// Watches of the queue started since this budget was made (each after a read of the queue).
    std::size_t watches_started() const {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        return watches_started_;
    }
    /// Whether this member is waiting on a watch of the queue that etcd has granted and that has
    /// not ended (false while it polls, holds a slot, or has nothing to ask).
    bool watching() const {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        return watch_created_ && !watch_ended_ && watch_live_;
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
    std::string queue_key() const { return group_prefix() + "queue/" + self_key_; }
    // The queue and the slots, read (and watched) as one range: [queue/, the end of slots/).
    // Nothing else of the group sorts between them.
    std::string queue_begin() const { return group_prefix() + "queue/"; }
    std::string queue_end() const { return prefix_end(group_prefix() + "slots/"); }
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
            ctx_.clock.wait_until(signal_, lock, next, [this] {
                return worker_.stop_requested_locked() || dirty_ || !watch_events_.empty() || watch_ended_;
            });
        }
        stop_watch();
    }

    // One round: the lease, the slot, the published view. Returns when to come back.
    result<clock::time_point> step() {
        std::vector<std::string> wanted;
        std::int64_t saved_lease = 0;
        bool observed = false;
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            observed = observed_;
            local_view_ = local_;
            wanted = wanted_;
            saved_lease = saved_lease_;
            dirty_ = false;
        }
        const std::vector<local_event>& local = local_view_;
        auto now = ctx_.clock.now();
        const auto ttl = options_.lease_ttl;
        queue_.fresh = false;
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
        if (slot != slot_state::waiting) stop_watch();
        if (slot == slot_state::waiting) {
            if (wanted.empty() && !in_maintenance) {
                stop_watch();
                if (auto r = release(); !r) return r.error();
            } else {
                auto r = wait_turn(wanted.empty() ? std::string() : wanted.front());
                if (!r) return r.error();
                come_back = *r;
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
        // 3. The view others read (a change of the slot went with the transaction that made it).
        if (auto r = publish(); !r) return r.error();
        auto next = next_keepalive_;
        if (come_back && *come_back < next) next = *come_back;
        return next;
    }

    result<void> adopt_lease(std::int64_t saved) {
        std::vector<std::int64_t> candidates;
        if (saved != 0) candidates.push_back(saved);
        for (const auto& key : {slot_key(), queue_key(), member_key()}) {
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

    // Reads this VM's keys (after adopting a lease): keeps a slot it held, or its place in the
    // queue, from before a restart. A `waiting` slots/ key (an older forewarn kept waiting members
    // there) is given up: the member queues again.
    result<void> read_own_slot() {
        auto r = client_.range(slot_key());
        if (!r) return r.error();
        if (!r->kvs.empty() && r->kvs.front().lease == lease_id_) {
            const auto state = parse_slot_state(r->kvs.front().value);
            if (state == slot_state::holding || state == slot_state::forced) {
                set_slot(state, {});
                return {};
            }
            if (auto gone = client_.remove(slot_key()); !gone) return gone.error();
        }
        auto q = client_.range(queue_key());
        if (!q) return q.error();
        if (q->kvs.empty() || q->kvs.front().lease != lease_id_) return {};
        own_create_ = q->kvs.front().create_revision;
        set_slot(slot_state::waiting, {});
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

    // Queue for a slot: the queue key is created once (a restart finds it and never makes a
    // second), and the queue is read in the same transaction, for wait_turn() to decide on at once.
    // Just queued, this member's key is the newest: the K + 1 newest queue keys are it and the K
    // ahead of it, all that the decision (at most K ahead count) and the watch need, so a storm's
    // burst of transactions each answers with K + 1 keys and slots/, not with the whole queue.
    result<void> enqueue(const std::string& event_id) {
        const auto k = static_cast<std::int64_t>(std::min<std::size_t>(options_.max_in_maintenance, 1u << 20));
        operation newest{operation::kind::range, queue_begin(), {}, 0, prefix_end(queue_begin()), /*keys_only=*/true};
        newest.limit = k + 1;
        newest.newest_first = true;
        const operation slots{operation::kind::range, group_prefix() + "slots/", {}, 0, queue_end(), /*keys_only=*/true};
        txn_request t;
        t.compares.push_back({compare::target::create, compare::op::equal, queue_key(), {}, 0, {}});
        t.compares.push_back({compare::target::create, compare::op::equal, slot_key(), {}, 0, {}});
        t.success.push_back({operation::kind::put, queue_key(), slot_value(slot_state::waiting, event_id), lease_id_});
        t.success.push_back(newest);
        t.success.push_back(slots);
        // Already queued or holding (from before a restart): the whole queue and slots/.
        t.failure.push_back({operation::kind::range, queue_begin(), {}, 0, queue_end(), /*keys_only=*/true});
        auto r = slot_txn(t, slot_state::waiting);
        if (!r) return r.error();
        if (r->ranges.size() != (r->succeeded ? 2u : 1u))
            return error(errc::invalid_document, "etcd's answer to the queue's transaction holds " +
                                                     std::to_string(r->ranges.size()) + " reads");
        for (std::size_t i = 1; i < r->ranges.size(); ++i)
            r->ranges.front().kvs.insert(r->ranges.front().kvs.end(), r->ranges[i].kvs.begin(), r->ranges[i].kvs.end());
        const auto& kvs = r->ranges.front().kvs;
        const auto own_slot = std::find_if(kvs.begin(), kvs.end(), [&](const key_value& kv) { return kv.key == slot_key(); });
        const auto own = std::find_if(kvs.begin(), kvs.end(), [&](const key_value& kv) { return kv.key == queue_key(); });
        if (!r->succeeded && own_slot != kvs.end()) {  // in maintenance already (written before a restart)
            set_slot(parse_slot_state(own_slot->value) == slot_state::forced ? slot_state::forced : slot_state::holding, event_id);
            return {};
        }
        if (own == kvs.end()) return error(errc::invalid_document, "etcd lost this VM's queue key just written");
        own_create_ = own->create_revision;
        keep_queue(r->ranges.front());
        set_slot(slot_state::waiting, event_id);
        return {};
    }

    // The queue and the slots as a read (a range, or a transaction's) found them: fresh until this
    // round ends. A slots/ key counts as busy whatever its state says, so the reads ask for the
    // keys alone.
    void keep_queue(const range_result& read) {
        queue_.entries.clear();
        queue_.revision = read.revision;
        queue_.valid = true;
        queue_.fresh = true;
        queue_.ahead_left = false;
        for (const auto& kv : read.kvs) queue_.add(kv, group_prefix(), self_key_);
    }

    // A waiting member's turn. It watches only what can let it in, so that a slot given back
    // wakes the members that may take it, not every waiting one (etcd's election recipe, for K
    // slots):
    //   - one of the first K in the queue watches the queue and the slots (every change): from its
    //     read and those changes it knows them as they are, and sends the take's txn as soon as a
    //     slot frees for it, no read first;
    //   - any other watches the deletion of the queue key of the member K places ahead of it:
    //     when that member took a slot or left, it reads the queue again and watches according to
    //     its new place. (Not the key just ahead: K slots freed together would then let the K
    //     members behind in one after another, each reading only once the one ahead took its slot.)
    // Nothing else changes what a member behind the first K waits for: members joining go behind
    // it, and a member ahead moving to slots/ counts the same. Without a watch, a fresh read
    // every poll_interval.
    // Returns when to come back: nothing while a watch runs (its news wake the budget's thread).
    using turn = std::optional<clock::time_point>;
    result<turn> wait_turn(const std::string& event_id) {
        const bool watching = watch_news();
        if (watching && !queue_.fresh && queue_.valid) {
            if (watch_.ahead.empty()) {  // among the first K: the queue and slots as the watch tells them
                if (!detail::slot_admits(queue_.entries, self_key_, options_.max_in_maintenance)) return turn{};
                auto taken = take_slot(event_id);
                if (!taken) return taken.error();
                if (*taken) return turn{};
            } else if (!queue_.ahead_left) {
                return turn{};  // the member ahead is still there
            }
        }
        auto r = try_take(event_id);
        if (!r) return r.error();
        if (*r) return turn{};
        if (current_slot() != slot_state::waiting) return turn(ctx_.clock.now() + options_.poll_interval);  // queue again
        const std::string ahead = queue_.place(self_key_, own_create_) < options_.max_in_maintenance
                                      ? std::string()
                                      : queue_.ahead_of(self_key_, own_create_, options_.max_in_maintenance);
        if (watching && ahead == watch_.ahead) return turn{};  // the same watch still serves
        if (start_watch(ahead, queue_.revision + 1)) return turn{};
        return turn(ctx_.clock.now() + options_.poll_interval);
    }

    // Reads the queue (unless this round's enqueue just did) and takes a slot if the rule allows,
    // in one transaction that fails if the queue changed since the read. true: holding now. Leaves
    // what it read in queue_.
    result<bool> try_take(const std::string& event_id) {
        for (int attempt = 0; attempt < 5; ++attempt) {
            if (!queue_.fresh) {
                auto r = client_.range(queue_begin(), queue_end(), /*keys_only=*/true);
                if (!r) return r.error();
                keep_queue(*r);
            }
            queue_.fresh = false;
            if (!queue_.mine(self_key_, own_create_)) {  // our key went (the lease expired, someone deleted it): queue again
                own_create_ = 0;
                queue_.valid = false;
                set_slot(slot_state::none, {});
                return false;
            }
            if (!detail::slot_admits(queue_.entries, self_key_, options_.max_in_maintenance)) return false;
            auto taken = take_slot(event_id);
            if (!taken || *taken) return taken;
        }
        return false;  // the queue kept moving: read it again at the next round
    }

    // The transaction that takes a slot: moves this VM's key from queue/ to slots/, only if the
    // queue key is still the one the decision counted on. Nothing else needs checking: the decision
    // was made on a read after this VM queued, and since then members can only have joined the
    // queue behind it, moved from the queue ahead of it to slots/ (counted the same), or left;
    // only a member forced into maintenance adds to the count, and it counts beyond K anyway
    // (docs/fleet.md). So members that decide at once never make each other's transaction fail.
    result<bool> take_slot(const std::string& event_id) {
        txn_request t;
        t.compares.push_back({compare::target::create, compare::op::equal, queue_key(), {}, own_create_, {}});
        t.success.push_back({operation::kind::put, slot_key(), slot_value(slot_state::holding, event_id), lease_id_});
        t.success.push_back({operation::kind::remove, queue_key(), {}, 0});
        auto done = slot_txn(t, slot_state::holding);
        if (!done) return done.error();
        if (!done->succeeded) return false;
        stop_watch();
        set_slot(slot_state::holding, event_id);
        return true;
    }

    // The queue as the last read tells it, with the changes the watch reported since (the budget's
    // thread only): queue/ keys as waiting entries in their order, slots/ keys as busy.
    struct watched_queue {
        std::vector<detail::slot_entry> entries;
        std::int64_t revision = 0;  // of the read `entries` come from
        bool valid = false;
        bool fresh = false;       // read in this round, nothing decided on it yet
        bool ahead_left = false;  // the watch saw the queue key ahead of this member deleted
        bool mine(const std::string& self, std::int64_t own_create) const {
            return std::any_of(entries.begin(), entries.end(), [&](const detail::slot_entry& e) {
                return e.member == self && e.state == slot_state::waiting && e.order == own_create;
            });
        }
        // How many members wait ahead of `self`.
        std::size_t place(const std::string& self, std::int64_t own_create) const {
            return static_cast<std::size_t>(std::count_if(entries.begin(), entries.end(), [&](const detail::slot_entry& e) {
                return e.state == slot_state::waiting && e.member != self && e.order < own_create;
            }));
        }
        // The member waiting `k` places ahead of `self` ("" when fewer wait ahead): the one whose
        // move into slots/ (or leaving) brings `self` among the first k.
        std::string ahead_of(const std::string& self, std::int64_t own_create, std::size_t k) const {
            std::vector<const detail::slot_entry*> ahead;
            for (const auto& e : entries)
                if (e.state == slot_state::waiting && e.member != self && e.order < own_create) ahead.push_back(&e);
            if (k == 0 || ahead.size() < k) return std::string();
            const auto kth = ahead.end() - static_cast<std::ptrdiff_t>(k);
            std::nth_element(ahead.begin(), kth, ahead.end(), [](const auto* a, const auto* b) { return a->order < b->order; });
            return (*kth)->member;
        }
        // One key of a read under the group's prefix (or a put the watch reported).
        void add(const key_value& kv, const std::string& group, const std::string& self) {
            const std::string_view key(kv.key);
            if (key.size() <= group.size() + 6) return;
            const std::string_view kind = key.substr(group.size(), 6), member = key.substr(group.size() + 6);
            if (kind == "queue/") {
                entries.push_back({std::string(member), slot_state::waiting, kv.create_revision});
            } else if (kind == "slots/" && member != self) {
                const auto state = parse_slot_state(kv.value);
                entries.push_back({std::string(member), state == slot_state::forced ? state : slot_state::holding, kv.create_revision});
            }
        }
        // A change the watch reported; one the read already held (a watch started before it) is
        // skipped.
        void apply(const watch_event& ev, const std::string& group, const std::string& self) {
            if (ev.kv.mod_revision <= revision || ev.kv.key.size() <= group.size() + 6) return;
            const std::string_view key(ev.kv.key);
            const bool waiting = key.substr(group.size(), 6) == "queue/";
            if (waiting && ev.deleted) ahead_left = true;  // what a watch of the key ahead reports
            const std::string_view member = key.substr(group.size() + 6);
            entries.erase(std::remove_if(entries.begin(), entries.end(),
                                         [&](const detail::slot_entry& e) {
                                             return e.member == member && (e.state == slot_state::waiting) == waiting;
                                         }),
                          entries.end());
            if (!ev.deleted) add(ev.kv, group, self);
        }
    };

    // Applies the watch's news to queue_. True while the watch runs and queue_ is current; false
    // when there is none or it ended (joined here; one that failed before etcd granted it makes
    // the member poll for a while).
    bool watch_news() {
        if (!watch_thread_.joinable()) return false;
        std::vector<watch_event> events;
        bool ended = false, created = false;
        std::optional<error> failure;
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            events.swap(watch_events_);
            ended = watch_ended_;
            created = watch_created_;
            failure = watch_error_;
        }
        const std::string group = group_prefix();
        for (const auto& ev : events) queue_.apply(ev, group, self_key_);
        if (!ended) return true;
        stop_watch();
        if (failure && failure->code != errc::cancelled && failure->code != errc::timeout) {
            if (!created) {
                watch_failures_ = std::min(watch_failures_ + 1, 6);
                watch_retry_at_ = ctx_.clock.now() + std::chrono::seconds(1 << (watch_failures_ - 1));
            }
            if (ctx_.log.enabled(log_level::warn))
                ctx_.log(log_level::warn, "fleet budget: the watch of the queue ended: " + failure->describe() +
                                              (created ? "; reading the queue and watching again" : "; reading the queue every poll_interval for now"),
                         failure->url, {});
        }
        if (created) watch_failures_ = 0;
        return false;
    }

    // Starts a watch from `from` on its own thread: of the deletion of queue/<ahead>, or of the
    // queue and the slots when `ahead` is empty (wait_turn() says why). False when it cannot (the option, the
    // transport, a recent failure, no thread): the member then polls.
    bool start_watch(const std::string& ahead, std::int64_t from) {
        if (!options_.watch || !basic_client<Transport>::can_watch() || ctx_.clock.now() < watch_retry_at_) return false;
        stop_watch();
        watch_client_.reset();  // before the thread: a stop_watch() from now on is never lost
        watch_.ahead = ahead;
        watch_.from = from;
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            watch_events_.clear();
            watch_ended_ = false;
            watch_created_ = false;
            watch_error_.reset();
            ++watches_started_;
        }
        try {
            watch_thread_ = std::thread([this] { watch_loop(); });
        } catch (...) {
            return false;
        }
        std::lock_guard<std::mutex> lock(signal_->mutex);
        watch_live_ = true;
        return true;
    }

    // Ends the watch and joins its thread (the budget's thread only).
    void stop_watch() {
        if (!watch_thread_.joinable()) return;
        watch_client_.cancel();
        watch_thread_.join();
        std::lock_guard<std::mutex> lock(signal_->mutex);
        watch_events_.clear();
        watch_ended_ = false;
        watch_live_ = false;
    }

    // The watch's thread: hands the events to the budget's thread and wakes it. No etcd request
    // but the watch, no decision: those stay on the budget's thread.
    void watch_loop() {
        const std::string key = watch_.ahead.empty() ? queue_begin() : group_prefix() + "queue/" + watch_.ahead;
        const std::string end = watch_.ahead.empty() ? queue_end() : std::string();
        const std::int64_t from = watch_.from;
        auto r = watch_client_.watch(
            key, end, from, options_.watch_idle, [&](const watch_response& w) {
            bool news = false;
            {
                std::lock_guard<std::mutex> lock(signal_->mutex);
                watch_created_ = watch_created_ || w.created;
                for (const auto& ev : w.events) watch_events_.push_back(ev);
                news = !w.events.empty();
            }
            if (news) signal_->notify_all();
            if (w.canceled && ctx_.log.enabled(log_level::info))
                ctx_.log(log_level::info, "fleet budget: etcd ended the watch (" +
                                              (w.compact_revision > 0 ? "compacted past revision " + std::to_string(from) : w.cancel_reason) +
                                              "); reading the queue again", {}, {});
            return true;
        }, /*deletes_only=*/!watch_.ahead.empty());
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            watch_ended_ = true;
            if (!r) watch_error_ = r.error();
        }
        signal_->notify_all();
    }

    // In maintenance without a slot (forced): slots/ key written, queue key gone, in one transaction.
    result<void> write_slot(slot_state s, const std::string& event_id) {
        txn_request t;
        t.success.push_back({operation::kind::put, slot_key(), slot_value(s, event_id), lease_id_});
        t.success.push_back({operation::kind::remove, queue_key(), {}, 0});
        auto r = slot_txn(t, s);
        if (!r) return r.error();
        own_create_ = 0;
        set_slot(s, event_id);
        return {};
    }

    // Leaves the queue or gives the slot back: both keys deleted in one transaction.
    result<void> release() {
        txn_request t;
        t.success.push_back({operation::kind::remove, slot_key(), {}, 0});
        t.success.push_back({operation::kind::remove, queue_key(), {}, 0});
        auto r = slot_txn(t, slot_state::none);
        if (!r) return r.error();
        own_create_ = 0;
        set_slot(slot_state::none, {});
        return {};
    }

    // The view others read, as a put, when it differs from what was last published (`slot` as
    // this VM's slot): with the text to remember once it is written (the view without its time).
    struct view_update {
        operation put;
        std::string body;
    };
    std::optional<view_update> view_change(slot_state slot) const {
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
            for (const auto& le : local_view_) {
                if (!detail::concerns(le.event, ctx_.self)) continue;  // another VM's: its own member publishes it
                w.begin_object();
                detail::write_event_members(w, le.event);
                w.end_object();
            }
            w.end_array();
            w.end_object();
            return w.str();
        };
        std::string body = write(nullptr);  // without the time: publish only what changed
        if (body == published_) return std::nullopt;
        const std::string now = format_iso8601(ctx_.clock.wall_now());
        return view_update{{operation::kind::put, member_key(), write(&now), lease_id_}, std::move(body)};
    }

    // Writes the view when it changed. A change of the slot goes in the transaction that changes
    // it (one write, not two); this catches what is left, such as new events.
    result<void> publish() {
        auto view = view_change(current_slot());
        if (!view) return {};
        auto r = client_.put(view->put.key, view->put.value, lease_id_);
        if (!r) return r.error();
        published_ = std::move(view->body);
        return {};
    }

    // Runs a transaction that moves this VM to `slot`, with the view's update when it changed.
    result<txn_result> slot_txn(txn_request t, slot_state slot) {
        auto view = view_change(slot);
        if (view) t.success.push_back(view->put);
        auto r = client_.txn(t);
        if (r && r->succeeded && view) published_ = std::move(view->body);
        return r;
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
    basic_client<Transport> watch_client_;  // the watch's thread only (its own connection and cancel())
    std::thread watch_thread_;              // started and joined by the budget's thread
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
    std::vector<watch_event> watch_events_;  // the watch's news, not yet applied
    bool watch_ended_ = false;
    bool watch_created_ = false;
    bool watch_live_ = false;  // a watch thread runs (started, not yet joined)
    std::optional<error> watch_error_;
    std::size_t watches_started_ = 0;

    // The budget's thread only:
    std::int64_t own_create_ = 0;
    clock::time_point next_keepalive_{};
    std::string published_;
    std::vector<local_event> local_view_;  // what the poller last told, as this round read it
    watched_queue queue_;
    // What the running watch watches; set before its thread starts, read by it.
    struct watch_target {
        std::string ahead;  // the member ahead in the queue; empty: the queue and the slots
        std::int64_t from = 0;
    } watch_;
    int watch_failures_ = 0;  // watches in a row that etcd never granted
    clock::time_point watch_retry_at_{};
};

/// The budget over the default transport (WinHTTP on Windows, libcurl elsewhere).
using maintenance_budget = basic_maintenance_budget<default_transport>;

}  // namespace etcd
FOREWARN_END_NAMESPACE
