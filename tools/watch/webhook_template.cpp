// SPDX-License-Identifier: MIT
// --webhook-template's parse and render (webhook_template.hpp).
#include "webhook_template.hpp"

#include "json.hpp"

#include <forewarn/diff.hpp>
#include <forewarn/json.hpp>

#include <cstdio>
#include <string>

namespace watch {

std::string webhook_template::parse(std::string text) {
    static const char* const known[] = {"json",        "change",      "cloud",      "id",         "type",
                                        "raw_type",    "status",      "raw_status", "resource_type", "resources",
                                        "not_before",  "description", "source",     "raw_source", "duration_s",
                                        "reason",      "evidence",    "observed_pause_s", "observed_pause_seen_by",
                                        "incarnation"};
    parts_.clear();
    std::size_t at = 0;
    while (at < text.size()) {
        const auto open = text.find("{{", at);
        if (open == std::string::npos) break;
        const auto close = text.find("}}", open + 2);
        if (close == std::string::npos) return "--webhook-template: \"{{\" at byte " + std::to_string(open) + " is never closed";
        const std::string name = text.substr(open + 2, close - open - 2);
        bool ok = false;
        for (const char* k : known) ok = ok || name == k;
        if (!ok) return "--webhook-template: unknown placeholder {{" + name + "}}";
        parts_.push_back({text.substr(at, open - at), name});
        at = close + 2;
    }
    parts_.push_back({text.substr(at), {}});
    // What it gives for a change must be JSON, whatever the change holds.
    forewarn::change sample;
    sample.event.id = "quote\" backslash\\ newline\n";
    sample.event.resources = {"vm0", "vm\"1"};
    auto body = render(forewarn::to_json(sample, forewarn::invalid_utf8::replace).value_or("{}"));
    if (std::string why; !parse_json(body, &why)) return "--webhook-template does not give JSON: " + why;
    return {};
}

std::string webhook_template::render(const std::string& line) const {
    auto doc = parse_json(line);
    std::string out;
    for (const auto& p : parts_) {
        out += p.text;
        if (p.name.empty()) continue;
        if (p.name == "json") {
            out += line;
            continue;
        }
        std::string value;
        if (doc && doc->IsObject()) {
            if (const auto* v = json_member(*doc, p.name.c_str())) {
                if (v->IsString()) value = json_text(*v);
                else if (v->IsInt64()) value = std::to_string(v->GetInt64());
                else if (v->IsNumber()) {
                    char num[32];
                    std::snprintf(num, sizeof num, "%.3f", v->GetDouble());
                    value = num;
                }
                else if (v->IsBool()) value = v->GetBool() ? "true" : "false";
                else if (v->IsArray())
                    for (const auto& item : v->GetArray())
                        if (item.IsString()) value += (value.empty() ? "" : ", ") + json_text(item);
            }
        }
        // Valid UTF-8: it came out of a JSON text.
        const std::string quoted = forewarn::json_string(value, forewarn::invalid_utf8::replace).value_or("\"\"");
        out += quoted.size() >= 2 ? quoted.substr(1, quoted.size() - 2) : std::string();
    }
    return out;
}

}  // namespace watch
