// SPDX-License-Identifier: MIT
#pragma once

// Reading the API server's JSON (a member that may be missing or of another type is absent, never
// a crash) and writing text that may come from the network into it (invalid UTF-8 becomes
// U+FFFD, so the server always gets well-formed JSON). Shared by node.cpp and drain.cpp.

#include <forewarn/json.hpp>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>

namespace watch::kubernetes::fields {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

inline void put(writer& w, const std::string& s) {
    const std::string json = forewarn::json_string(s, forewarn::invalid_utf8::replace).value_or("\"\"");
    w.RawValue(json.data(), json.size(), rapidjson::kStringType);
}

inline const rapidjson::Value* member(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject()) return nullptr;
    auto m = object.FindMember(name);
    return m == object.MemberEnd() ? nullptr : &m->value;
}

inline std::string member_string(const rapidjson::Value& object, const char* name) {
    const rapidjson::Value* v = member(object, name);
    if (!v || !v->IsString()) return {};
    return std::string(v->GetString(), v->GetStringLength());
}

}  // namespace watch::kubernetes::fields
