// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/json.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE result<rapidjson::Document> parse_json(std::string_view text, const json_limits& limits) {
    rapidjson::Document doc;
    if (auto r = parse_json_into(doc, text, limits); !r) return std::move(r).error();
    return doc;
}

FOREWARN_INLINE result<void> parse_json_into(rapidjson::Document& doc, std::string_view text, const json_limits& limits) {
    // One linear pass first, that skips strings: the depth check, so that 10^6 '[' are refused
    // before RapidJSON allocates a stack for them; raw NUL bytes (RapidJSON reads one as the end
    // of input: "[1]\0junk" would pass); and UTF-8 validity. Validating here, with a fast path for
    // plain ASCII, instead of with kParseValidateEncodingFlag cut the cost of a parse by about 3x
    // (that flag decodes every byte of every string through RapidJSON's transcoder).
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    auto refuse = [](const char* what, std::size_t at) {
        error e(errc::parse_error, what);
        e.offset = at;
        return e;
    };
    std::size_t depth = 0;
    std::size_t i = 0;
    while (i < n) {
        const unsigned c = s[i];
        if (c == '"') {
            ++i;
            while (i < n) {
                for (std::uint64_t w = 0; i + 8 <= n; i += 8) {
                    std::memcpy(&w, s + i, 8);
                    if (!json_plain_word(w)) break;
                }
                while (i < n && json_plain_string_bytes.plain[s[i]]) ++i;
                if (i >= n) break;
                const unsigned d = s[i];
                if (d == '"') {
                    ++i;
                    break;
                }
                if (d == '\\') {
                    i += 2;  // the escape itself is RapidJSON's to check; it cannot end the string
                } else if (d == 0) {
                    return refuse("malformed JSON: NUL byte in the text", i);
                } else if (d < 0x80) {
                    ++i;  // a control character: RapidJSON refuses it with its own message
                } else {
                    const std::size_t k = utf8_sequence_length(s + i, n - i);
                    if (k == 0) return refuse("malformed JSON: invalid UTF-8", i);
                    i += k;
                }
            }
            continue;
        }
        if (c == 0) return refuse("malformed JSON: NUL byte in the text", i);
        if (c == '[' || c == '{') {
            if (++depth > limits.max_depth) {
                error e(errc::parse_error, cat({"JSON nested deeper than ", num(limits.max_depth), " levels"}));
                e.offset = i;
                return e;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        } else if (c >= 0x80) {
            const std::size_t k = utf8_sequence_length(s + i, n - i);
            if (k == 0) return refuse("malformed JSON: invalid UTF-8", i);
            i += k;
            continue;
        }
        ++i;
    }

    // Parsed in place in a copy owned by the document's own allocator (it moves with the
    // document): RapidJSON then points into that copy instead of copying every string again.
    char* buffer = static_cast<char*>(doc.GetAllocator().Malloc(n + 1));
    if (buffer == nullptr) return error(errc::parse_error, "out of memory for the JSON text");
    if (n != 0) std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
    doc.ParseInsitu<rapidjson::kParseIterativeFlag>(buffer);
    if (doc.HasParseError()) {
        error e(errc::parse_error, std::string("malformed JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()));
        e.offset = doc.GetErrorOffset();
        return e;
    }
    return {};
}

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

FOREWARN_INLINE FOREWARN_COLD error json_shape_error(std::string field, std::string what) {
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

FOREWARN_INLINE FOREWARN_COLD error json_type_error(std::string field, std::string_view expected, const rapidjson::Value& got) {
    return json_shape_error(std::move(field), cat({"expected ", expected, ", got ", json_type_name(got)}));
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

FOREWARN_INLINE FOREWARN_COLD std::string replace_invalid_utf8(std::string_view s, std::string_view replacement) {
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
