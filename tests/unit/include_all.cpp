// SPDX-License-Identifier: MIT
// A second translation unit that includes every public header: a function defined in a header
// without `inline` would now be defined twice and fail the link.
#include <forewarn/forewarn.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/azure/parse.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/time.hpp>
#include <forewarn/curl_transport.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/leader.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/detail/state_file.hpp>
#include <forewarn/detail/wake_signal.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>
#include <forewarn/detail/json.hpp>
