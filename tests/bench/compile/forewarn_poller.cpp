// SPDX-License-Identifier: MIT
// Compile cost: the umbrella header and what a real program instantiates (an Azure poller and a
// GCE poller over libcurl), so that the templates are compiled too.
#include <forewarn/forewarn.hpp>

int main() {
    forewarn::poller_handlers h;
    h.on_prepare = [](const forewarn::change&, forewarn::approval_handle ready) { ready.ready(); };
    forewarn::poller<forewarn::azure::scheduled_events_client> azure(forewarn::azure::scheduled_events_client{}, h);
    forewarn::poller<forewarn::gce::metadata_client> gce(forewarn::gce::metadata_client{}, h);
    return azure.running() || gce.running() ? 1 : 0;
}
