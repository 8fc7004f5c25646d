// SPDX-License-Identifier: MIT
// A second translation unit that includes every public header: a function defined in a header
// without `inline` would now be defined twice and fail the link. Kept in step with include/ by
// the test "include_all.cpp names every header" (test_headers.cpp).
#include <forewarn/approval.hpp>
#include <forewarn/azure/endpoint.hpp>
#include <forewarn/azure/parse.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/azure/vocabulary.hpp>
#include <forewarn/change_tracker.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/coordinator.hpp>
#include <forewarn/curl_transport.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/detail/file_io.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/forewarn.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/gce/endpoint.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/gce/parse.hpp>
#include <forewarn/json.hpp>
#include <forewarn/leader.hpp>
#include <forewarn/log.hpp>
#include <forewarn/notice_source.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/result.hpp>
#include <forewarn/retry.hpp>
#include <forewarn/state_file.hpp>
#include <forewarn/state_store.hpp>
#include <forewarn/testing/fake_source.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/scenario_detail.hpp>
#include <forewarn/testing/simulated_transport.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>
