// SPDX-License-Identifier: MIT
// Compile cost of a service file: an Azure and a GCE poller over the built-in clients, started and
// stopped, so that everything a real program instantiates is compiled (header-only) or declared
// extern and linked (compiled mode, -DFOREWARN_COMPILED_LIB).
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/curl.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>

#include <cstdio>
#include <utility>

int main() {
    forewarn::poller_handlers h;
    h.on_prepare = [](const forewarn::change&, forewarn::approval_handle ready) { ready.ready(); };
    h.on_error = [](const forewarn::error& e) { std::fprintf(stderr, "%s\n", e.describe().c_str()); };
    forewarn::poller<forewarn::azure::scheduled_events_client> azure(forewarn::azure::scheduled_events_client{}, h);
    forewarn::poller<forewarn::gce::metadata_client> gce(forewarn::gce::metadata_client{}, h);
    if (!azure.start() || !gce.start()) return 1;
    azure.stop();
    gce.stop();
    return 0;
}
