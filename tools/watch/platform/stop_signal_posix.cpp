// SPDX-License-Identifier: MIT
// The POSIX half of platform/stop_signal.hpp: SIGINT and SIGTERM, and SIGUSR1 as "done".
#include "stop_signal.hpp"

#include <csignal>

#include <signal.h>
#include <unistd.h>

namespace watch {
namespace stop_signal {

sigset_t waited_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    return set;
}

void prepare() {
    std::signal(SIGPIPE, SIG_IGN);
    // A file-size limit (ulimit -f) met while writing the state file is that write's io_error
    // (EFBIG: the old file stays, the agent goes on), not the agent's death.
    std::signal(SIGXFSZ, SIG_IGN);
    const sigset_t set = waited_signals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void notify_done() { ::kill(::getpid(), SIGUSR1); }

bool wait() {
    const sigset_t set = waited_signals();
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    return sig != SIGUSR1;
}

void finished() {}

}  // namespace stop_signal
}  // namespace watch
