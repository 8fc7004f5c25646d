// SPDX-License-Identifier: MIT
#pragma once

/**
 * The poller's state in a file: `poller_options::state = std::make_shared<forewarn::state_file>(path)`.
 * A restarted process then neither repeats callbacks nor approvals, keeps readiness its handlers
 * gave, and knows what it saw before (the evidence of recover reasons, the boot it saw it in).
 *
 * Format `forewarn-state/2` (one JSON object, UTF-8; events in the form of json.hpp):
 * @code
 * {"format":"forewarn-state/2","cloud":"<cloud>","incarnation":"5",
 *  "events":[{"id":"...","type":"reboot",...}],
 *  "tracked":[{"id":"...","first_seen":"2026-11-22T10:00:00.5Z","last_seen":"...",
 *              "last_seen_service":"...","seen_started":false,"approved":true,"ready":true,
 *              "boot_id":"0e6f..."}],
 *  "coordinator":"..."}
 * @endcode
 * Files of format `forewarn-state/1` (the first version) are read too.
 */

#include <forewarn/config.hpp>
#include <forewarn/detail/event_json.hpp>
#include <forewarn/platform/files.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/event.hpp>
#include <forewarn/json.hpp>
#include <forewarn/result.hpp>
#include <forewarn/poller/state_store.hpp>
#include <forewarn/time.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

namespace detail {

inline constexpr std::string_view state_format_v1 = "forewarn-state/1";
inline constexpr std::string_view state_format_v2 = "forewarn-state/2";

inline void write_optional_time(json_writer& w, const char* name, const std::optional<clock::wall_time_point>& t) {
    if (!t) return;
    w.key(name);
    w.string(format_iso8601(*t, true));
}

inline result<std::optional<clock::wall_time_point>> read_optional_time(const rapidjson::Value& obj, const char* name,
                                                                        const std::string& where) {
    const auto* v = json_member(obj, name);
    if (!v || v->IsNull()) return std::optional<clock::wall_time_point>();
    if (!v->IsString()) return json_type_error(where + name, "string", *v);
    auto t = parse_iso8601(json_string_view(*v));
    if (!t) {
        error e = std::move(t).error();
        e.field = where + name;
        return e;
    }
    return std::optional<clock::wall_time_point>(*t);
}

inline result<bool> read_optional_bool(const rapidjson::Value& obj, const char* name, const std::string& where) {
    const auto* v = json_member(obj, name);
    if (!v || v->IsNull()) return false;
    if (!v->IsBool()) return json_type_error(where + name, "boolean", *v);
    return v->GetBool();
}

// forewarn-state/1: events with not_before_ns / not_before_s, and a list of approved ids.
inline result<event> read_state_v1_event(const rapidjson::Value& ev, const std::string& where) {
    if (!ev.IsObject()) return json_type_error(where, "object", ev);
    // The v1 members are v2's but for not_before and duration: read the rest with read_event.
    auto e = read_event(ev, where.substr(0, where.size() - 1));
    if (!e) return e;
    e->not_before.reset();
    if (const auto* nb = json_member(ev, "not_before_ns")) {
        if (!nb->IsInt64()) return json_type_error(where + "not_before_ns", "integer", *nb);
        e->not_before = clock::wall_time_point(
            std::chrono::duration_cast<clock::wall_time_point::duration>(std::chrono::nanoseconds(nb->GetInt64())));
    } else if (const auto* nbs = json_member(ev, "not_before_s")) {
        using tp = clock::wall_time_point;
        const auto max_s = std::chrono::duration_cast<std::chrono::seconds>((tp::max)().time_since_epoch()).count() - 1;
        if (!nbs->IsInt64() || nbs->GetInt64() > max_s || nbs->GetInt64() < -max_s)
            return json_type_error(where + "not_before_s", "integer seconds within system_clock's range", *nbs);
        e->not_before = tp(std::chrono::duration_cast<tp::duration>(std::chrono::seconds(nbs->GetInt64())));
    }
    e->duration_in_seconds.reset();
    if (const auto* d = json_member(ev, "duration_s")) {
        if (!d->IsInt64()) return json_type_error(where + "duration_s", "integer", *d);
        e->duration_in_seconds = d->GetInt64();
    }
    return e;
}

}  // namespace detail

/// The poller's state in one file, replaced atomically at each save.
class state_file final : public state_store {
public:
    explicit state_file(std::string path) : path_(std::move(path)) {}

    const std::string& path() const noexcept { return path_; }
    std::string where() const override { return path_; }

    /// The saved state; errc::not_found when the file does not exist (a first run). Temporary files
    /// of writes cut short by a crash are removed (platform::remove_stale_temporaries).
    result<poller_state> load() override {
        platform::remove_stale_temporaries(platform::path_from_utf8(path_));
        auto text = platform::read_small_file(platform::path_from_utf8(path_));
        if (!text) return std::move(text).error();
        auto st = read(*text);
        if (!st) {
            error e = std::move(st).error();
            e.message = "state file " + path_ + ": " + e.message;
            return e;
        }
        return st;
    }

    /// Replaces the file (a temporary in the same directory, then a rename over the old one).
    result<void> save(const poller_state& st) override {
        auto text = write(st);
        if (!text) {
            error e = std::move(text).error();
            e.message = "cannot save the state file " + path_ + ": " + e.message;
            return e;
        }
        return platform::write_file_atomically(platform::path_from_utf8(path_), *text);
    }

