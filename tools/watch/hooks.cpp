// SPDX-License-Identifier: MIT
// forewarn-watch's hooks (hooks.hpp): the environment a change gives a hook, the journal of runs
// beside the state file, and the runner, a thread per run.
#include "hooks.hpp"

#include <forewarn/event.hpp>
#include <forewarn/platform/files.hpp>
#include <forewarn/time.hpp>

#include "json.hpp"

#include <algorithm>

namespace watch {

std::vector<std::string> hook_environment(std::string_view hook, const forewarn::change& c, std::string_view cloud) {
    const forewarn::event& e = c.event;
    std::string resources;
    for (const auto& r : e.resources) resources += (resources.empty() ? "" : ",") + r;
    std::vector<std::string> env = {
        "FOREWARN_HOOK=" + std::string(hook),
        "FOREWARN_CHANGE=" + std::string(forewarn::to_string(c.kind)),
        "FOREWARN_CLOUD=" + std::string(cloud),
        "FOREWARN_EVENT_ID=" + e.id,
        "FOREWARN_EVENT_TYPE=" + std::string(forewarn::to_string(e.type)),
        "FOREWARN_EVENT_RAW_TYPE=" + e.raw_type,
        "FOREWARN_EVENT_STATUS=" + std::string(forewarn::to_string(e.status)),
        "FOREWARN_NOT_BEFORE=" + (e.not_before ? forewarn::format_iso8601(*e.not_before) : std::string()),
        "FOREWARN_RESOURCES=" + resources,
        "FOREWARN_REASON=" + (c.kind == forewarn::change_kind::recover ? std::string(forewarn::to_string(c.reason)) : std::string()),
    };
    // Bytes an environment cannot hold (NUL) are dropped, never passed on.
    for (auto& s : env) s.erase(std::remove(s.begin(), s.end(), '\0'), s.end());
    return env;
}

std::string hook_journal::load() {
    if (path_.empty()) return {};
    forewarn::platform::remove_stale_temporaries(forewarn::platform::path_from_utf8(path_));
    auto text = forewarn::platform::read_small_file(forewarn::platform::path_from_utf8(path_));
    if (!text) return text.error().code == forewarn::errc::not_found ? std::string() : text.error().describe();
    auto doc = parse_json(*text);
    if (!doc || !doc->IsObject()) return "the hook journal " + path_ + " is not what forewarn-watch writes: started afresh";
    const auto* runs = json_member(*doc, "runs");
    if (!runs || !runs->IsObject()) return {};
    for (auto it = runs->MemberBegin(); it != runs->MemberEnd(); ++it) {
        if (!it->value.IsObject()) continue;
        entry e;
        auto str = [&](const char* name) {
            const auto* v = json_member(it->value, name);
            return v && v->IsString() ? json_text(*v) : std::string();
        };
        e.state = str("state");
        e.hook = str("hook");
        e.input = str("input");
        if (const auto* env = json_member(it->value, "env"); env && env->IsArray())
            for (const auto& v : env->GetArray())
                if (v.IsString()) e.env.push_back(json_text(v));
        entries_[json_text(it->name)] = std::move(e);
        order_.push_back(json_text(it->name));
    }
    return {};
}

std::optional<hook_journal::entry> hook_journal::find(const std::string& key) const {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
}

std::vector<std::pair<std::string, hook_journal::entry>> hook_journal::entries() const {
    std::vector<std::pair<std::string, entry>> out;
    for (const auto& k : order_) {
        auto it = entries_.find(k);
        if (it != entries_.end()) out.emplace_back(k, it->second);
    }
    return out;
}

std::string hook_journal::set(const std::string& key, entry e) {
    if (!entries_.count(key)) order_.push_back(key);
    entries_[key] = std::move(e);
    // The oldest finished runs go first once there are many: their events are long over.
    while (order_.size() > max_entries) {
        auto victim = std::find_if(order_.begin(), order_.end(),
                                   [&](const std::string& k) { return entries_[k].state != "pending"; });
        if (victim == order_.end()) break;
        entries_.erase(*victim);
        order_.erase(victim);
    }
    return save();
}

std::string hook_journal::erase(const std::string& key) {
    if (!entries_.erase(key)) return {};
    order_.erase(std::remove(order_.begin(), order_.end(), key), order_.end());
    return save();
}

std::string hook_journal::save() const {
    if (path_.empty()) return {};
    json_object runs;
    for (const auto& k : order_) {
        const auto& e = entries_.at(k);
        runs.raw(k, json_object().string("state", e.state).string("hook", e.hook).string("input", e.input).strings("env", e.env).str());
    }
    const std::string text = json_object().integer("version", 1).raw("runs", runs.str()).str();
    auto r = forewarn::platform::write_file_atomically(forewarn::platform::path_from_utf8(path_), text);
    return r ? std::string() : r.error().describe();
}

hook_runner::hook_runner(hook_journal journal, std::function<void(std::string_view)> log,
                         std::function<void(const report&)> on_finished)
    : journal_(std::move(journal)), log_(std::move(log)), on_finished_(std::move(on_finished)) {}

void hook_runner::run(const std::string& key, const std::string& hook, const std::string& command, const std::string& input,
                       std::vector<std::string> env, std::chrono::steady_clock::time_point deadline, done_fn done) {
    std::unique_lock<std::mutex> lock(mutex_);
    reap_locked();
    if (auto it = finished_.find(key); it != finished_.end()) {
        const hook_outcome o = it->second;
        lock.unlock();
        if (done) done(o);
        return;
    }
    if (auto it = running_.find(key); it != running_.end()) {
        if (done) it->second.push_back(std::move(done));
        return;
    }
    if (auto recorded = journal_.find(key); recorded && recorded->state != "pending") {
        hook_outcome o;
        o.what = recorded->state == "done" ? hook_outcome::kind::succeeded : hook_outcome::kind::failed;
        o.exit_code = recorded->state == "done" ? 0 : -1;
        o.detail = "ran before this restart (" + recorded->state + ")";
        finished_[key] = o;
        lock.unlock();
        if (done) done(o);
        return;
    }
    if (stopping_) return;
    running_[key].push_back(std::move(done));
    if (auto e = journal_.set(key, {"pending", hook, input, env}); !e.empty()) log_("hook journal: " + e);
    threads_.emplace_back();
    auto& slot = threads_.back();
    slot.thread = std::thread([this, key, hook, command, input, env = std::move(env), deadline, &slot] {
        const std::string prefix = "hook " + hook + " " + key.substr(key.find(':') + 1) + ": ";
        auto o = run_hook(command, input, env, deadline, stop_flag_,
                          [&](std::string_view line) { log_(prefix + std::string(line)); });
        std::vector<done_fn> waiters;
        {
            std::lock_guard<std::mutex> l(mutex_);
            // A hook cut short because forewarn-watch is stopping stays pending: it runs again
            // after the restart.
            if (!(stop_flag_.load() && o.what != hook_outcome::kind::succeeded)) {
                if (auto e = journal_.set(key, {o.what == hook_outcome::kind::succeeded ? "done" : "failed", hook, input, env});
                    !e.empty())
                    log_("hook journal: " + e);
                finished_[key] = o;
            }
            waiters = std::move(running_[key]);
            running_.erase(key);
        }
        if (on_finished_) on_finished_({key, hook, o});
        for (auto& w : waiters)
            if (w) w(o);
        std::lock_guard<std::mutex> l(mutex_);
        slot.done = true;  // last: reap_locked() may join it from now on
    });
}

void hook_runner::forget(const std::vector<std::string>& keys) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& k : keys) {
        finished_.erase(k);
        if (auto e = journal_.erase(k); !e.empty()) log_("hook journal: " + e);
    }
}

void hook_runner::resume(const std::set<std::string>& hooks,
                         const std::function<resumed(const std::string& key, const hook_journal::entry&)>& plan) {
    for (auto& [key, e] : journal_.entries()) {
        if (e.state != "pending" && !(e.state == "done" && hooks.count(e.hook))) continue;
        resumed r = plan(key, e);
        if (r.command.empty()) continue;
        if (e.state == "pending")
            log_("hook " + e.hook + " " + key.substr(key.find(':') + 1) +
                 ": was running when forewarn-watch stopped: run again");
        run(key, e.hook, r.command, e.input, e.env, r.deadline, std::move(r.done));
    }
}

void hook_runner::stop() {
    std::list<slot_t> threads;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        stop_flag_ = true;
        threads.swap(threads_);
    }
    for (auto& t : threads)
        if (t.thread.joinable()) t.thread.join();
}

std::size_t hook_runner::running() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return running_.size();
}

void hook_runner::reap_locked() {
    for (auto it = threads_.begin(); it != threads_.end();) {
        if (it->done && it->thread.joinable()) {
            it->thread.join();  // it has finished its work: at most the last few instructions
            it = threads_.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace watch
