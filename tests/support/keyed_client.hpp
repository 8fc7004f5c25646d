// SPDX-License-Identifier: MIT
#pragma once

// A small client of the keys' machinery, for the unit tests of detail::key_rounds and
// detail::key_readings without any cloud's rules: `keyed_client<Keys, MayHang>` derives from
// detail::client_base (docs/architecture.md, "A new cloud"), its key plans are the test's, and it
// reads key k from a `key_server` over testing::fake_transport, on a testing::manual_clock.
//
// The service holds per key a status, a body (event ids separated by ','; "!" does not parse)
// and an ETag. A plain GET answers at once; a hanging GET answers when the key's ETag is no longer
// the one the client last saw, once its seconds (and the key's `late`) have passed on the clock,
// or `cancelled` when its lane is cut (cancel() of the lane's transport), as a real transport's
// request would.

#include <forewarn/clock.hpp>
#include <forewarn/detail/client_base.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/transport/retry.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace forewarn_test {

/// The fake service of a keyed_client: what each key answers now, and every request it had.
class key_server {
public:
    struct key {
        int status = 200;
        std::string body;  ///< event ids separated by ','; "!" is a body that does not parse
        std::string etag;
        std::string date;  ///< a Date header, when not empty
        std::chrono::seconds late{0};  ///< a hanging GET unchanged answers this long after its time
    };
    /// One request as the service saw it.
    struct seen {
        std::size_t key = 0;
        std::size_t lane = 0;
        bool hang = false;
        std::thread::id thread;
        forewarn::clock::time_point at;
    };

    key_server(forewarn::testing::manual_clock clock, std::size_t keys) : clock_(std::move(clock)), keys_(keys) {}

    /// What key k answers from now on (a hanging GET whose ETag this changes answers now).
    void set(std::size_t k, key answer) {
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            keys_.at(k) = std::move(answer);
        }
        signal_->notify_all();
    }
    void set(std::size_t k, std::string body, std::string etag = {}) {
        key a;
        a.body = std::move(body);
        a.etag = std::move(etag);
        set(k, std::move(a));
    }

    std::vector<seen> log() const {
        std::lock_guard<std::mutex> lock(signal_->mutex);
        return log_;
    }
    /// Requests for key k so far: plain ones, or hanging ones.
    std::size_t asked(std::size_t k, bool hang = false) const {
        std::size_t n = 0;
        for (const auto& s : log()) n += s.key == k && s.hang == hang;
        return n;
    }

    /// The transports' cancel flag (fake_transport's copies share one): a hanging GET ends.
    void set_cancelled(bool on) noexcept {
        {
            std::lock_guard<std::mutex> lock(signal_->mutex);
            cancelled_ = on;
        }
        signal_->notify_all();
    }

    /// GET http://keys.test/k<K>?lane=<L>[&hang=<S>&last=<ETag>]
    forewarn::result<forewarn::http_response> answer(const forewarn::http_request& r) {
        const auto q = r.url.find('?');
        const std::size_t k = std::stoul(r.url.substr(r.url.rfind("/k", q) + 2, q));
        const std::string query = r.url.substr(q + 1);
        auto param = [&](const std::string& name) -> std::optional<std::string> {
            const auto at = ("&" + query).find("&" + name + "=");
            if (at == std::string::npos) return std::nullopt;
            const auto from = at + name.size() + 1;
            return query.substr(from, query.find('&', from) - from);
        };
        seen s;
        s.key = k;
        s.lane = std::stoul(param("lane").value_or("99"));
        s.thread = std::this_thread::get_id();
        s.at = clock_.now();
        const auto hang = param("hang");
        s.hang = hang.has_value();
        std::unique_lock<std::mutex> lock(signal_->mutex);
        log_.push_back(s);
        // A client that asks again and again with time standing still would never wait on the
        // clock: past this many requests every answer is a 403, which ends its round.
        if (log_.size() > 1000) return http_status(403);
        if (hang) {
            const std::string last = param("last").value_or("");
            const auto deadline = clock_.now() + std::chrono::seconds(std::stoi(*hang)) + keys_.at(k).late;
            clock_.wait_until(signal_, lock, deadline, [&] { return cancelled_ || keys_.at(k).etag != last; });
            if (cancelled_) return forewarn::error(forewarn::errc::cancelled, "request cancelled");
        }
        const key& a = keys_.at(k);
        forewarn::http_response out;
        out.status = a.status;
        out.body = a.body;
        if (!a.etag.empty()) out.headers.push_back({"ETag", a.etag});
        if (!a.date.empty()) out.headers.push_back({"Date", a.date});
        return out;
    }

