// SPDX-License-Identifier: MIT
#pragma once

// The agent's own JSON: the lines it prints beside forewarn's change lines (a dry run's, a fleet
// slot's), its hook journal, and the webhook template's values. Written with
// forewarn::json_string (strings from a metadata service or etcd may not be valid UTF-8: each bad
// byte becomes U+FFFD); read with RapidJSON from text the agent wrote itself.

#include <forewarn/json.hpp>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace watch {

/// One JSON object, members added in order: `{"a":"x","b":true}`.
class json_object {
public:
    json_object& string(std::string_view key, std::string_view value) {
        return raw(key, forewarn::json_string(value, forewarn::invalid_utf8::replace).value_or("\"\""));
    }
    json_object& boolean(std::string_view key, bool value) { return raw(key, value ? "true" : "false"); }
    json_object& integer(std::string_view key, std::int64_t value) { return raw(key, std::to_string(value)); }
    json_object& strings(std::string_view key, const std::vector<std::string>& values) {
        std::string list = "[";
        for (const auto& v : values)
            list += (list.size() > 1 ? "," : "") + forewarn::json_string(v, forewarn::invalid_utf8::replace).value_or("\"\"");
        return raw(key, list + "]");
    }
    /// `json` is JSON text already (a nested object).
    json_object& raw(std::string_view key, std::string_view json) {
        text_ += text_.size() > 1 ? "," : "";
        text_ += forewarn::json_string(key, forewarn::invalid_utf8::replace).value_or("\"\"");
        text_ += ':';
        text_ += json;
        return *this;
    }
    std::string str() const { return text_ + "}"; }

private:
    std::string text_ = "{";
};

/// `text` as one JSON value, or nothing when it is not JSON (or not UTF-8), with why in `why`.
inline std::optional<rapidjson::Document> parse_json(std::string_view text, std::string* why = nullptr) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
    if (!doc.HasParseError()) return doc;
    if (why)
        *why = std::string("malformed JSON at byte ") + std::to_string(doc.GetErrorOffset()) + ": " +
               rapidjson::GetParseError_En(doc.GetParseError());
    return std::nullopt;
}

/// The member `name` of `v` when `v` is an object and has it, else nullptr.
inline const rapidjson::Value* json_member(const rapidjson::Value& v, const char* name) {
    if (!v.IsObject()) return nullptr;
    auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

/// A string value whole (NUL bytes included).
inline std::string json_text(const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

}  // namespace watch
