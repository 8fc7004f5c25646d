// SPDX-License-Identifier: MIT
#pragma once

// A stream transport (transport/stream.hpp) that answers from a script, for unit tests of what
// streams over it (etcd's watch, fault_transport's cut): each answer is a status, the lines a
// stream delivers and how it ends. Copies share the script and the log, as fake_transport's do.

#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>
#include <forewarn/transport/stream.hpp>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace forewarn_test {

class scripted_stream {
public:
    struct answer {
        int status = 200;
        std::string body;                     ///< send()'s body, or a non-2xx stream's
        std::vector<std::string> lines;       ///< a 2xx stream's messages
        std::optional<forewarn::error> fail;  ///< how the stream (or the send) ends, if badly
    };

    scripted_stream() : state_(std::make_shared<state>()) {}

    scripted_stream& push(answer a) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->script.push_back(std::move(a));
        return *this;
    }
    std::vector<forewarn::http_request> requests() const {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->log;
    }

    forewarn::result<forewarn::http_response> send(const forewarn::http_request& request) {
        auto a = next(request);
        if (!a) return a.error();
        if (a->fail) return *a->fail;
        forewarn::http_response r;
        r.status = a->status;
        r.body = a->body;
        return r;
    }

    forewarn::result<forewarn::http_response> send_stream(const forewarn::http_request& request, forewarn::stream_sink sink) {
        auto a = next(request);
        if (!a) return a.error();
        forewarn::http_response r;
        r.status = a->status;
        if (a->status < 200 || a->status > 299) {
            r.body = a->body;
            return r;
        }
        for (const auto& line : a->lines)
            if (!sink(line)) return r;
        if (a->fail) return *a->fail;
        return r;
    }

    void cancel() noexcept {}
    void reset() noexcept {}

private:
    struct state {
        mutable std::mutex mutex;
        std::deque<answer> script;
        std::vector<forewarn::http_request> log;
    };

    forewarn::result<answer> next(const forewarn::http_request& request) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->log.push_back(request);
        if (state_->script.empty()) return forewarn::error(forewarn::errc::transport, "scripted_stream: no answer for " + request.url);
        auto a = std::move(state_->script.front());
        state_->script.pop_front();
        return a;
    }

    std::shared_ptr<state> state_;
};

static_assert(forewarn::is_transport_v<scripted_stream>);
static_assert(forewarn::is_stream_transport_v<scripted_stream>);

}  // namespace forewarn_test