private:
    static forewarn::http_response http_status(int status) {
        forewarn::http_response out;
        out.status = status;
        return out;
    }

    forewarn::testing::manual_clock clock_;
    std::shared_ptr<forewarn::detail::wake_signal> signal_ = std::make_shared<forewarn::detail::wake_signal>();
    std::vector<key> keys_;  // the three below under signal_->mutex
    std::vector<seen> log_;
    bool cancelled_ = false;
};

/// testing::fake_transport answered by a key_server, whose cancel() also ends the server's
/// hanging answers (a real transport's cancel() ends its request in flight).
class lane_transport : public forewarn::testing::fake_transport {
public:
    explicit lane_transport(std::shared_ptr<key_server> server) : server_(std::move(server)) {
        // A plain pointer: the server holds no transport, so there is no cycle to leak.
        otherwise([s = server_.get()](const forewarn::http_request& r) { return s->answer(r); });
    }
    void cancel() noexcept {
        fake_transport::cancel();
        server_->set_cancelled(true);
    }
    void reset() noexcept {
        fake_transport::reset();
        server_->set_cancelled(false);
    }

private:
    std::shared_ptr<key_server> server_;
};

struct keyed_identity {
    std::string name;
};

/// keyed_client's options: the common ones (its clock, no rate limit, one attempt) and next()'s
/// pause after a failure.
struct keyed_options : forewarn::client_options_base {
    std::chrono::milliseconds error_pause{1000};
};