    /// The file's text for a state; an error when a string in it is not valid UTF-8.
    static result<std::string> write(const poller_state& st) {
        detail::json_writer w;
        w.begin_object();
        w.key("format");
        w.string(detail::state_format_v2);
        w.key("cloud");
        w.string(to_string(st.delivered.origin));
        w.key("incarnation");
        w.string(st.delivered.incarnation);
        w.key("events");
        w.begin_array();
        for (const auto& e : st.delivered.events) {
            w.begin_object();
            detail::write_event_members(w, e);
            w.end_object();
        }
        w.end_array();
        w.key("tracked");
        w.begin_array();
        for (const auto& s : st.events) {
            w.begin_object();
            w.key("id");
            w.string(s.id);
            detail::write_optional_time(w, "first_seen", s.first_seen);
            detail::write_optional_time(w, "last_seen", s.last_seen);
            detail::write_optional_time(w, "last_seen_service", s.last_seen_service);
            w.key("seen_started");
            w.boolean(s.seen_started);
            w.key("approved");
            w.boolean(s.approved);
            w.key("ready");
            w.boolean(s.ready);
            w.key("boot_id");
            w.string(s.boot_id);
            w.end_object();
        }
        w.end_array();
        w.key("coordinator");
        w.string(st.coordinator);
        w.end_object();
        if (!w.complete()) return error(errc::invalid_argument, "the state holds text that is not valid UTF-8");
        return w.str();
    }

    /// A state back from a file's text (format 2, or the first version's format 1).
    static result<poller_state> read(std::string_view text) {
        auto parsed = detail::parse_json(text);
        if (!parsed) return std::move(parsed).error();
        const rapidjson::Document& root = *parsed;
        if (!root.IsObject()) return detail::json_type_error("", "object", root);
        auto format = detail::json_optional_string(root, "format", "");
        if (!format) return std::move(format).error();
        const bool v1 = *format == detail::state_format_v1;
        if (!v1 && *format != detail::state_format_v2)
            return detail::json_shape_error("format", "unknown state format \"" + *format + "\"");
        poller_state st;
        auto origin = detail::json_optional_string(root, "cloud", "");
        if (!origin) return std::move(origin).error();
        st.delivered.origin = cloud_from_string(*origin);
        auto inc = detail::json_optional_string(root, "incarnation", "");
        if (!inc) return std::move(inc).error();
        st.delivered.incarnation = std::move(*inc);

        const auto* events = detail::json_member(root, "events");
        if (!events || !events->IsArray()) return detail::json_shape_error("events", "missing or not an array");
        for (rapidjson::SizeType i = 0; i < events->Size(); ++i) {
            const std::string where = "events[" + std::to_string(i) + "]";
            auto e = v1 ? detail::read_state_v1_event((*events)[i], where + ".") : detail::read_event((*events)[i], where);
            if (!e) return std::move(e).error();
            st.delivered.events.push_back(std::move(*e));
        }
        if (v1) {
            // The first version kept only the approved ids.
            if (const auto* approved = detail::json_member(root, "approved")) {
                if (!approved->IsArray()) return detail::json_type_error("approved", "array", *approved);
                for (rapidjson::SizeType i = 0; i < approved->Size(); ++i) {
                    if (!(*approved)[i].IsString()) return detail::json_type_error("approved", "string", (*approved)[i]);
                    saved_event s;
                    s.id = std::string(detail::json_string_view((*approved)[i]));
                    s.approved = true;
                    st.events.push_back(std::move(s));
                }
            }
            return st;
        }
        if (const auto* tracked = detail::json_member(root, "tracked")) {
            if (!tracked->IsArray()) return detail::json_type_error("tracked", "array", *tracked);
            for (rapidjson::SizeType i = 0; i < tracked->Size(); ++i) {
                const auto& t = (*tracked)[i];
                const std::string where = "tracked[" + std::to_string(i) + "].";
                if (!t.IsObject()) return detail::json_type_error(where, "object", t);
                saved_event s;
                auto id = detail::json_optional_string(t, "id", where);
                if (!id) return std::move(id).error();
                if (id->empty()) return detail::json_shape_error(where + "id", "missing or empty");
                s.id = std::move(*id);
                for (auto [name, target] : {std::pair<const char*, std::optional<clock::wall_time_point>*>{"first_seen", &s.first_seen},
                                            {"last_seen", &s.last_seen},
                                            {"last_seen_service", &s.last_seen_service}}) {
                    auto tp = detail::read_optional_time(t, name, where);
                    if (!tp) return std::move(tp).error();
                    *target = *tp;
                }
                for (auto [name, target] : {std::pair<const char*, bool*>{"seen_started", &s.seen_started},
                                            {"approved", &s.approved},
                                            {"ready", &s.ready}}) {
                    auto b = detail::read_optional_bool(t, name, where);
                    if (!b) return std::move(b).error();
                    *target = *b;
                }
                auto boot = detail::json_optional_string(t, "boot_id", where);
                if (!boot) return std::move(boot).error();
                s.boot_id = std::move(*boot);
                st.events.push_back(std::move(s));
            }
        }
        auto coord = detail::json_optional_string(root, "coordinator", "");
        if (!coord) return std::move(coord).error();
        st.coordinator = std::move(*coord);
        return st;
    }

private:
    std::string path_;
};

FOREWARN_END_NAMESPACE
