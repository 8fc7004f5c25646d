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
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/detail/json.hpp>
