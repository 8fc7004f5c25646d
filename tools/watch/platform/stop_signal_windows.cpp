// SPDX-License-Identifier: MIT
// The Windows half of platform/stop_signal.hpp: a console control handler and two events.
#include "stop_signal.hpp"

#include <forewarn/platform/windows.hpp>

#include <atomic>

namespace watch {
namespace stop_signal {
namespace detail {

struct events {
    HANDLE stop = ::CreateEventW(nullptr, TRUE, FALSE, nullptr);
    HANDLE finished = ::CreateEventW(nullptr, TRUE, FALSE, nullptr);
    std::atomic<bool> by_system{false};
};
events& the() {
    static events e;
    return e;
}

BOOL WINAPI on_console(DWORD what) {
    switch (what) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
        the().by_system.store(true);
        ::SetEvent(the().stop);
        // The handler runs on a thread of its own; for a close, log-off or shutdown the system
        // ends the process when it returns: give main() its clean stop first (the system allows
        // about 5 s).
        if (what != CTRL_C_EVENT && what != CTRL_BREAK_EVENT) ::WaitForSingleObject(the().finished, 4500);
        return TRUE;
    default: return FALSE;
    }
}

}  // namespace detail

void prepare() {
    (void)detail::the();
    ::SetConsoleCtrlHandler(&detail::on_console, TRUE);
}

void notify_done() { ::SetEvent(detail::the().stop); }

/// A stop the system asked for outside the console: a service stop or a shutdown (service.hpp).
void request() {
    detail::the().by_system.store(true);
    ::SetEvent(detail::the().stop);
}

bool wait() {
    ::WaitForSingleObject(detail::the().stop, INFINITE);
    return detail::the().by_system.load();
}

void finished() { ::SetEvent(detail::the().finished); }

}  // namespace stop_signal
}  // namespace watch
