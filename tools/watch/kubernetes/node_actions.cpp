// SPDX-License-Identifier: MIT
#include "node_actions.hpp"

#include <forewarn/json.hpp>
#include <forewarn/time.hpp>

#include "../json.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace watch::kubernetes {

using forewarn::event_type;
using forewarn::result;

std::string condition_reason(event_type t) {
    switch (t) {
    case event_type::freeze: return "Freeze";
    case event_type::reboot: return "Reboot";
    case event_type::redeploy: return "Redeploy";
    case event_type::preempt: return "Preempt";
    case event_type::terminate: return "Terminate";
    case event_type::live_migrate: return "LiveMigrate";
    case event_type::host_terminate: return "HostTerminate";
    case event_type::preempted: return "Preempted";
    case event_type::maintenance: return "Maintenance";
    case event_type::retirement: return "Retirement";
    case event_type::stop: return "Stop";
    case event_type::hibernate: return "Hibernate";
    case event_type::rebalance: return "Rebalance";
    case event_type::unknown: break;
    }
    return "Unknown";
}

namespace {

std::string not_before_text(const forewarn::event& e) {
    return e.not_before ? forewarn::format_iso8601(*e.not_before) : std::string("no set time");
}

std::string describe(const std::string& cloud, const forewarn::event& e) {
    return cloud + " " + std::string(forewarn::to_string(e.type)) + " " + e.id + " at " + not_before_text(e);
}

std::string seconds_text(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", s);
    return text;
}

std::string list_of(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

}  // namespace

std::chrono::system_clock::time_point drain_deadline(const forewarn::event& e, std::chrono::system_clock::time_point start,
                                                     std::chrono::seconds hook_deadline, std::chrono::seconds drain_margin,
                                                     std::chrono::seconds drain_timeout) {
    if (e.not_before) return *e.not_before - hook_deadline - drain_margin;
    return start + drain_timeout;
}

std::string with_record(const std::string* annotation, const std::string& id, const std::optional<std::string>& record) {
    rapidjson::Document doc;
    if (annotation) {
        if (auto parsed = parse_json(*annotation); parsed && parsed->IsObject()) doc = std::move(*parsed);
    }
    if (!doc.IsObject()) doc.SetObject();
    doc.RemoveMember(rapidjson::StringRef(id.data(), id.size()));
    if (record) {
        auto value = parse_json(*record);
        if (value && value->IsObject()) {
            rapidjson::Value key(id.data(), static_cast<rapidjson::SizeType>(id.size()), doc.GetAllocator());
            rapidjson::Value copy(*value, doc.GetAllocator());
            doc.AddMember(key, copy, doc.GetAllocator());
        }
    }
    if (doc.MemberCount() == 0) return {};
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> w(out);
    doc.Accept(w);
    return out.GetString();
}

bool has_record(const std::string& annotation, const std::string& id) {
    const auto doc = parse_json(annotation);
    if (!doc || !doc->IsObject()) return false;
    const rapidjson::Value& records = *doc;
    const auto found = records.FindMember(rapidjson::StringRef(id.data(), static_cast<rapidjson::SizeType>(id.size())));
    return found != records.MemberEnd() && found->value.IsObject();
}

std::vector<std::string> records_of(const std::string& annotation) {
    std::vector<std::string> out;
    auto doc = parse_json(annotation);
    if (!doc || !doc->IsObject()) return out;
    const rapidjson::Value& object = *doc;
    for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
        if (!it->value.IsObject()) continue;
        rapidjson::StringBuffer text;
        rapidjson::Writer<rapidjson::StringBuffer> w(text);
        it->value.Accept(w);
        out.emplace_back(text.GetString(), text.GetSize());
    }
    return out;
}

node_actions::node_actions(connection c, std::string node, node_actions_options o)
    : node_actions(c, curl_transport_for(c), std::move(node), std::move(o)) {}

node_actions::node_actions(connection c, api_transport t, std::string node, node_actions_options o)
    : options_(std::move(o)),
      api_(std::move(c), std::move(t), options_.api),
      node_(api_, std::move(node)),
      thread_([this] { run(); }) {}

