// SPDX-License-Identifier: MIT
#include "node_actions.hpp"

#include <forewarn/time.hpp>

#include <algorithm>
#include <utility>

namespace watch::kubernetes {

using forewarn::event_type;
using forewarn::result;

bool disruptive(event_type t) noexcept {
    return t != event_type::live_migrate && t != event_type::freeze && t != event_type::rebalance;
}

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

}  // namespace

node_actions::node_actions(connection c, std::string node, node_actions_options o)
    : options_(std::move(o)), api_(std::move(c), options_.api), node_(api_, std::move(node)), thread_([this] { run(); }) {}

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

void node_actions::log(const std::string& line) const {
    if (options_.log) options_.log(line);
}

void node_actions::announced(const forewarn::event& e, std::function<void()> then) {
    {
        std::lock_guard<std::mutex> lock(m_);
        tasks_.push_back({step::announce, e, {}, std::chrono::steady_clock::now(),
                          then ? std::make_shared<std::function<void()>>(std::move(then)) : nullptr});
    }
    cv_.notify_all();
}

void node_actions::started(const forewarn::event& e) {
    {
        std::lock_guard<std::mutex> lock(m_);
        tasks_.push_back({step::start, e, {}, std::chrono::steady_clock::now(), nullptr});
    }
    cv_.notify_all();
}

void node_actions::over(const forewarn::event& e, const std::string& reason) {
    {
        std::lock_guard<std::mutex> lock(m_);
        // A taint and cordon still waiting for their time are not needed any more.
        tasks_.erase(std::remove_if(tasks_.begin(), tasks_.end(),
                                    [&](const task& t) { return t.what == step::take_out && t.event.id == e.id; }),
                     tasks_.end());
        tasks_.push_back({step::over, e, reason, std::chrono::steady_clock::now(), nullptr});
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
            auto next = std::min_element(tasks_.begin(), tasks_.end(), [](const task& a, const task& b) { return a.due < b.due; });
            if (next == tasks_.end())
                cv_.wait(lock);
            else
                cv_.wait_until(lock, next->due);
            continue;
        }
        const task t = *due;
        lock.unlock();
        auto done = apply(t);
        lock.lock();
        if (stopping_) break;
        if (done) {
            // The task is still where it was (only this thread removes tasks, and over() removes
            // take_out tasks, never the one being applied: it is copied out first).
            auto it = std::find_if(tasks_.begin(), tasks_.end(),
                                   [&](const task& x) { return x.what == t.what && x.event.id == t.event.id && x.due == t.due; });
            if (it != tasks_.end()) tasks_.erase(it);
            // The node is ready for the event: after a take-out, or an announcement that needs none.
            if (t.then && (t.what == step::take_out || (t.what == step::announce && !disruptive(t.event.type)))) {
                lock.unlock();
                (*t.then)();
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

result<void> node_actions::apply(const task& t) {
    switch (t.what) {
    case step::announce: return announce(t.event, t.then);
    case step::take_out: return take_out(t.event);
    case step::start: return mark_started(t.event);
    case step::over: return put_back(t.event, t.reason);
    }
    return {};
}

result<void> node_actions::announce(const forewarn::event& e, const std::shared_ptr<std::function<void()>>& then) {
    const bool first_time = !on_.count(e.id);
    on_[e.id] = e;
    auto n = node_.get();
    if (!n) return std::move(n).error();
    if (first_time)
        if (auto posted = node_.post_event({"MaintenanceScheduled", describe(options_.cloud, e), false}); !posted) {
            on_.erase(e.id);  // the whole step again
            return posted;
        }
    if (auto c = node_.set_condition({"MaintenancePlanned", "True", condition_reason(e.type), e.id + " at " + not_before_text(e)},
                                     &*n);
        !c)
        return c;
    if (e.not_before) {
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(e.not_before->time_since_epoch()).count();
        if (auto l = node_.patch_metadata({{maintenance_time_label, std::to_string(seconds)}}, {}); !l) return l;
    }
    if (disruptive(e.type)) {
        auto due = std::chrono::steady_clock::now();
        if (e.not_before) {
            const auto left = *e.not_before - std::chrono::system_clock::now() - options_.drain_lead;
            if (left > std::chrono::seconds(0)) due += std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
        }
        std::lock_guard<std::mutex> lock(m_);
        const bool queued = std::any_of(tasks_.begin(), tasks_.end(),
                                        [&](const task& t) { return t.what == step::take_out && t.event.id == e.id; });
        if (!queued) tasks_.push_back({step::take_out, e, {}, due, then});
    }
    return {};
}

result<void> node_actions::take_out(const forewarn::event& e) {
    if (!on_.count(e.id)) return {};  // over before its time came
    if (auto t = node_.add_taint({maintenance_taint, std::string(forewarn::to_string(e.type)), "NoSchedule"}); !t)
        return std::move(t).error();
    auto n = node_.get();
    if (!n) return std::move(n).error();
    if (n->annotation(cordoned_for_annotation)) return {};  // forewarn's cordon is there already
    if (n->unschedulable) return {};                         // an administrator's: not ours to record or undo
    return node_.patch_metadata({}, {{cordoned_for_annotation, e.id}}, true);
}

result<void> node_actions::mark_started(const forewarn::event& e) {
    return node_.set_condition({"MaintenanceInProgress", "True", condition_reason(e.type), e.id});
}

result<void> node_actions::put_back(const forewarn::event& e, const std::string& reason) {
    on_.erase(e.id);
    const bool others = !on_.empty();
    const bool others_disruptive = std::any_of(on_.begin(), on_.end(), [](const auto& kv) { return disruptive(kv.second.type); });
    auto n = node_.get();
    if (!n) return std::move(n).error();
    if (!others_disruptive) {
        for (const auto& t : n->taints)
            if (t.key == maintenance_taint)
                if (auto r = node_.remove_taint(t.key, t.effect); !r) return std::move(r).error();
        if (n->annotation(cordoned_for_annotation))
            if (auto u = node_.patch_metadata({}, {{cordoned_for_annotation, std::nullopt}}, false); !u) return u;
    }
    if (!others) {
        for (const char* type : {"MaintenancePlanned", "MaintenanceInProgress"})
            if (const auto* c = n->condition(type); c && c->status != "False")
                if (auto w = node_.set_condition({type, "False", "MaintenanceOver", e.id + ": " + reason}, &*n); !w) return w;
        if (n->label(maintenance_time_label))
            if (auto l = node_.patch_metadata({{maintenance_time_label, std::nullopt}}, {}); !l) return l;
    }
    return node_.post_event({"MaintenanceOver", describe(options_.cloud, e) + ": " + reason, false});
}

}  // namespace watch::kubernetes
