// SPDX-License-Identifier: MIT
// The few socket calls forewarn-watch's metrics server makes, the same on POSIX and on Winsock:
// a socket type, closing, polling, the last error in words, and a waker (a byte on a loopback UDP
// socket ends a poll at once, where POSIX would use a pipe: one mechanism for both).
#pragma once

#include <string>

#if defined(_WIN32)
#include <forewarn/platform/windows.hpp>
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

namespace watch {
namespace net {

#if defined(_WIN32)
using socket_t = SOCKET;
inline constexpr socket_t no_socket = INVALID_SOCKET;
using pollfd_t = WSAPOLLFD;
inline void close_socket(socket_t s) { ::closesocket(s); }
inline int poll(pollfd_t* fds, unsigned long n, int timeout_ms) { return ::WSAPoll(fds, n, timeout_ms); }
inline std::string last_error() { return forewarn::platform::system_message(static_cast<unsigned long>(::WSAGetLastError())); }
inline bool interrupted() { return ::WSAGetLastError() == WSAEINTR; }
/// Winsock, started once for the process (never cleaned up: the process ends first).
bool start();
/// Not inherited by hook processes (WSA_FLAG_NO_HANDLE_INHERIT).
socket_t open_socket(int family, int type, int protocol);
inline socket_t accept_socket(socket_t listener) { return ::accept(listener, nullptr, nullptr); }
inline int send_flags() { return 0; }
/// A listener's address reuse: none on Windows, where SO_REUSEADDR would let another program
/// take the port too (its default already allows a quick restart).
inline void reuse_address(socket_t) {}
#else
using socket_t = int;
inline constexpr socket_t no_socket = -1;
using pollfd_t = pollfd;
inline void close_socket(socket_t s) { ::close(s); }
inline int poll(pollfd_t* fds, unsigned long n, int timeout_ms) { return ::poll(fds, static_cast<nfds_t>(n), timeout_ms); }
inline std::string last_error() { return std::strerror(errno); }
inline bool interrupted() { return errno == EINTR; }
inline bool start() { return true; }
inline socket_t open_socket(int family, int type, int protocol) { return ::socket(family, type | SOCK_CLOEXEC, protocol); }
inline socket_t accept_socket(socket_t listener) { return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC); }
inline int send_flags() { return MSG_NOSIGNAL; }
/// A listener's address reuse: a restart binds again at once, past the old sockets' TIME_WAIT.
void reuse_address(socket_t s);
#endif

/// A loopback UDP socket that a poll watches: wake() sends it a byte from any thread.
class waker {
public:
    waker() = default;
    waker(const waker&) = delete;
    waker& operator=(const waker&) = delete;
    ~waker() { close(); }

    /// The error in words, or "".
    std::string open();
    socket_t socket() const { return s_; }
    void wake() const;
    void close();

private:
    socket_t s_ = no_socket;
};

}  // namespace net
}  // namespace watch
