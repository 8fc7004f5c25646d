// SPDX-License-Identifier: MIT
// What each cloud's client does on every poll (next(): its rounds, the exchange, the transport,
// the parse), compiled for speed while the rest of the agent, which runs when something happens,
// is compiled for size (tools/watch/CMakeLists.txt). The code is clients.cpp's (its poll_next()),
// so that clients.cpp stays the one file of the agent that names the clients.
#define WATCH_CLIENTS_POLL 1
#include "clients.cpp"
