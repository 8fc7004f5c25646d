// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>
#include <forewarn/transport/default.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>
#include <forewarn/transport/stream.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace testing {

/// Which requests a fault applies to: every field given must hold.
struct request_match {
    std::optional<http_method> method;
    /// The URL's path (the query left out) ends with this, e.g. "/kv/range" for etcd's range
    /// read under /v3 or /v3beta, "/latest/api/token" for a session token's PUT; "" for any.
    std::string path_ends_with;
    /// The request's body holds this, e.g. "range_end" for etcd's prefix reads; "" for any.
    std::string body_contains;
};

/// What happens to a request a fault takes.
enum class fault_kind {
    fail,           ///< never sent: an error (`code`, `message`) at once
    lose_response,  ///< sent and answered, the answer dropped: an error as if the connection broke
                    ///< mid-body (the server did act: the ambiguous failure of a write)
    delay,          ///< sent after `delay` (cut short by cancel(): errc::cancelled), answered as usual
    cut_stream,     ///< a stream (send_stream) delivers `messages` messages, then breaks in the middle
                    ///< of the next one: errc::transport, that message never delivered. On send()
                    ///< it is lose_response.
};

/// One fault: of the requests that match, the first `after` pass, the next `count` are taken.
struct fault {
    request_match match;
    fault_kind kind = fault_kind::fail;
    std::size_t after = 0;
    std::size_t count = (std::numeric_limits<std::size_t>::max)();
    errc code = errc::transport;
    std::string message = "injected fault";
    std::chrono::milliseconds delay{0};
    std::size_t messages = 0;  ///< cut_stream: the messages delivered before the cut
};

/**
 * A transport that wraps another and injects faults into chosen requests: fail the Nth etcd
 * range read, lose the answer to a txn, delay an approval, cut a watch's stream. For tests of
 * what a client, the poller or the fleet budget promise when the network fails at one precise
 * point. Copies share their faults and counters (a budget copies its transport into two clients);
 * each copy keeps its own inner transport. It streams (send_stream, transport/stream.hpp) when
 * `Inner` can: through its own copy of Inner's stream transport.
 *
 * @code
 * forewarn::testing::fault_transport<> t;  // over the platform's default transport
 * forewarn::testing::fault f;
 * f.match.path_ends_with = "/kv/range";
 * f.match.body_contains = "range_end";  // prefix reads only
 * f.after = 2;                          // the third one and every later one fail
 * t.add(f);
 * @endcode
 */
template <class Inner = default_transport>
class fault_transport {
public:
    fault_transport() : fault_transport(Inner()) {}
    explicit fault_transport(Inner inner)
        : inner_(std::move(inner)), stream_(detail::make_stream_for(inner_)), state_(std::make_shared<state>()) {}

