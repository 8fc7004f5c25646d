// SPDX-License-Identifier: MIT
#pragma once

// Small files read whole and replaced atomically: the state file's I/O.

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// Reads a whole file of at most `max_bytes`; errc::not_found when it does not exist.
inline result<std::string> read_small_file(const std::filesystem::path& path, std::uintmax_t max_bytes = 16u << 20) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return error(errc::not_found, "no state file at " + path.string());
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return error(errc::io_error, "cannot read " + path.string() + ": " + ec.message());
    if (size > max_bytes) return error(errc::io_error, path.string() + " is larger than " + std::to_string(max_bytes) + " bytes");
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(errc::io_error, "cannot open " + path.string());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return error(errc::io_error, "cannot read " + path.string());
    return text;
}

/**
 * Writes `text` to `path` atomically: a temporary file in the same directory, then a rename over
 * the old one, so a crash leaves either the old state or the new one, never half of one.
 */
inline result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text) {
    thread_local std::minstd_rand rng(std::random_device{}());
    std::filesystem::path tmp = path;
    tmp += ".tmp-" + std::to_string(rng());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return error(errc::io_error, "cannot create " + tmp.string());
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.flush();
        if (!out) {
            out.close();
            std::error_code ignored;
            std::filesystem::remove(tmp, ignored);
            return error(errc::io_error, "cannot write " + tmp.string());
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        return error(errc::io_error, "cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
    }
    return {};
}

}  // namespace detail
FOREWARN_END_NAMESPACE
