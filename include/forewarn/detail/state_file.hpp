// SPDX-License-Identifier: MIT
#pragma once

// The poller's state file: the last document whose changes were all delivered, and the ids it
// approved, so that a restarted process neither repeats callbacks nor approvals.
//
// Format (one JSON object, UTF-8; documented in docs/poller.md):
//   {"format":"forewarn-state/1","cloud":"azure","incarnation":"5",
//    "events":[{"id":"...","type":"reboot","raw_type":"Reboot","status":"scheduled",
//               "raw_status":"Scheduled","resource_type":"VirtualMachine","resources":["vm_0"],
//               "not_before_ns":1649716018000000000,"description":"...","source":"user",
//               "raw_source":"User","duration_s":5}],
//    "approved":["..."]}
// Enumerators by their to_string() names beside the wire strings, so an event read back compares
// equal to the one the client parses; not_before is nanoseconds since the Unix epoch; absent
// members mean absent (no NotBefore, no EventSource, no DurationInSeconds).

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

inline constexpr std::string_view state_format = "forewarn-state/1";

/// What a state file holds.
struct poller_state {
    document last;                      ///< the last document fully delivered
    std::vector<std::string> approved;  ///< ids approved among its events
};

/// The enumerators back from their to_string() names (the file stores both, so that wire strings
/// this version does not know survive a restart unchanged).
inline event_type state_event_type(std::string_view name) noexcept {
    for (auto t : {event_type::freeze, event_type::reboot, event_type::redeploy, event_type::preempt,
                   event_type::terminate, event_type::live_migrate, event_type::host_terminate, event_type::preempted})
        if (to_string(t) == name) return t;
    return event_type::unknown;
}

inline event_status state_event_status(std::string_view name) noexcept {
    for (auto st : {event_status::scheduled, event_status::started})
        if (to_string(st) == name) return st;
    return event_status::unknown;
}

inline event_source state_event_source(std::string_view name) noexcept {
    for (auto src : {event_source::platform, event_source::user})
        if (to_string(src) == name) return src;
    return event_source::unknown;
}

/// The state as JSON text; an error when a string in it is not valid UTF-8 (JSON cannot hold it).
inline result<std::string> write_state(const poller_state& st) {
    json_writer w;
    w.begin_object();
    w.key("format");
    w.string(state_format);
    w.key("cloud");
    w.string(to_string(st.last.origin));
    w.key("incarnation");
    w.string(st.last.incarnation);
    w.key("events");
    w.begin_array();
    for (const auto& e : st.last.events) {
        w.begin_object();
        w.key("id");
        w.string(e.id);
        w.key("type");
        w.string(to_string(e.type));
        w.key("raw_type");
        w.string(e.raw_type);
        w.key("status");
        w.string(to_string(e.status));
        w.key("raw_status");
        w.string(e.raw_status);
        w.key("resource_type");
        w.string(e.resource_type);
        w.key("resources");
        w.begin_array();
        for (const auto& r : e.resources) w.string(r);
        w.end_array();
        if (e.not_before) {
            // Nanoseconds since the epoch overflow int64 after 2262; where system_clock reaches
            // further (MSVC, libc++), such a time is kept as whole seconds instead.
            const auto since = e.not_before->time_since_epoch();
            const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since).count();
            if (secs > -9'000'000'000LL && secs < 9'000'000'000LL) {
                w.key("not_before_ns");
                w.int64(static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since).count()));
            } else {
                w.key("not_before_s");
                w.int64(static_cast<std::int64_t>(secs));
            }
        }
        w.key("description");
        w.string(e.description);
        if (e.source) {
            w.key("source");
            w.string(to_string(*e.source));
            w.key("raw_source");
            w.string(e.raw_source);
        }
        if (e.duration_in_seconds) {
            w.key("duration_s");
            w.int64(*e.duration_in_seconds);
        }
        w.end_object();
    }
    w.end_array();
    w.key("approved");
    w.begin_array();
    for (const auto& id : st.approved) w.string(id);
    w.end_array();
    w.end_object();
    if (!w.complete()) return error(errc::invalid_argument, "the state holds text that is not valid UTF-8");
    return w.str();
}

inline result<std::string> state_string(const rapidjson::Value& obj, const char* name, const std::string& where,
                                        bool required = true) {
    const auto* v = json_member(obj, name);
    if (!v) {
        if (required) return json_shape_error(where + name, "missing");
        return std::string();
    }
    if (!v->IsString()) return json_type_error(where + name, "string", *v);
    return std::string(json_string_view(*v));
}

