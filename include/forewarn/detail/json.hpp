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
#include <cstring>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Limits applied to every JSON body before RapidJSON sees it.
struct json_limits {
    std::size_t max_depth = 64;  ///< arrays and objects nested deeper are refused
};

/// Bytes that need no attention inside a JSON string: printable ASCII but '"' and '\\'.
struct json_byte_table {
    bool plain[256];
};

constexpr json_byte_table make_json_plain_string_bytes() noexcept {
    json_byte_table t{};
    for (int c = 0x20; c < 0x80; ++c) t.plain[c] = c != '"' && c != '\\';
    return t;
}

inline constexpr json_byte_table json_plain_string_bytes = make_json_plain_string_bytes();

/// True when none of the 8 bytes of `w` needs attention inside a JSON string (no '"', '\\',
/// control character or non-ASCII byte): the scan below then skips them at once.
constexpr bool json_plain_word(std::uint64_t w) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const std::uint64_t q = w ^ (ones * static_cast<unsigned char>('"'));
    const std::uint64_t b = w ^ (ones * static_cast<unsigned char>('\\'));
    // (x - ones) & ~x & highs is non-zero exactly when some byte of x is zero (resp. below 0x20).
    const std::uint64_t special = ((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w;
    return (special & highs) == 0;
}

/// Length of the well-formed UTF-8 sequence (Unicode table 3-7: no overlong form, no surrogate,
/// nothing above U+10FFFF) that starts with the non-ASCII byte at `p`, or 0 when it is malformed.
std::size_t utf8_sequence_length(const unsigned char* p, std::size_t left) noexcept;

/**
 * Parses a whole body: iterative parser (no recursion, so no stack overflow on deep input),
 * UTF-8 validated, nothing but whitespace allowed after the value, nesting depth limited.
 * The text is copied into the document, so `text` need not outlive the result. Strings point
 * into that copy (in-situ parse): a value copied into another document with CopyFrom keeps
 * pointing there, so this document must outlive such a copy.
 */
result<rapidjson::Document> parse_json(std::string_view text, const json_limits& limits = {});

/// parse_json()'s checks and parse into `doc`, whose allocator its owner chose (local_json).
result<void> parse_json_into(rapidjson::Document& doc, std::string_view text, const json_limits& limits = {});

/**
 * A document parsed and read within one function (a poll's document, before its events are
 * copied out): its pool starts in a buffer of its own and grows by 16 KiB chunks, where a
 * rapidjson::Document allocates its pool and a first chunk of 64 KiB on the heap for every parse
 * (and glibc consolidates its free lists whenever a chunk that large is freed). Not copyable or
 * movable: values point into the buffer.
 */
class local_json {
public:
    local_json() = default;
    local_json(const local_json&) = delete;
    local_json& operator=(const local_json&) = delete;

    /// parse_json()'s checks and parse; the document is valid while this object lives.
    result<void> parse(std::string_view text, const json_limits& limits = {}) { return parse_json_into(doc_, text, limits); }
    const rapidjson::Document& document() const noexcept { return doc_; }

private:
    alignas(std::max_align_t) char buffer_[4096];
    rapidjson::MemoryPoolAllocator<> pool_{buffer_, sizeof buffer_, 16384};
    rapidjson::Document doc_{&pool_};
};

/// An invalid_document error naming the member at fault.
error json_shape_error(std::string field, std::string what);

std::string_view json_type_name(const rapidjson::Value& v) noexcept;

error json_type_error(std::string field, std::string_view expected, const rapidjson::Value& got);

/// The member `name` of `obj`, or nullptr. `obj` must be an object.
const rapidjson::Value* json_member(const rapidjson::Value& obj, std::string_view name) noexcept;

/// A string value as a view of its full length (embedded NULs kept).
std::string_view json_string_view(const rapidjson::Value& v) noexcept;

/// True when `s` is well-formed UTF-8 (no overlong form, no surrogate, nothing above U+10FFFF).
/// Reads only inside `s`.
bool is_valid_utf8(std::string_view s) noexcept;

/// `s` with every byte that is not part of well-formed UTF-8 replaced by `replacement` (U+FFFD
/// unless said otherwise: the emulator's request log writes '?').
std::string replace_invalid_utf8(std::string_view s, std::string_view replacement = "\xEF\xBF\xBD");

/// Writes JSON text with RapidJSON's Writer; strings are checked to be valid UTF-8 (or, when
/// made with `replace_invalid`, their invalid bytes written as U+FFFD: for log lines).
class json_writer {
public:
    explicit json_writer(bool replace_invalid = false) : writer_(buffer_), replace_(replace_invalid) {}
    json_writer(const json_writer&) = delete;
    json_writer& operator=(const json_writer&) = delete;

    bool begin_object() { return ok_ = ok_ && writer_.StartObject(); }
    bool end_object() { return ok_ = ok_ && writer_.EndObject(); }
    bool begin_array() { return ok_ = ok_ && writer_.StartArray(); }
    bool end_array() { return ok_ = ok_ && writer_.EndArray(); }
    // UTF-8 is checked here, before RapidJSON sees the text: 1.1.0's own check (Writer with
    // kWriteValidateEncodingFlag) reads up to 3 bytes past the end of a string that ends in a
    // truncated sequence (a heap over-read found by tests/fuzz/fuzz_approval).
    bool key(std::string_view k);
    bool string(std::string_view s);
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
    bool replace_ = false;
    bool ok_ = true;
};

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/json-inl.hpp>
#endif
