// SPDX-License-Identifier: MIT
#pragma once

// Small files read whole and replaced atomically and durably: the state file's I/O.

#include <forewarn/config.hpp>
#include <forewarn/result.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>
#endif

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

#if defined(__unix__) || defined(__APPLE__)
// Writes all of `text` to `fd`, retrying short writes and EINTR.
inline bool write_all(int fd, std::string_view text) noexcept {
    while (!text.empty()) {
        const ::ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// fsync that retries EINTR.
inline bool sync_fd(int fd) noexcept {
    while (::fsync(fd) != 0)
        if (errno != EINTR) return false;
    return true;
}
#endif

/**
 * Writes `text` to `path` atomically and durably: a temporary file in the same directory, written
 * and flushed to the disk (fsync), then renamed over the old one, then the directory flushed so
 * the rename itself survives a power cut. A crash or power cut leaves either the old state or the
 * new one, never an empty or half-written file. (Without POSIX, the flush to the disk is left to
 * the system: atomic, not durable.)
 */
inline result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text) {
    // A name no other writer uses at the same moment: this process's id (or, without POSIX, the
    // time) and a counter; no <random> (it costs every includer ~10% of its compile time).
    static std::atomic<unsigned long> counter{0};
#if defined(__unix__) || defined(__APPLE__)
    const auto who = static_cast<unsigned long long>(::getpid());
#else
    const auto who = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
    std::filesystem::path tmp = path;
    tmp += ".tmp-" + std::to_string(who) + "-" + std::to_string(counter.fetch_add(1));
    auto give_up = [&](std::string what) -> result<void> {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        return error(errc::io_error, std::move(what));
    };
#if defined(__unix__) || defined(__APPLE__)
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return error(errc::io_error, "cannot create " + tmp.string() + ": " + std::strerror(errno));
    const bool written = write_all(fd, text) && sync_fd(fd);
    const int write_errno = errno;
    const bool closed = ::close(fd) == 0;
    if (!written || !closed)
        return give_up("cannot write " + tmp.string() + ": " + std::strerror(written ? errno : write_errno));
#else
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return error(errc::io_error, "cannot create " + tmp.string());
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.flush();
        if (!out) {
            out.close();
            return give_up("cannot write " + tmp.string());
        }
    }
#endif
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) return give_up("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
#if defined(__unix__) || defined(__APPLE__)
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return error(errc::io_error, "cannot open " + dir.string() + " to flush it: " + std::strerror(errno));
    const bool synced = sync_fd(dfd);
    const int sync_errno = errno;
    ::close(dfd);
    if (!synced) return error(errc::io_error, "cannot flush " + dir.string() + ": " + std::strerror(sync_errno));
#endif
    return {};
}

}  // namespace detail
FOREWARN_END_NAMESPACE