bool node_actions::acts_on(const forewarn::event& e) const {
    if (e.resources.empty()) return true;
    const std::string self = options_.self ? options_.self() : std::string();
    return !self.empty() && e.affects(self);
}

node_actions::~node_actions() { stop(); }

void node_actions::stop() {
    {
        std::lock_guard<std::mutex> lock(m_);
        stopping_ = true;
    }
    cv_.notify_all();
    api_.cancel();
    if (thread_.joinable()) thread_.join();
}

std::string node_actions::failing() const {
    std::lock_guard<std::mutex> lock(m_);
    return failing_;
}

drain_stats node_actions::drains() const {
    std::lock_guard<std::mutex> lock(m_);
    return stats_;
}

void node_actions::log(const std::string& line) const {
    if (options_.log) options_.log(line);
}

void node_actions::queue(task t) {
    {
        std::lock_guard<std::mutex> lock(m_);
        tasks_.push_back(std::move(t));
    }
    cv_.notify_all();
}

void node_actions::announced(const forewarn::change& c, std::string line, std::function<void(bool)> then) {
    if (!acts_on(c.event)) {  // a neighbour's event: nothing of this node's to do, so ready
        if (then) then(true);
        return;
    }
    queue({step::announce, c.event, {}, std::chrono::steady_clock::now(),
           then ? std::make_shared<std::function<void(bool)>>(std::move(then)) : nullptr, std::move(line), false});
}

void node_actions::resumed(const forewarn::change& c, std::string line, std::function<void(bool)> then) {
    if (!acts_on(c.event)) {
        if (then) then(true);
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    queue({step::announce, c.event, {}, now, then ? std::make_shared<std::function<void(bool)>>(std::move(then)) : nullptr,
           std::move(line), true});
    queue({step::reconcile, c.event, {}, now, nullptr, {}, false});
}

result<std::vector<forewarn::change>> node_actions::recorded() {
    auto n = node_.get();
    if (!n) return std::move(n).error();
    std::vector<forewarn::change> out;
    if (const std::string* a = n->annotation(events_annotation))
        for (const auto& text : records_of(*a))
            if (auto c = forewarn::change_from_json(text); c && !c->event.id.empty()) out.push_back(std::move(*c));
    return out;
}

void node_actions::started(const forewarn::event& e) {
    if (!acts_on(e)) return;
    {
        std::lock_guard<std::mutex> lock(m_);
        tasks_.push_back({step::start, e, {}, std::chrono::steady_clock::now(), nullptr, {}, false});
    }
    cv_.notify_all();
}

void node_actions::over(const forewarn::event& e, const std::string& reason) {
    if (!acts_on(e)) return;
    {
        std::lock_guard<std::mutex> lock(m_);
        // A taint and cordon still waiting for their time, or a drain's next round, are not
        // needed any more.
        tasks_.erase(std::remove_if(tasks_.begin(), tasks_.end(),
                                    [&](const task& t) {
                                        return (t.what == step::take_out || t.what == step::drain) && t.event.id == e.id;
                                    }),
                     tasks_.end());
        tasks_.push_back({step::over, e, reason, std::chrono::steady_clock::now(), nullptr, {}, false});
    }
    cv_.notify_all();
}

void node_actions::run() {
    auto pause = std::chrono::milliseconds(500);
    bool failing = false;
    std::unique_lock<std::mutex> lock(m_);
    while (!stopping_) {
        const auto now = std::chrono::steady_clock::now();
        auto due = std::find_if(tasks_.begin(), tasks_.end(), [&](const task& t) { return t.due <= now; });
        if (due == tasks_.end()) {
            auto soonest = std::min_element(tasks_.begin(), tasks_.end(), [](const task& a, const task& b) { return a.due < b.due; });
            if (soonest == tasks_.end())
                cv_.wait(lock);
            else
                cv_.wait_until(lock, soonest->due);
            continue;
        }
        const task t = *due;
        lock.unlock();
        auto done = apply(t);
        lock.lock();
        if (stopping_) break;
        if (done) {
            // The task is where it was, unless over() removed it meanwhile (it removes take_out
            // and drain tasks; the one being applied was copied out first): then it is not
            // scheduled again.
            auto it = std::find_if(tasks_.begin(), tasks_.end(),
                                   [&](const task& x) { return x.what == t.what && x.event.id == t.event.id && x.due == t.due; });
            if (it != tasks_.end()) {
                if (done->again)
                    it->due = *done->again;
                else
                    tasks_.erase(it);
            }
            if (t.then && done->then) {
                lock.unlock();
                (*t.then)(*done->then);
                lock.lock();
            }
            if (failing) {
                lock.unlock();
                log("kubernetes: node " + node_.name() + " written again");
                lock.lock();
            }
            failing = false;
            failing_.clear();
            pause = std::chrono::milliseconds(500);
            continue;
        }
        if (!failing) {  // once per streak: an outage is one line, not one a second
            lock.unlock();
            log("kubernetes: node " + node_.name() + ": " + done.error().describe() + " (tried again until it works)");
            lock.lock();
        }
        failing = true;
        failing_ = "node " + node_.name() + ": " + done.error().describe();
        cv_.wait_for(lock, pause, [this] { return stopping_; });
        pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::seconds(30));
    }
}