/// A client of `Keys` keys on client_base: key k is planned as `plans[k]` says, read from its
/// key_server (lane and hang in the URL), its body's ids become events of raw_type "k<k>", its
/// ETag the reading's tag, its Date the service's time; a 404 is no event. No retries, no rate
/// limit: each ask is one request.
template <std::size_t Keys, bool MayHang = false>
class keyed_client
    : public forewarn::detail::client_base<keyed_client<Keys, MayHang>, lane_transport, keyed_identity, forewarn::cloud::gce,
                                           keyed_options> {
    using base_type =
        forewarn::detail::client_base<keyed_client<Keys, MayHang>, lane_transport, keyed_identity, forewarn::cloud::gce, keyed_options>;
    friend base_type;

public:
    keyed_client(std::shared_ptr<key_server> server, forewarn::testing::manual_clock clock,
                 std::vector<forewarn::detail::key_plan> key_plans,
                 forewarn::clock::duration error_pause = std::chrono::seconds(1))
        : base_type(options_of(std::move(clock), error_pause), lane_transport(server), forewarn::retry_rules::gce),
          plans(std::move(key_plans)), etags_(Keys) {}

    std::vector<forewarn::detail::key_plan> plans;  ///< key k's plan (set it between calls)
    std::string owner;                              ///< what events without resources are given

    std::string endpoint() const { return "http://keys.test"; }

private:
    static constexpr std::size_t key_count = Keys;
    static constexpr bool may_hang = MayHang;

    static keyed_options options_of(forewarn::testing::manual_clock clock, forewarn::clock::duration error_pause) {
        keyed_options o;
        o.clock = std::move(clock);
        o.rate_limit = false;
        o.retry.max_attempts = 1;
        o.error_pause = std::chrono::duration_cast<std::chrono::milliseconds>(error_pause);
        return o;
    }
    static keyed_options settled(keyed_options o) { return o; }
    static std::chrono::milliseconds error_pause(const keyed_options& o) { return o.error_pause; }

    forewarn::detail::key_plan plan(std::size_t k) const { return plans.at(k); }
    std::string event_owner() const { return owner; }
    std::string key_url(std::size_t k) const { return endpoint() + "/k" + std::to_string(k); }

    forewarn::result<forewarn::detail::key_reading> read_key(std::size_t k, std::size_t lane,
                                                              std::optional<std::chrono::seconds> hang) {
        using forewarn::errc;
        using forewarn::error;
        std::string url = key_url(k) + "?lane=" + std::to_string(lane);
        if (hang) url += "&hang=" + std::to_string(hang->count()) + "&last=" + etags_[k];
        const auto req = forewarn::detail::metadata_request(forewarn::http_method::get, url, std::chrono::seconds(5),
                                                            std::chrono::seconds(2), 1 << 20);
        auto r = this->x_.send(lane, req, [&](forewarn::http_response& a) -> forewarn::result<forewarn::http_response> {
            if (a.status == 200) return std::move(a);
            if (a.status == 404) return error(errc::not_found, "404 Not Found", 404).at_url(url);
            return error(errc::http_status, "HTTP " + std::to_string(a.status), a.status).at_url(url);
        });
        if (!r) {
            if (r.error().code == errc::not_found) return forewarn::detail::key_reading{};
            return std::move(r).error();
        }
        if (const std::string* etag = forewarn::find_header(r->headers, "ETag")) etags_[k] = *etag;
        if (r->body == "!") return error(errc::parse_error, "k" + std::to_string(k) + ": not a list of ids").at_url(url);
        forewarn::detail::key_reading reading;
        std::size_t from = 0;
        while (from < r->body.size()) {
            const auto comma = r->body.find(',', from);
            forewarn::event e;
            e.id = r->body.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
            e.raw_type = "k" + std::to_string(k);
            reading.events.push_back(std::move(e));
            from = comma == std::string::npos ? r->body.size() : comma + 1;
        }
        if (const std::string* etag = forewarn::find_header(r->headers, "ETag")) reading.tag = *etag;
        reading.service_time = forewarn::detail::service_time_of(*r);
        return reading;
    }

    std::vector<std::string> etags_;  // key k's: written by its own lane's thread, or the caller's between rounds
};

/// `c.next(not_after)` on a thread of its own, counted by the manual clock: wait_idle() returns
/// once it waits on the clock (or has returned). Call wait_idle() before the first advance(): the
/// thread may not have looked at the time yet. Should the test end first, the client is cancelled
/// and the thread joined.
class next_call {
public:
    template <class Client>
    next_call(Client& c, forewarn::testing::manual_clock clock,
              forewarn::clock::time_point not_after = (forewarn::clock::time_point::max)())
        : clock_(std::move(clock)), cancel_([&c] { c.cancel(); }) {
        clock_.thread_started();
        thread_ = std::thread([this, &c, not_after] {
            auto r = c.next(not_after);
            {
                std::lock_guard<std::mutex> lock(mutex_);
                result_.emplace(std::move(r));
            }
            clock_.thread_ended();
        });
        id_ = thread_.get_id();
    }
    next_call(const next_call&) = delete;
    next_call& operator=(const next_call&) = delete;
    ~next_call() {
        if (!thread_.joinable()) return;
        if (!done()) cancel_();
        thread_.join();
    }

    bool done() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return result_.has_value();
    }
    std::thread::id thread_id() const { return id_; }
    /// Its document or error (joins the thread: call it once done() is true).
    forewarn::result<forewarn::document> get() {
        if (thread_.joinable()) thread_.join();
        return std::move(*result_);
    }

private:
    forewarn::testing::manual_clock clock_;
    std::function<void()> cancel_;
    mutable std::mutex mutex_;
    std::optional<forewarn::result<forewarn::document>> result_;
    std::thread thread_;
    std::thread::id id_;
};

}  // namespace forewarn_test
