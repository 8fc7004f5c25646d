// SPDX-License-Identifier: MIT
#pragma once

// The logging hook: forewarn never writes to stderr or a file itself. Give a logger to the
// clients (client_options::log) and the poller reports through the same one: each request at
// debug, retry decisions at info, approvals and failures at warn/error. See docs/poller.md for
// an spdlog adapter.

#include <forewarn/config.hpp>
#include <forewarn/detail/std_function.hpp>

#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE

/// How much a log line matters; the same order and meaning as spdlog's levels.
enum class log_level { trace, debug, info, warn, error, off };

/// "trace", "debug", "info", "warn", "error" or "off".
constexpr std::string_view to_string(log_level l) noexcept {
    switch (l) {
    case log_level::trace: return "trace";
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::warn: return "warn";
    case log_level::error: return "error";
    case log_level::off: return "off";
    }
    return "off";
}

/// One log line: a level, the message, and what it concerns when known.
struct log_record {
    log_level level = log_level::info;
    std::string_view message;
    std::string_view url;       ///< the request's URL, when the line is about one
    std::string_view event_id;  ///< the event, when the line is about one
};

/**
 * Where forewarn's log lines go: a sink and the lowest level it wants. Empty (the default), it
 * costs one branch per line: messages are only built for a level that is enabled. The sink is
 * called from forewarn's threads, possibly several at once; it must not throw.
 */
struct logger {
    log_level level = log_level::info;
    std::function<void(const log_record&)> sink;

    bool enabled(log_level l) const noexcept { return sink && l >= level && l != log_level::off; }

    void operator()(log_level l, std::string_view message, std::string_view url = {},
                    std::string_view event_id = {}) const noexcept;
};

// Short bodies that need nothing more stay here (the rule: docs/architecture.md).
inline void logger::operator()(log_level l, std::string_view message, std::string_view url,
                                        std::string_view event_id) const noexcept {
    if (!enabled(l)) return;
    try {
        sink(log_record{l, message, url, event_id});
    } catch (...) {
        // A sink that throws loses its line; forewarn goes on.
    }
}

FOREWARN_END_NAMESPACE

