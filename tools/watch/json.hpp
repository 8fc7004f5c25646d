// SPDX-License-Identifier: MIT
#pragma once

// The agent's own JSON, once for every room: the lines it prints beside forewarn's change lines (a
// dry run's, a fleet slot's), its hook journal, the webhook template's values, and the Kubernetes
// API's bodies. Written with forewarn::json_string (strings from a metadata service, etcd or the
// API server may not be valid UTF-8: each bad byte becomes U+FFFD); read with RapidJSON, where a
// member that is missing or of another type is absent, never a crash.

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace watch {

/// One JSON object, members added in order: `{"a":"x","b":true}`.
class json_object {
public:
    json_object& string(std::string_view key, std::string_view value);
    json_object& boolean(std::string_view key, bool value) { return raw(key, value ? "true" : "false"); }
    json_object& integer(std::string_view key, std::int64_t value) { return raw(key, std::to_string(value)); }
    json_object& strings(std::string_view key, const std::vector<std::string>& values);
    /// `json` is JSON text already (a nested object).
    json_object& raw(std::string_view key, std::string_view json);
    std::string str() const { return text_ + "}"; }

private:
    std::string text_ = "{";
};

/// A RapidJSON writer into a string buffer (the Kubernetes API's bodies).
using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;
/// Writes `s` as a JSON string, each byte that is not UTF-8 as U+FFFD.
void json_put(json_writer& w, std::string_view s);
/// Writes the member `key` with `s` as its value (as json_put).
void json_put(json_writer& w, const char* key, std::string_view s);

/// `text` as one JSON value, or nothing when it is not JSON (or not UTF-8), with why in `why`.
std::optional<rapidjson::Document> parse_json(std::string_view text, std::string* why = nullptr);

/// The member `name` of `v` when `v` is an object and has it, else nullptr.
const rapidjson::Value* json_member(const rapidjson::Value& v, const char* name);

/// A string value whole (NUL bytes included).
inline std::string json_text(const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

/// The member `name` of `v` when it is a string, whole; else empty.
std::string json_string_member(const rapidjson::Value& v, const char* name);

}  // namespace watch
