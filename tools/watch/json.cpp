// SPDX-License-Identifier: MIT
// The agent's own JSON (json.hpp).
#include "json.hpp"

#include <forewarn/json.hpp>

#include <rapidjson/error/en.h>

namespace watch {

namespace {

std::string quoted(std::string_view s) { return forewarn::json_string(s, forewarn::invalid_utf8::replace).value_or("\"\""); }

}  // namespace

json_object& json_object::string(std::string_view key, std::string_view value) { return raw(key, quoted(value)); }

json_object& json_object::strings(std::string_view key, const std::vector<std::string>& values) {
    std::string list = "[";
    for (const auto& v : values) list += (list.size() > 1 ? "," : "") + quoted(v);
    return raw(key, list + "]");
}

json_object& json_object::raw(std::string_view key, std::string_view json) {
    text_ += text_.size() > 1 ? "," : "";
    text_ += quoted(key);
    text_ += ':';
    text_ += json;
    return *this;
}

void json_put(json_writer& w, std::string_view s) {
    const std::string json = quoted(s);
    w.RawValue(json.data(), json.size(), rapidjson::kStringType);
}

void json_put(json_writer& w, const char* key, std::string_view s) {
    w.Key(key);
    json_put(w, s);
}

std::optional<rapidjson::Document> parse_json(std::string_view text, std::string* why) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
    if (!doc.HasParseError()) return doc;
    if (why)
        *why = std::string("malformed JSON at byte ") + std::to_string(doc.GetErrorOffset()) + ": " +
               rapidjson::GetParseError_En(doc.GetParseError());
    return std::nullopt;
}

const rapidjson::Value* json_member(const rapidjson::Value& v, const char* name) {
    if (!v.IsObject()) return nullptr;
    auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string json_string_member(const rapidjson::Value& v, const char* name) {
    const rapidjson::Value* m = json_member(v, name);
    return m && m->IsString() ? json_text(*m) : std::string();
}

}  // namespace watch
