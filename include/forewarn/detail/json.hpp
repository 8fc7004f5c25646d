// SPDX-License-Identifier: MIT
#pragma once

// The only headers that include RapidJSON are detail/json*.hpp: everything else goes through here.

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Limits applied to every JSON body before RapidJSON sees it.
struct json_limits {
    std::size_t max_depth = 64;  ///< arrays and objects nested deeper are refused
};

/**
 * Parses a whole body: iterative parser (no recursion, so no stack overflow on deep input),
 * UTF-8 validated, nothing but whitespace allowed after the value, nesting depth limited.
 * The text is copied into the document, so `text` need not outlive the result.
 */
inline result<rapidjson::Document> parse_json(std::string_view text, const json_limits& limits = {}) {
    // Depth check first, in one linear pass that skips strings, so that 10^6 '[' are refused
    // before RapidJSON allocates a stack for them.
    std::size_t depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\0') {
            // RapidJSON's memory stream reads a NUL as the end of input: "[1]\0junk" would pass.
            error e(errc::parse_error, "malformed JSON: NUL byte in the text");
            e.offset = i;
            return e;
        }
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limits.max_depth) {
                error e(errc::parse_error, "JSON nested deeper than " + std::to_string(limits.max_depth) + " levels");
                e.offset = i;
                return e;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }

    rapidjson::Document doc;
    constexpr unsigned flags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
    doc.Parse<flags>(text.data(), text.size());
    if (doc.HasParseError()) {
        error e(errc::parse_error, std::string("malformed JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()));
        e.offset = doc.GetErrorOffset();
        return e;
    }
    return doc;
}

/// An invalid_document error naming the member at fault.
inline error json_shape_error(std::string field, std::string what) {
    error e(errc::invalid_document, std::move(what));
    e.field = std::move(field);
    return e;
}

inline std::string_view json_type_name(const rapidjson::Value& v) noexcept {
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

inline error json_type_error(std::string field, std::string_view expected, const rapidjson::Value& got) {
    return json_shape_error(std::move(field), "expected " + std::string(expected) + ", got " +
                                                  std::string(json_type_name(got)));
}

/// The member `name` of `obj`, or nullptr. `obj` must be an object.
inline const rapidjson::Value* json_member(const rapidjson::Value& obj, std::string_view name) noexcept {
    const auto it = obj.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
    return it == obj.MemberEnd() ? nullptr : &it->value;
}

/// A string value as a view of its full length (embedded NULs kept).
inline std::string_view json_string_view(const rapidjson::Value& v) noexcept {
    return {v.GetString(), v.GetStringLength()};
}

/// True when `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
/// above U+10FFFF). Reads only inside `s`.
inline bool is_valid_utf8(std::string_view s) noexcept {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b0 = static_cast<unsigned char>(s[i]);
        if (b0 < 0x80) {
            ++i;
            continue;
        }
        std::size_t tail = 0;
        std::uint32_t cp = 0, min = 0;
        if ((b0 & 0xE0) == 0xC0) {
            tail = 1, cp = b0 & 0x1Fu, min = 0x80;
        } else if ((b0 & 0xF0) == 0xE0) {
            tail = 2, cp = b0 & 0x0Fu, min = 0x800;
        } else if ((b0 & 0xF8) == 0xF0) {
            tail = 3, cp = b0 & 0x07u, min = 0x10000;
        } else {
            return false;
        }
        if (tail >= s.size() - i) return false;  // the sequence runs past the end
        for (std::size_t k = 1; k <= tail; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            if ((b & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (b & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += tail + 1;
    }
    return true;
}

/// Writes JSON text with RapidJSON's Writer; strings are checked to be valid UTF-8.
class json_writer {
public:
    json_writer() : writer_(buffer_) {}
    json_writer(const json_writer&) = delete;
    json_writer& operator=(const json_writer&) = delete;

    bool begin_object() { return ok_ = ok_ && writer_.StartObject(); }
    bool end_object() { return ok_ = ok_ && writer_.EndObject(); }
    bool begin_array() { return ok_ = ok_ && writer_.StartArray(); }
    bool end_array() { return ok_ = ok_ && writer_.EndArray(); }
    // UTF-8 is checked here, before RapidJSON sees the text: 1.1.0's own check (Writer with
    // kWriteValidateEncodingFlag) reads up to 3 bytes past the end of a string that ends in a
    // truncated sequence (a heap over-read found by tests/fuzz/fuzz_approval).
    bool key(std::string_view k) {
        return ok_ = ok_ && is_valid_utf8(k) && writer_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()), true);
    }
    bool string(std::string_view s) {
        return ok_ = ok_ && is_valid_utf8(s) && writer_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), true);
    }
    bool int64(std::int64_t v) { return ok_ = ok_ && writer_.Int64(v); }
    bool uint64(std::uint64_t v) { return ok_ = ok_ && writer_.Uint64(v); }
    bool boolean(bool v) { return ok_ = ok_ && writer_.Bool(v); }
    bool null() { return ok_ = ok_ && writer_.Null(); }
    bool number(double v) { return ok_ = ok_ && writer_.Double(v); }

    /// False once any write failed (invalid UTF-8, unbalanced nesting).
    bool ok() const noexcept { return ok_; }
    bool complete() const { return ok_ && writer_.IsComplete(); }
    std::string_view view() const noexcept { return {buffer_.GetString(), buffer_.GetSize()}; }
    std::string str() const { return std::string(view()); }

private:
    using writer_type = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                          rapidjson::CrtAllocator, rapidjson::kWriteValidateEncodingFlag>;
    rapidjson::StringBuffer buffer_;
    writer_type writer_;
    bool ok_ = true;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