inline result<poller_state> read_state(std::string_view text) {
    auto parsed = parse_json(text);
    if (!parsed) return parsed.error();
    const rapidjson::Document& root = *parsed;
    if (!root.IsObject()) return json_type_error("", "object", root);
    auto format = state_string(root, "format", "");
    if (!format) return format.error();
    if (*format != state_format) return json_shape_error("format", "unknown state format \"" + *format + "\"");
    poller_state st;
    auto origin = state_string(root, "cloud", "");
    if (!origin) return origin.error();
    st.last.origin = *origin == "azure" ? cloud::azure : *origin == "gce" ? cloud::gce : cloud::none;
    auto inc = state_string(root, "incarnation", "");
    if (!inc) return inc.error();
    st.last.incarnation = std::move(*inc);

    const auto* events = json_member(root, "events");
    if (!events || !events->IsArray()) return json_shape_error("events", "missing or not an array");
    for (rapidjson::SizeType i = 0; i < events->Size(); ++i) {
        const auto& ev = (*events)[i];
        const std::string where = "events[" + std::to_string(i) + "].";
        if (!ev.IsObject()) return json_type_error(where, "object", ev);
        event e;
        auto id = state_string(ev, "id", where);
        if (!id) return id.error();
        e.id = std::move(*id);
        auto type = state_string(ev, "type", where);
        if (!type) return type.error();
        e.type = state_event_type(*type);
        auto raw_type = state_string(ev, "raw_type", where, false);
        if (!raw_type) return raw_type.error();
        e.raw_type = std::move(*raw_type);
        auto status = state_string(ev, "status", where);
        if (!status) return status.error();
        e.status = state_event_status(*status);
        auto raw_status = state_string(ev, "raw_status", where, false);
        if (!raw_status) return raw_status.error();
        e.raw_status = std::move(*raw_status);
        auto rt = state_string(ev, "resource_type", where, false);
        if (!rt) return rt.error();
        e.resource_type = std::move(*rt);
        if (const auto* res = json_member(ev, "resources")) {
            if (!res->IsArray()) return json_type_error(where + "resources", "array", *res);
            for (rapidjson::SizeType j = 0; j < res->Size(); ++j) {
                if (!(*res)[j].IsString()) return json_type_error(where + "resources", "string", (*res)[j]);
                e.resources.emplace_back(json_string_view((*res)[j]));
            }
        }
        if (const auto* nb = json_member(ev, "not_before_ns")) {
            if (!nb->IsInt64()) return json_type_error(where + "not_before_ns", "integer", *nb);
            e.not_before = std::chrono::system_clock::time_point(
                std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(nb->GetInt64())));
        } else if (const auto* nbs = json_member(ev, "not_before_s")) {
            using tp = std::chrono::system_clock::time_point;
            const auto max_s = std::chrono::duration_cast<std::chrono::seconds>((tp::max)().time_since_epoch()).count() - 1;
            if (!nbs->IsInt64() || nbs->GetInt64() > max_s || nbs->GetInt64() < -max_s)
                return json_type_error(where + "not_before_s", "integer seconds within system_clock's range", *nbs);
            e.not_before = tp(std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(nbs->GetInt64())));
        }
        auto desc = state_string(ev, "description", where, false);
        if (!desc) return desc.error();
        e.description = std::move(*desc);
        if (json_member(ev, "source")) {
            auto src = state_string(ev, "source", where);
            if (!src) return src.error();
            e.source = state_event_source(*src);
            auto raw_src = state_string(ev, "raw_source", where, false);
            if (!raw_src) return raw_src.error();
            e.raw_source = std::move(*raw_src);
        }
        if (const auto* d = json_member(ev, "duration_s")) {
            if (!d->IsInt64()) return json_type_error(where + "duration_s", "integer", *d);
            e.duration_in_seconds = d->GetInt64();
        }
        st.last.events.push_back(std::move(e));
    }
    if (const auto* approved = json_member(root, "approved")) {
        if (!approved->IsArray()) return json_type_error("approved", "array", *approved);
        for (rapidjson::SizeType i = 0; i < approved->Size(); ++i) {
            if (!(*approved)[i].IsString()) return json_type_error("approved", "string", (*approved)[i]);
            st.approved.emplace_back(json_string_view((*approved)[i]));
        }
    }
    return st;
}

/// Reads a whole file of at most `max_bytes`; errc::not_found when it does not exist.
inline result<std::string> read_small_file(const std::filesystem::path& path, std::uintmax_t max_bytes = 16u << 20) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return error(errc::not_found, "no state file at " + path.string());
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return error(errc::io_error, "cannot read " + path.string() + ": " + ec.message());
    if (size > max_bytes) return error(errc::io_error, path.string() + " is larger than " + std::to_string(max_bytes) + " bytes");
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(errc::io_error, "cannot open " + path.string());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return error(errc::io_error, "cannot read " + path.string());
    return text;
}

/**
 * Writes `text` to `path` atomically: a temporary file in the same directory, then a rename over
 * the old one, so a crash leaves either the old state or the new one, never half of one.
 */
inline result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text) {
    thread_local std::minstd_rand rng(std::random_device{}());
    std::filesystem::path tmp = path;
    tmp += ".tmp-" + std::to_string(rng());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return error(errc::io_error, "cannot create " + tmp.string());
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.flush();
        if (!out) {
            out.close();
            std::error_code ignored;
            std::filesystem::remove(tmp, ignored);
            return error(errc::io_error, "cannot write " + tmp.string());
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        return error(errc::io_error, "cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
    }
    return {};
}

}  // namespace detail
FOREWARN_END_NAMESPACE
