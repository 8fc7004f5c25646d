// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/platform/files.hpp> (spdlog's -inl files), then the platform's half
// (posix_files-inl.hpp or windows_files-inl.hpp). Header-only: included at the end of that
// header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and empty in a user's
// file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/platform/files.hpp>

#include <fstream>
#include <iterator>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace platform {

FOREWARN_INLINE result<std::string> read_small_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
    std::error_code ec;
    const std::string name = utf8_name(path);
    if (!std::filesystem::exists(path, ec)) return error(errc::not_found, "no file at " + name);
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return error(errc::io_error, "cannot read " + name + ": " + ec.message());
    if (size > max_bytes) return error(errc::io_error, name + " is larger than " + std::to_string(max_bytes) + " bytes");
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(errc::io_error, "cannot open " + name);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return error(errc::io_error, "cannot read " + name);
    return text;
}

FOREWARN_INLINE std::size_t remove_stale_temporaries(const std::filesystem::path& path) {
    const std::string prefix = path.filename().string() + ".tmp-";
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec), end;
    std::size_t removed = 0;
    for (; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        // PID-N: digits, a dash, digits.
        const std::string rest = name.substr(prefix.size());
        const auto dash = rest.find('-');
        if (dash == 0 || dash == std::string::npos || dash + 1 == rest.size() || dash > 19 ||
            rest.find_first_not_of("0123456789") != dash || rest.find_first_not_of("0123456789", dash + 1) != std::string::npos)
            continue;
        if (process_running(std::stoull(rest.substr(0, dash)))) continue;
        std::error_code ignored;
        if (std::filesystem::remove(it->path(), ignored)) ++removed;
    }
    return removed;
}

}  // namespace platform
FOREWARN_END_NAMESPACE

#if defined(_WIN32)
#include <forewarn/platform/windows_files-inl.hpp>
#else
#include <forewarn/platform/posix_files-inl.hpp>
#endif

#endif  // FOREWARN_HEADER_DEFINITIONS
