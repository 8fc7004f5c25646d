// SPDX-License-Identifier: MIT
// How forewarn-watch's main() sleeps until it is told to stop, costing nothing meanwhile:
// SIGINT or SIGTERM on POSIX (blocked in every thread, taken by sigwait), Ctrl+C, Ctrl+Break, the
// console closing, a log-off or a shutdown on Windows (a console control handler), or the agent's
// own "done" (--exit-after's last line was written). The platform's half: stop_signal_posix.cpp,
// stop_signal_windows.cpp.
#pragma once

namespace watch {
namespace stop_signal {

/// Before any thread starts: POSIX blocks the signals (every later thread inherits the mask) and
/// ignores SIGPIPE (a hook that exits before reading its stdin costs a write error, never the
/// agent) and SIGXFSZ (a file-size limit fails the state file's write, EFBIG); Windows installs
/// the console control handler.
void prepare();
/// From any thread: wait() returns (false).
void notify_done();
/// Sleeps until a stop; true when the system or the operator asked, false after notify_done().
bool wait();
/// After the agent has stopped everything: on Windows a console close waits for this (the
/// system ends the process when the handler returns).
void finished();
#if defined(_WIN32)
/// The service control manager's stop or shutdown (service_windows.cpp): wait() returns (true),
/// as on Ctrl+C.
void request();
#endif

}  // namespace stop_signal
}  // namespace watch
