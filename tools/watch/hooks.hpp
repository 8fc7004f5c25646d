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

#include <forewarn/diff.hpp>

#include "platform/process.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <map>
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
std::vector<std::string> hook_environment(std::string_view hook, const forewarn::change& c, std::string_view cloud);

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
    std::string load();
    std::optional<entry> find(const std::string& key) const;
    /// Every run recorded, oldest first.
    std::vector<std::pair<std::string, entry>> entries() const;
    /// Records `key` in `state`, durably; the error in words, or empty.
    std::string set(const std::string& key, entry e);
    /// Forgets `key` (durably when it was there); the error in words, or empty.
    std::string erase(const std::string& key);

private:
    static constexpr std::size_t max_entries = 512;

    std::string save() const;

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

    hook_runner(hook_journal journal, std::function<void(std::string_view)> log, std::function<void(const report&)> on_finished);
    hook_runner(const hook_runner&) = delete;
    hook_runner& operator=(const hook_runner&) = delete;
    ~hook_runner() { stop(); }

    hook_journal& journal() { return journal_; }

    /**
     * Runs `command` for `key` unless it ran before: `done` is called with the outcome of this run,
     * of the run in progress, or at once with the recorded one.
     */
    void run(const std::string& key, const std::string& hook, const std::string& command, const std::string& input,
             std::vector<std::string> env, std::chrono::steady_clock::time_point deadline, done_fn done);

    /// Forgets finished runs of `keys` (a new occurrence of an event id runs its hooks again).
    void forget(const std::vector<std::string>& keys);

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
                const std::function<resumed(const std::string& key, const hook_journal::entry&)>& plan);

    /// Stops every running hook (its process group) and waits for their threads.
    void stop();

    /// Hooks running now.
    std::size_t running() const;

private:
    struct slot_t {
        std::thread thread;
        bool done = false;
    };

    void reap_locked();

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
