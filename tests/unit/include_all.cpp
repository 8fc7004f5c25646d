// SPDX-License-Identifier: MIT
// A second translation unit that includes every public header: a function defined in a header
// without `inline` would now be defined twice and fail the link. Kept in step with include/ by
// hand: a new header is added here. The transport of the other platform is left out.
#include <forewarn/poller/approval.hpp>
#include <forewarn/aws/endpoint.hpp>
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/aws/parse.hpp>
#include <forewarn/aws/vocabulary.hpp>
#include <forewarn/azure/endpoint.hpp>
#include <forewarn/azure/parse.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/azure/vocabulary.hpp>
#include <forewarn/poller/change_tracker.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/poller/coordinator.hpp>
#if defined(_WIN32)
#include <forewarn/platform/windows.hpp>
#include <forewarn/transport/winhttp.hpp>
#else
#include <forewarn/transport/curl.hpp>
#endif
#include <forewarn/transport/default.hpp>
#include <forewarn/detail/endpoint.hpp>
#include <forewarn/platform/files.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/etcd/client.hpp>
#include <forewarn/etcd/maintenance_budget.hpp>
#include <forewarn/etcd/wire.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fleet.hpp>
#include <forewarn/forewarn.hpp>
#include <forewarn/fwd.hpp>
#include <forewarn/gce/endpoint.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/gce/parse.hpp>
#include <forewarn/gce/upcoming_maintenance.hpp>
#include <forewarn/json.hpp>
#include <forewarn/poller/leader.hpp>
#include <forewarn/log.hpp>
#include <forewarn/poller/notice_source.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport/retry.hpp>
#include <forewarn/state_file.hpp>
#include <forewarn/poller/state_store.hpp>
#include <forewarn/testing/emulator/alibaba_metadata.hpp>
#include <forewarn/testing/emulator/aws_imds.hpp>
#include <forewarn/testing/emulator/azure_imds.hpp>
#include <forewarn/testing/emulator/control_api.hpp>
#include <forewarn/testing/emulator/engine.hpp>
#include <forewarn/testing/emulator/faults.hpp>
#include <forewarn/testing/emulator/gce_metadata.hpp>
#include <forewarn/testing/emulator/latest_metadata.hpp>
#include <forewarn/testing/emulator/request.hpp>
#include <forewarn/testing/emulator/scenario_file.hpp>
#include <forewarn/testing/emulator/service.hpp>
#include <forewarn/testing/emulator/tencent_metadata.hpp>
#include <forewarn/testing/emulator/timeline.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/testing/fake_fleet.hpp>
#include <forewarn/testing/fake_source.hpp>
#include <forewarn/testing/fake_transport.hpp>
#include <forewarn/testing/fault_transport.hpp>
#include <forewarn/testing/file_faults.hpp>
#include <forewarn/readiness.hpp>
#include <forewarn/poller/pause_meter.hpp>
#include <forewarn/poller/approval_window.hpp>
#include <forewarn/testing/harness.hpp>
#include <forewarn/testing/manual_clock.hpp>
#include <forewarn/testing/scenario.hpp>
#include <forewarn/testing/simulated_transport.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>

// The paths headers had before they moved into transport/ and poller/ (forwarding headers):
// a program written against the earlier layout builds unchanged.
#include <forewarn/approval.hpp>
#include <forewarn/approval_window.hpp>
#include <forewarn/change_tracker.hpp>
#include <forewarn/coordinator.hpp>
#if defined(_WIN32)
#include <forewarn/winhttp_transport.hpp>
#else
#include <forewarn/curl_transport.hpp>
#endif
#include <forewarn/default_transport.hpp>
#include <forewarn/leader.hpp>
#include <forewarn/notice_source.hpp>
#include <forewarn/pause_meter.hpp>
#include <forewarn/retry.hpp>
#include <forewarn/state_store.hpp>
