// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/platform/files.hpp>, the POSIX half (included by files-inl.hpp, so
// compiled once into libforewarn in compiled mode): open, write, fsync, rename, fsync the directory.

#include <forewarn/platform/files.hpp>

#include <atomic>
#include <string>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace platform {
namespace posix {

// Writes all of `text` to `fd`, retrying short writes and EINTR.
FOREWARN_INLINE bool write_all(int fd, std::string_view text) noexcept {
    while (!text.empty()) {
        const ::ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// fsync that retries EINTR.
FOREWARN_INLINE bool sync_fd(int fd) noexcept {
    while (::fsync(fd) != 0)
        if (errno != EINTR) return false;
    return true;
}

}  // namespace posix

FOREWARN_INLINE result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text) {
    // A name no other writer uses at the same moment: this process's id and a counter (no
    // <random>: it costs every includer ~10% of its compile time).
    static std::atomic<unsigned long> counter{0};
    std::filesystem::path tmp = path;
    tmp += ".tmp-" + std::to_string(static_cast<unsigned long long>(::getpid())) + "-" +
           std::to_string(counter.fetch_add(1));
    auto give_up = [&](std::string what) -> result<void> {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        return error(errc::io_error, std::move(what));
    };
    // Each step asks the test seam first (detail::observe_file_step; nothing in a program).
    const int create_fault = detail::observe_file_step(file_step::create, tmp);
    if (create_fault)
        return error(errc::io_error, "cannot create " + tmp.string() + ": " + std::strerror(create_fault));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return error(errc::io_error, "cannot create " + tmp.string() + ": " + std::strerror(errno));
    std::size_t allowed = text.size();
    int failure = detail::observe_file_step(file_step::write, tmp, allowed);
    if (failure) (void)posix::write_all(fd, text.substr(0, allowed));  // a short write, then the fault
    else if (!posix::write_all(fd, text)) failure = errno;
    if (!failure && (failure = detail::observe_file_step(file_step::flush_file, tmp)) == 0 && !posix::sync_fd(fd))
        failure = errno;
    const int close_fault = detail::observe_file_step(file_step::close, tmp);
    if (::close(fd) != 0 && !failure) failure = errno;
    if (close_fault && !failure) failure = close_fault;
    if (failure) return give_up("cannot write " + tmp.string() + ": " + std::strerror(failure));
    std::error_code ec;
    if (const int e = detail::observe_file_step(file_step::rename, path)) ec = std::error_code(e, std::generic_category());
    else std::filesystem::rename(tmp, path, ec);
    if (ec) return give_up("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
    // The rename itself survives a power cut only once the directory is flushed.
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return error(errc::io_error, "cannot open " + dir.string() + " to flush it: " + std::strerror(errno));
    int sync_failure = detail::observe_file_step(file_step::flush_directory, dir);
    if (!sync_failure && !posix::sync_fd(dfd)) sync_failure = errno;
    ::close(dfd);
    if (sync_failure) return error(errc::io_error, "cannot flush " + dir.string() + ": " + std::strerror(sync_failure));
    return {};
}

FOREWARN_INLINE bool process_running(unsigned long long pid) {
    if (pid == 0 || pid > static_cast<unsigned long long>(INT32_MAX)) return false;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;  // EPERM: it runs, as another user
}

}  // namespace platform
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