    /// Adds a fault; its number for taken(). Faults are looked at in the order added: the first
    /// that takes a request decides.
    std::size_t add(fault f) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->faults.push_back({std::move(f), 0, 0, true});
        return state_->faults.size() - 1;
    }
    /// Stops a fault (its counters stay readable); every later request passes it by.
    void remove(std::size_t id) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        if (id < state_->faults.size()) state_->faults[id].active = false;
    }
    /// Stops every fault.
    void clear() {
        std::lock_guard<std::mutex> lock(state_->mutex);
        for (auto& f : state_->faults) f.active = false;
    }
    /// How many requests fault `id` has matched, and how many it has taken.
    std::size_t matched(std::size_t id) const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return id < state_->faults.size() ? state_->faults[id].matched : 0;
    }
    std::size_t taken(std::size_t id) const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return id < state_->faults.size() ? state_->faults[id].taken : 0;
    }
    /// Requests sent through every copy, faults or not.
    std::size_t requests() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->requests;
    }

    result<http_response> send(const http_request& request) {
        const std::optional<fault> hit = take(request);
        if (!hit) return inner_.send(request);
        switch (hit->kind) {
        case fault_kind::fail: return error(hit->code, hit->message + " (" + request.url + ")");
        case fault_kind::cut_stream:
        case fault_kind::lose_response: {
            auto r = inner_.send(request);
            if (!r) return r;
            return error(hit->code, hit->message + ": the answer was lost (" + request.url + ")");
        }
        case fault_kind::delay:
            if (!wait_delay(*hit)) return error(errc::cancelled, "request cancelled");
            break;
        }
        return inner_.send(request);
    }

    /// Streams through Inner's stream transport (only when Inner can stream), with the faults:
    /// `fail` at once, `delay` before, `cut_stream` (and `lose_response`) after `messages` messages.
    template <class I = Inner, std::enable_if_t<can_stream_v<I>, int> = 0>
    result<http_response> send_stream(const http_request& request, stream_sink on_message) {
        const std::optional<fault> hit = take(request);
        if (!hit) return stream_.send_stream(request, on_message);
        switch (hit->kind) {
        case fault_kind::fail: return error(hit->code, hit->message + " (" + request.url + ")");
        case fault_kind::delay:
            if (!wait_delay(*hit)) return error(errc::cancelled, "request cancelled");
            return stream_.send_stream(request, on_message);
        case fault_kind::cut_stream:
        case fault_kind::lose_response: break;
        }
        std::size_t passed = 0;
        bool cut = false, stopped = false;
        auto counted = [&](std::string_view message) {
            if (passed == hit->messages) {
                cut = true;
                return false;
            }
            ++passed;
            if (on_message(message)) return true;
            stopped = true;
            return false;
        };
        auto r = stream_.send_stream(request, counted);
        if (!r || stopped || !cut) return r;
        return error(hit->code, hit->message + ": the stream was cut in the middle of a message (" + request.url + ")");
    }
    /// Cancels the inner transport's request and any delay (of every copy, as their faults are shared).
    void cancel() noexcept {
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            state_->cancelled = true;
        }
        state_->cv.notify_all();
        inner_.cancel();
        stream_.cancel();
    }
    void reset() noexcept {
        {
            std::lock_guard<std::mutex> lock(state_->mutex);
            state_->cancelled = false;
        }
        inner_.reset();
        stream_.reset();
    }

    Inner& inner() noexcept { return inner_; }

private:
    // The first active fault that takes `request`, counted.
    std::optional<fault> take(const http_request& request) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        ++state_->requests;
        for (auto& f : state_->faults) {
            if (!f.active || !matches(f.spec.match, request)) continue;
            const std::size_t nth = f.matched++;
            if (nth < f.spec.after || f.taken >= f.spec.count) continue;
            ++f.taken;
            return f.spec;
        }
        return std::nullopt;
    }
    // False when cancel() cut the delay short.
    bool wait_delay(const fault& f) {
        std::unique_lock<std::mutex> lock(state_->mutex);
        return !state_->cv.wait_for(lock, f.delay, [&] { return state_->cancelled; });
    }

    struct entry {
        fault spec;
        std::size_t matched;
        std::size_t taken;
        bool active;
    };
    struct state {
        mutable std::mutex mutex;
        std::condition_variable cv;
        bool cancelled = false;
        std::vector<entry> faults;
        std::size_t requests = 0;
    };

    static bool matches(const request_match& m, const http_request& r) {
        if (m.method && *m.method != r.method) return false;
        if (!m.path_ends_with.empty()) {
            std::string_view path = r.url;
            if (const auto q = path.find_first_of("?#"); q != std::string_view::npos) path = path.substr(0, q);
            if (path.size() < m.path_ends_with.size() ||
                path.substr(path.size() - m.path_ends_with.size()) != m.path_ends_with)
                return false;
        }
        return m.body_contains.empty() || r.body.find(m.body_contains) != std::string::npos;
    }

    Inner inner_;
    detail::stream_or_none_t<Inner> stream_;  // Inner's stream transport, or a stand-in
    std::shared_ptr<state> state_;
};

}  // namespace testing
FOREWARN_END_NAMESPACE
