// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/json.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/json.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE std::size_t utf8_sequence_length(const unsigned char* p, std::size_t left) noexcept {
    const unsigned c = p[0];
    auto follows = [&](std::size_t i, unsigned lo, unsigned hi) { return i < left && p[i] >= lo && p[i] <= hi; };
    if (c >= 0xC2 && c <= 0xDF) return follows(1, 0x80, 0xBF) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return follows(1, lo, hi) && follows(2, 0x80, 0xBF) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return follows(1, lo, hi) && follows(2, 0x80, 0xBF) && follows(3, 0x80, 0xBF) ? 4 : 0;
    }
    return 0;
}

FOREWARN_INLINE error json_shape_error(std::string field, std::string what) {
    error e(errc::invalid_document, std::move(what));
    e.field = std::move(field);
    return e;
}

FOREWARN_INLINE std::string_view json_type_name(const rapidjson::Value& v) noexcept {
    switch (v.GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return "boolean";
    case rapidjson::kObjectType: return "object";
    case rapidjson::kArrayType: return "array";
    case rapidjson::kStringType: return "string";
    case rapidjson::kNumberType: return "number";
    }
    return "value";
}

FOREWARN_INLINE error json_type_error(std::string field, std::string_view expected, const rapidjson::Value& got) {
    return json_shape_error(std::move(field), "expected " + std::string(expected) + ", got " +
                                                  std::string(json_type_name(got)));
}

FOREWARN_INLINE const rapidjson::Value* json_member(const rapidjson::Value& obj, std::string_view name) noexcept {
    const auto it = obj.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
    return it == obj.MemberEnd() ? nullptr : &it->value;
}

FOREWARN_INLINE std::string_view json_string_view(const rapidjson::Value& v) noexcept {
    return {v.GetString(), v.GetStringLength()};
}

FOREWARN_INLINE bool is_valid_utf8(std::string_view s) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size();) {
        if (p[i] < 0x80) {
            ++i;
            continue;
        }
        const std::size_t k = utf8_sequence_length(p + i, s.size() - i);
        if (k == 0) return false;
        i += k;
    }
    return true;
}

FOREWARN_INLINE std::string replace_invalid_utf8(std::string_view s, std::string_view replacement) {
    std::string out;
    out.reserve(s.size());
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size();) {
        if (p[i] < 0x80) {
            out += static_cast<char>(p[i++]);
            continue;
        }
        const std::size_t k = utf8_sequence_length(p + i, s.size() - i);
        if (k == 0) {
            out += replacement;
            ++i;
        } else {
            out.append(s.data() + i, k);
            i += k;
        }
    }
    return out;
}

FOREWARN_INLINE bool json_writer::key(std::string_view k) {
    if (ok_ && replace_ && !is_valid_utf8(k)) return key(replace_invalid_utf8(k));
    return ok_ = ok_ && is_valid_utf8(k) && writer_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()), true);
}

FOREWARN_INLINE bool json_writer::string(std::string_view s) {
    if (ok_ && replace_ && !is_valid_utf8(s)) return string(replace_invalid_utf8(s));
    return ok_ = ok_ && is_valid_utf8(s) && writer_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), true);
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