result<node_actions::next> node_actions::apply(const task& t) {
    auto just = [](result<void> r) -> result<next> {
        if (!r) return std::move(r).error();
        return next{};
    };
    switch (t.what) {
    case step::announce: return announce(t);
    case step::reconcile: return reconcile(t.event);
    case step::take_out: return take_out(t.event, t.then);
    case step::drain: return drain_round(t.event);
    case step::start: return just(mark_started(t.event));
    case step::over: return just(put_back(t.event, t.reason));
    }
    return next{};
}

result<node_actions::next> node_actions::announce(const task& t) {
    const forewarn::event& e = t.event;
    const then_fn& then = t.then;
    const bool first_time = !on_.count(e.id) && !t.resumed;
    on_[e.id] = e;
    put_back_.erase(e.id);
    auto n = node_.get();
    if (!n) return std::move(n).error();
    // Recorded first: an agent killed after any of the writes below resumes the event.
    if (!t.record.empty()) {
        const std::string* was = n->annotation(events_annotation);
        if (!was || !has_record(*was, e.id))
            if (auto a = node_.patch_metadata({}, {{events_annotation, with_record(was, e.id, t.record)}}); !a)
                return std::move(a).error();
    }
    if (first_time)
        if (auto posted = node_.post_event({"MaintenanceScheduled", describe(options_.cloud, e), false}); !posted) {
            on_.erase(e.id);  // the whole step again
            return std::move(posted).error();
        }
    if (auto c = node_.set_condition({"MaintenancePlanned", "True", condition_reason(e.type), e.id + " at " + not_before_text(e)},
                                     &*n);
        !c)
        return std::move(c).error();
    if (e.not_before) {
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(e.not_before->time_since_epoch()).count();
        if (auto l = node_.patch_metadata({{maintenance_time_label, std::to_string(seconds)}}, {}); !l) return std::move(l).error();
    }
    if (!options_.rules.of(e.type).takes_out()) return next{std::nullopt, true};  // nothing to take out: ready now
    auto due = std::chrono::steady_clock::now();
    if (e.not_before) {
        const auto left = *e.not_before - std::chrono::system_clock::now() - options_.drain_lead;
        if (left > std::chrono::seconds(0)) due += std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
    }
    std::lock_guard<std::mutex> lock(m_);
    const bool queued = std::any_of(tasks_.begin(), tasks_.end(), [&](const task& x) {
        return (x.what == step::take_out || x.what == step::drain) && x.event.id == e.id;
    });
    if (!queued) tasks_.push_back({step::take_out, e, {}, due, then, {}, false});
    return next{};
}

