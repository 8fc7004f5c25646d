// SPDX-License-Identifier: MIT
#pragma once

// Small files read whole and replaced atomically and durably: the state file's and the agent's
// hook journal's I/O, on POSIX and on Windows (the definitions: files-inl.hpp,
// and the platform's half, posix_files-inl.hpp or windows_files-inl.hpp). Paths are std::filesystem paths; a UTF-8 std::string converts with
// std::filesystem::u8path, and Windows opens them by their wide name, so non-ASCII works.

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <string>
#include <string_view>
#include <system_error>

FOREWARN_BEGIN_NAMESPACE
namespace platform {

/// A path from its UTF-8 name (std::filesystem::u8path, which C++20 deprecates): on Windows the
/// wide name, not the ANSI code page's reading of the bytes.
inline std::filesystem::path path_from_utf8(std::string_view name) {
#if defined(__cpp_char8_t)
    return std::filesystem::path(std::u8string(name.begin(), name.end()));
#else
    return std::filesystem::u8path(name.begin(), name.end());
#endif
}

/// A path's name in UTF-8, for messages (u8string() is a std::u8string in C++20).
inline std::string utf8_name(const std::filesystem::path& p) {
    const auto s = p.u8string();
    return std::string(s.begin(), s.end());
}

/// Reads a whole file of at most `max_bytes`; errc::not_found when it does not exist, errc::io_error
/// when it cannot be read or is larger.
result<std::string> read_small_file(const std::filesystem::path& path, std::uintmax_t max_bytes = 16u << 20);

/// The steps of write_file_atomically(), in the order it takes them. Windows has no
/// flush_directory: MoveFileExW's write-through covers the rename.
enum class file_step { create, write, flush_file, close, rename, flush_directory };

inline std::string_view to_string(file_step s) noexcept {
    switch (s) {
    case file_step::create: return "create";
    case file_step::write: return "write";
    case file_step::flush_file: return "flush_file";
    case file_step::close: return "close";
    case file_step::rename: return "rename";
    case file_step::flush_directory: return "flush_directory";
    }
    return "unknown";
}

/**
 * A seam for tests (<forewarn/testing/file_faults.hpp> installs one): called before each step of
 * write_file_atomically() with the path the step acts on (the temporary file; for rename the
 * final path; for flush_directory the directory). For write, `bytes` is the size about to be
 * written; with a non-zero return it may be lowered, and that many bytes go out before the step
 * fails. A non-zero return fails the step as the system would with that errno value. None is set
 * in a program: each step then costs one pointer load.
 */
struct file_step_observer {
    int (*call)(void* context, file_step step, const std::filesystem::path& path, std::size_t& bytes) = nullptr;
    void* context = nullptr;
};

namespace detail {
inline file_step_observer& file_observer() noexcept {
    static file_step_observer observer;
    return observer;
}
/// The observer's verdict on a step: 0 to go on, else the errno value it fails with.
inline int observe_file_step(file_step step, const std::filesystem::path& path, std::size_t& bytes) {
    const file_step_observer& o = file_observer();
    return o.call ? o.call(o.context, step, path, bytes) : 0;
}
inline int observe_file_step(file_step step, const std::filesystem::path& path) {
    std::size_t none = 0;
    return observe_file_step(step, path, none);
}
}  // namespace detail

/**
 * Writes `text` to `path` atomically and durably: a temporary file in the same directory, written
 * and flushed to the disk, then renamed over the old one (on POSIX the directory is flushed too, so
 * that the rename itself survives a power cut; on Windows the rename is MoveFileExW's, atomic, its
 * durability NTFS's metadata journal's).
 * A crash or power cut leaves either the old content or the new, never an empty or half-written
 * file, and a failure (errc::io_error, naming the file) leaves the old file as it was.
 */
result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text);

/// Whether a process with this id runs now (the platform's half).
bool process_running(unsigned long long pid);

/**
 * Removes the temporary files write_file_atomically() left beside `path` when their process died
 * mid-write (`NAME.tmp-PID-N`, PID no longer running); those of running processes stay. Gives how
 * many it removed; a file it cannot remove is left (it costs only space). The state file calls it
 * when it loads, so restarts after crashes do not pile them up.
 */
std::size_t remove_stale_temporaries(const std::filesystem::path& path);

}  // namespace platform
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/platform/files-inl.hpp>
#endif
