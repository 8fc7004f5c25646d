// SPDX-License-Identifier: MIT
// forewarn-watch's output lines (lines.hpp): where they go, a change's line for a person, and the
// log's lines, each whole and on one line.
#include "lines.hpp"

#include <forewarn/time.hpp>

#include <chrono>
#include <cstdio>
#include <optional>

namespace watch {

namespace {

service::streams out_streams{stdout, stderr};

std::string_view status_text(const forewarn::event& e) {
    switch (e.status) {
    case forewarn::event_status::scheduled: return "Scheduled";
    case forewarn::event_status::started: return "Started";
    case forewarn::event_status::completed:
    case forewarn::event_status::cancelled:
    case forewarn::event_status::unknown: break;
    }
    return e.raw_status;
}

std::optional<std::string_view> source_text(const forewarn::event& e) {
    if (!e.source) return std::nullopt;
    switch (*e.source) {
    case forewarn::event_source::platform: return std::string_view("Platform");
    case forewarn::event_source::user: return std::string_view("User");
    case forewarn::event_source::unknown: break;
    }
    return std::string_view(e.raw_source);
}

}  // namespace

std::string text_line(const forewarn::change& c) {
    const forewarn::event& e = c.event;
    std::string out(forewarn::to_string(c.kind));
    out.resize(8, ' ');
    out += ' ';
    out += forewarn::to_string(e.type);
    out += ' ';
    out += e.id;
    out += ' ';
    out += status_text(e);
    if (c.kind == forewarn::change_kind::recover) {
        out += " (";
        out += forewarn::to_string(c.reason);
        out += ')';
        if (c.pause) {
            char seen[96];
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(c.pause->longest).count();  // as the JSON
            std::snprintf(seen, sizeof seen, ", paused %lld.%03lld s by the %s clock", static_cast<long long>(ms / 1000),
                          static_cast<long long>(ms % 1000), std::string(c.pause->seen_by()).c_str());
            out += seen;
        }
    }
    if (e.not_before) out += ", not before " + forewarn::format_iso8601(*e.not_before);
    if (!e.resources.empty()) {
        out += ", for ";
        for (std::size_t i = 0; i < e.resources.size(); ++i) out += (i ? "," : "") + e.resources[i];
    }
    if (auto src = source_text(e)) out += ", source " + std::string(*src);
    if (auto d = e.duration()) out += ", " + std::to_string(d->count()) + " s";
    if (!e.description.empty()) out += ": " + e.description;
    return out;
}

void set_streams(service::streams out) { out_streams = out; }
const service::streams& streams() { return out_streams; }

std::string one_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += ch;
        }
    }
    return out;
}

void log_line(std::string_view text) {
    std::string line = "forewarn-watch: ";
    line += one_line(text);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), out_streams.log);
}

}  // namespace watch
