// SPDX-License-Identifier: MIT
// The socket calls of platform/sockets.hpp that take more than a line, and the waker.
#include "sockets.hpp"

namespace watch {
namespace net {

#if defined(_WIN32)
bool start() {
    static const bool ok = [] {
        WSADATA data;
        return ::WSAStartup(MAKEWORD(2, 2), &data) == 0;
    }();
    return ok;
}

socket_t open_socket(int family, int type, int protocol) {
    return ::WSASocketW(family, type, protocol, nullptr, 0, WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
}
#else
void reuse_address(socket_t s) {
    const int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
}
#endif

std::string waker::open() {
    s_ = open_socket(AF_INET, SOCK_DGRAM, 0);
    if (s_ == no_socket) return "socket: " + last_error();
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (::bind(s_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(s_, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
        ::connect(s_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)  // to itself
        return "waker socket: " + last_error();
    return {};
}

void waker::wake() const {
    const char b = 1;
    if (s_ != no_socket) (void)::send(s_, &b, 1, 0);
}

void waker::close() {
    if (s_ != no_socket) close_socket(s_);
    s_ = no_socket;
}

}  // namespace net
}  // namespace watch
