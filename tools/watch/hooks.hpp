// SPDX-License-Identifier: MIT
// forewarn-watch's hooks: --on-prepare, --on-started and --on-recover commands, one process per
// change. The change reaches the command only as data: its JSON line on stdin and FOREWARN_*
// environment variables, never spliced into the command line. Each run has its own thread and
// its own process group, so a hung hook holds back neither another event nor the polling, and is
// stopped as a whole (SIGTERM, then SIGKILL) at its deadline.
//
// With a state file, a journal beside it (STATE.hooks) records each run before it starts and
// when it ends: a hook that finished is never run again for the same change (exactly once), and
// one that was running when forewarn-watch died is run again when it starts (at least once
// across a crash).
#pragma once

#include <forewarn/platform/files.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/time.hpp>

#include "json.hpp"
#include "platform/process.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace watch {

/// The environment a hook gets for a change: the event's fields as FOREWARN_* variables.
inline std::vector<std::string> hook_environment(std::string_view hook, const forewarn::change& c, std::string_view cloud) {
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

/**
 * Which hook runs have happened, kept in a file beside the state file when there is one. A run is
 * "pending" from just before its process starts until it ends, then "done" or "failed". Written
 * durably (write, fsync, rename, fsync of the directory) at each step.
 */
class hook_journal {
public:
    struct entry {
        std::string state;  // pending | done | failed
        std::string hook;   // prepare | started | recover
        std::string input;  // the change's JSON line (what the hook got on stdin)
        std::vector<std::string> env;
    };

    hook_journal() = default;
    explicit hook_journal(std::string path) : path_(std::move(path)) {}

    /// Loads the file; a missing one is empty, an unreadable one is reported and started afresh.
    std::string load() {
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

    std::optional<entry> find(const std::string& key) const {
        auto it = entries_.find(key);
        if (it == entries_.end()) return std::nullopt;
        return it->second;
    }

    /// Every run recorded, oldest first.
    std::vector<std::pair<std::string, entry>> entries() const {
        std::vector<std::pair<std::string, entry>> out;
        for (const auto& k : order_) {
            auto it = entries_.find(k);
            if (it != entries_.end()) out.emplace_back(k, it->second);
        }
        return out;
    }

    /// Records `key` in `state`, durably; the error in words, or empty.
    std::string set(const std::string& key, entry e) {
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

    /// Forgets `key` (durably when it was there); the error in words, or empty.
    std::string erase(const std::string& key) {
        if (!entries_.erase(key)) return {};
        order_.erase(std::remove(order_.begin(), order_.end(), key), order_.end());
        return save();
    }

private:
    static constexpr std::size_t max_entries = 512;

    std::string save() const {
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

    std::string path_;
    std::map<std::string, entry> entries_;
    std::vector<std::string> order_;
};

/**
 * Runs hooks, each on a thread of its own, and remembers them in the journal. A key names one
 * change ("prepare:EVENT-ID"): a key that ran to the end is not run again; a second request for a
 * key that is running waits for that run instead of starting another.
 */
class hook_runner {
public:
    using done_fn = std::function<void(const hook_outcome&)>;
    struct report {
        std::string key, hook;
        hook_outcome outcome;
    };

    hook_runner(hook_journal journal, std::function<void(std::string_view)> log,
                std::function<void(const report&)> on_finished)
        : journal_(std::move(journal)), log_(std::move(log)), on_finished_(std::move(on_finished)) {}

    hook_runner(const hook_runner&) = delete;
    hook_runner& operator=(const hook_runner&) = delete;
    ~hook_runner() { stop(); }

    hook_journal& journal() { return journal_; }

    /**
     * Runs `command` for `key` unless it ran before: `done` is called with the outcome of this run,
     * of the run in progress, or at once with the recorded one.
     */
    void run(const std::string& key, const std::string& hook, const std::string& command, const std::string& input,
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

    /// Forgets finished runs of `keys` (a new occurrence of an event id runs its hooks again).
    void forget(const std::vector<std::string>& keys) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& k : keys) {
            finished_.erase(k);
            if (auto e = journal_.erase(k); !e.empty()) log_("hook journal: " + e);
        }
    }

    /// How to go on with a run the journal holds: its command (none: leave it), deadline, and
    /// what to do with its outcome.
    struct resumed {
        std::string command;
        std::chrono::steady_clock::time_point deadline;
        done_fn done;
    };

    /**
     * Goes on from the journal of the last run: what was running when forewarn-watch stopped runs
     * again; for `hooks`, what had succeeded gives `done` its recorded outcome once more (a
     * prepare that succeeded before a crash still has its event to approve).
     */
    void resume(const std::set<std::string>& hooks,
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

    /// Stops every running hook (its process group) and waits for their threads.
    void stop() {
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

    /// Hooks running now.
    std::size_t running() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return running_.size();
    }

private:
    struct slot_t {
        std::thread thread;
        bool done = false;
    };

    void reap_locked() {
        for (auto it = threads_.begin(); it != threads_.end();) {
            if (it->done && it->thread.joinable()) {
                it->thread.join();  // it has finished its work: at most the last few instructions
                it = threads_.erase(it);
            } else {
                ++it;
            }
        }
    }

    hook_journal journal_;
    std::function<void(std::string_view)> log_;
    std::function<void(const report&)> on_finished_;
    mutable std::mutex mutex_;
    std::map<std::string, std::vector<done_fn>> running_;
    std::map<std::string, hook_outcome> finished_;
    std::list<slot_t> threads_;
    std::atomic<bool> stop_flag_{false};
    bool stopping_ = false;
};

}  // namespace watch
