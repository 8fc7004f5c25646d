// SPDX-License-Identifier: MIT
// A scripted client with the shape basic_poller needs, for the poller's unit tests: a test sets
// the document the "service" holds, queues failures, and reads back what was approved.
#pragma once

#include <forewarn/event.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fake {

struct identity {
    std::string name;
};

struct service {
    std::mutex mutex;
    std::condition_variable cv;
    forewarn::document current;                        // what a successful fetch returns
    std::deque<forewarn::result<forewarn::document>> script;  // answers given first, in order
    std::deque<forewarn::result<void>> approve_script;   // answers of approve(), then success
    std::vector<std::vector<std::string>> approvals;     // successful approve() calls
    std::vector<std::string> approved_by;                // which client made each one
    int fetches = 0;
    int waits = 0;            // GCE wait_for_change calls
    int approve_calls = 0;
    int identity_calls = 0;
    bool identity_fails = false;
    bool block_fetch = false;  // fetch hangs until cancel(): a request in flight
    bool in_fetch = false;
    int version = 0;           // bumped by set(): wakes wait_for_change

    void set(forewarn::document d) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            current = std::move(d);
            ++version;
        }
        cv.notify_all();
    }
    void fail_next(forewarn::error e) {
        std::lock_guard<std::mutex> lock(mutex);
        script.emplace_back(std::move(e));
    }
    std::vector<std::vector<std::string>> approved() {
        std::lock_guard<std::mutex> lock(mutex);
        return approvals;
    }
    int fetch_count() {
        std::lock_guard<std::mutex> lock(mutex);
        return fetches;
    }
    /// Blocks until a fetch is in flight (real-time safety net only).
    bool wait_in_fetch() {
        std::unique_lock<std::mutex> lock(mutex);
        return cv.wait_for(lock, std::chrono::seconds(10), [&] { return in_fetch; });
    }
};

template <forewarn::cloud Kind>
class basic_client {
public:
    static constexpr forewarn::cloud cloud_kind = Kind;

    explicit basic_client(std::shared_ptr<service> s, std::string name = "vm_0")
        : s_(std::move(s)), name_(std::move(name)), cancel_(std::make_shared<cancel_state>()) {}

    forewarn::result<forewarn::document> fetch() {
        std::unique_lock<std::mutex> lock(s_->mutex);
        ++s_->fetches;
        if (s_->block_fetch) {
            s_->in_fetch = true;
            s_->cv.notify_all();
            s_->cv.wait(lock, [&] { return cancelled(); });
            s_->in_fetch = false;
        }
        if (cancelled()) return forewarn::error(forewarn::errc::cancelled, "cancelled");
        if (!s_->script.empty()) {
            auto r = std::move(s_->script.front());
            s_->script.pop_front();
            return r;
        }
        return s_->current;
    }

    forewarn::result<forewarn::document> wait_for_change(const forewarn::document& last, std::chrono::seconds) {
        std::unique_lock<std::mutex> lock(s_->mutex);
        ++s_->waits;
        s_->in_fetch = true;
        s_->cv.notify_all();
        s_->cv.wait(lock, [&] {
            return cancelled() || !s_->script.empty() || s_->current.incarnation != last.incarnation;
        });
        s_->in_fetch = false;
        if (cancelled()) return forewarn::error(forewarn::errc::cancelled, "cancelled");
        if (!s_->script.empty()) {
            auto r = std::move(s_->script.front());
            s_->script.pop_front();
            return r;
        }
        return s_->current;
    }

    forewarn::result<void> approve(const std::vector<std::string>& ids) {
        std::lock_guard<std::mutex> lock(s_->mutex);
        ++s_->approve_calls;
        if (cloud_kind == forewarn::cloud::gce) return forewarn::error(forewarn::errc::unsupported, "GCE has no approval");
        if (!s_->approve_script.empty()) {
            auto r = s_->approve_script.front();
            s_->approve_script.pop_front();
            if (!r) return r;
        }
        s_->approvals.push_back(ids);
        s_->approved_by.push_back(name_);
        return {};
    }

    forewarn::result<fake::identity> identity() {
        std::lock_guard<std::mutex> lock(s_->mutex);
        ++s_->identity_calls;
        if (s_->identity_fails) return forewarn::error(forewarn::errc::http_status, "instance metadata refused", 500);
        return fake::identity{name_};
    }

    void cancel() noexcept {
        {
            std::lock_guard<std::mutex> lock(s_->mutex);
            cancel_->cancelled = true;
        }
        s_->cv.notify_all();
    }
    void reset() noexcept {
        std::lock_guard<std::mutex> lock(s_->mutex);
        cancel_->cancelled = false;
    }

private:
    struct cancel_state {
        bool cancelled = false;
    };
    bool cancelled() const { return cancel_->cancelled; }  // under s_->mutex

    std::shared_ptr<service> s_;
    std::string name_;
    std::shared_ptr<cancel_state> cancel_;
};

using azure_client = basic_client<forewarn::cloud::azure>;
using gce_client = basic_client<forewarn::cloud::gce>;

}  // namespace fake