result<node_actions::next> node_actions::take_out(const forewarn::event& e, const then_fn& then) {
    if (!on_.count(e.id)) return next{};  // over before its time came
    const node_rule& rule = options_.rules.of(e.type);
    if (rule.taint)
        if (auto t = node_.add_taint({maintenance_taint, std::string(forewarn::to_string(e.type)), rule.effect}); !t)
            return std::move(t).error();
    if (rule.cordon) {
        auto n = node_.get();
        if (!n) return std::move(n).error();
        // The cordon, recorded as forewarn's only when forewarn makes it: a node already cordoned
        // is an administrator's, not ours to record or undo.
        if (!n->annotation(cordoned_for_annotation) && !n->unschedulable)
            if (auto c = node_.patch_metadata({}, {{cordoned_for_annotation, e.id}}, true); !c) return std::move(c).error();
    }
    if (!rule.drain) return next{std::nullopt, true};
    // Out of the cloud load balancers before the first eviction, recorded as forewarn's only
    // when forewarn adds the label; then --lb-drain seconds for them to let go.
    {
        auto n = node_.get();
        if (!n) return std::move(n).error();
        if (!n->label(exclude_lb_label))
            if (auto l = node_.patch_metadata({{exclude_lb_label, std::string("true")}}, {{excluded_for_annotation, e.id}}); !l)
                return std::move(l).error();
    }
    // Then the drain, round after round on this thread.
    if (!drains_.count(e.id)) {
        const auto deadline = drain_deadline(e, std::chrono::system_clock::now(), options_.hook_deadline, options_.drain_margin,
                                             options_.drain_timeout);
        drains_[e.id] = std::make_unique<drain_run>(drain_run{kubernetes::drain(api_, node_.name(), deadline),
                                                              std::chrono::steady_clock::now(), false, std::nullopt, 0, {}, {}});
    }
    std::lock_guard<std::mutex> lock(m_);
    tasks_.push_back({step::drain, e, {}, std::chrono::steady_clock::now() + options_.lb_drain, then, {}, false});
    return next{};
}

result<node_actions::next> node_actions::drain_round(const forewarn::event& e) {
    auto found = drains_.find(e.id);
    if (found == drains_.end() || !on_.count(e.id)) return next{};  // over meanwhile
    drain_run& run = *found->second;
    if (!run.marked) {
        if (auto c = node_.set_condition({"DrainInProgress", "True", condition_reason(e.type),
                                          e.id + ": evicting the node's pods until " +
                                              forewarn::format_iso8601(run.drain.deadline())});
            !c)
            return std::move(c).error();
        run.marked = true;
    }
    if (!run.ended) {
        auto state = run.drain.step();
        for (const auto& f : run.drain.take_failures())  // each failure once, not once a round
            if (run.logged.insert(f).second) log("kubernetes: drain of node " + node_.name() + ": " + f);
        {
            std::lock_guard<std::mutex> lock(m_);
            stats_.refused += run.drain.refusals() - run.refusals_counted;
        }
        run.refusals_counted = run.drain.refusals();
        if (!state) {
            // A round that fails is tried again; at the deadline the drain ends with what it has.
            if (std::chrono::system_clock::now() < run.drain.deadline()) return std::move(state).error();
            run.last_error = state.error().describe();
            state = drain::state::timed_out;
        }
        if (*state == drain::state::draining)
            return next{std::chrono::steady_clock::now() + options_.drain_round, std::nullopt};
        run.ended = *state;
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - run.started).count();
        std::lock_guard<std::mutex> lock(m_);
        ++(*state == drain::state::drained ? stats_.drained : stats_.timed_out);
        stats_.seconds += took;
        stats_.pods_left += run.drain.left().size();
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - run.started).count();
    if (*run.ended == drain::state::drained) {
        if (auto c = node_.set_condition({"Drained", "True", condition_reason(e.type),
                                          e.id + ": " + std::to_string(run.drain.evicted()) + " pods evicted"});
            !c)
            return std::move(c).error();
        if (auto c = node_.set_condition({"DrainInProgress", "False", "Drained", e.id}); !c) return std::move(c).error();
        std::string message = e.id + ": " + std::to_string(run.drain.evicted()) + " pods evicted in " + seconds_text(took) + " s";
        if (!run.drain.unowned().empty())
            message += "; owned by no controller, not made again elsewhere: " + list_of(run.drain.unowned());
        if (auto posted = node_.post_event({"Drained", message, false}); !posted) return std::move(posted).error();
        return next{std::nullopt, true};
    }
    if (auto c = node_.set_condition({"DrainInProgress", "False", "DrainTimedOut", e.id}); !c) return std::move(c).error();
    std::vector<std::string> left;
    for (const auto& p : run.drain.left()) left.push_back(p.key + " (" + p.reason + ")");
    std::string message = e.id + ": the drain reached its deadline after " + seconds_text(took) + " s with " +
                          std::to_string(left.size()) + (left.size() == 1 ? " pod" : " pods") + " left: " + list_of(left);
    if (!run.last_error.empty()) message += "; its last round failed: " + run.last_error;
    message += "; the event is not approved";
    if (auto posted = node_.post_event({"DrainTimedOut", message, true}); !posted) return std::move(posted).error();
    log("kubernetes: " + message);
    return next{std::nullopt, false};
}

result<void> node_actions::mark_started(const forewarn::event& e) {
    return node_.set_condition({"MaintenanceInProgress", "True", condition_reason(e.type), e.id});
}

result<node_actions::next> node_actions::reconcile(const forewarn::event& e) {
    if (!on_.count(e.id)) return next{};  // over already
    const std::optional<bool> on = options_.still_on ? options_.still_on(e.id) : std::optional<bool>(true);
    if (!on) return next{std::chrono::steady_clock::now() + std::chrono::milliseconds(500), std::nullopt};
    if (!*on) over(e, "gone while forewarn-watch was stopped");
    return next{};
}

result<void> node_actions::put_back(const forewarn::event& e, const std::string& reason) {
    if (put_back_.count(e.id)) return {};  // a second over of the same event: nothing left to do
    on_.erase(e.id);
    drains_.erase(e.id);
    const bool others = !on_.empty();
    const bool others_disruptive =
        std::any_of(on_.begin(), on_.end(), [&](const auto& kv) { return options_.rules.of(kv.second.type).takes_out(); });
    auto n = node_.get();
    if (!n) return std::move(n).error();
    if (!others_disruptive) {
        for (const auto& t : n->taints)
            if (t.key == maintenance_taint)
                if (auto r = node_.remove_taint(t.key, t.effect); !r) return std::move(r).error();
        if (n->annotation(cordoned_for_annotation))
            if (auto u = node_.patch_metadata({}, {{cordoned_for_annotation, std::nullopt}}, false); !u) return u;
        if (n->annotation(excluded_for_annotation))
            if (auto u = node_.patch_metadata({{exclude_lb_label, std::nullopt}}, {{excluded_for_annotation, std::nullopt}}); !u)
                return u;
    }
    if (!others) {
        for (const char* type : {"MaintenancePlanned", "MaintenanceInProgress", "DrainInProgress", "Drained"})
            if (const auto* c = n->condition(type); c && (c->status != "False" || c->reason != "MaintenanceOver"))
                if (auto w = node_.set_condition({type, "False", "MaintenanceOver", e.id + ": " + reason}, &*n); !w) return w;
        if (n->label(maintenance_time_label))
            if (auto l = node_.patch_metadata({{maintenance_time_label, std::nullopt}}, {}); !l) return l;
    }
    if (const std::string* a = n->annotation(events_annotation)) {
        const std::string rest = with_record(a, e.id, std::nullopt);
        if (rest != *a)
            if (auto w = node_.patch_metadata({}, {{events_annotation, rest.empty() ? std::nullopt : std::optional<std::string>(rest)}});
                !w)
                return w;
    }
    if (auto posted = node_.post_event({"MaintenanceOver", describe(options_.cloud, e) + ": " + reason, false}); !posted)
        return posted;
    put_back_.insert(e.id);
    return {};
}

}  // namespace watch::kubernetes
