// SPDX-License-Identifier: MIT
#pragma once

/**
 * forewarn: advance warning of cloud VM maintenance.
 *
 * The umbrella header: everything a service needs. See README.md for a first program.
 * Not included, so that a program pays only for what it uses: <forewarn/state_file.hpp> (the
 * state store in a file: <filesystem>, <fstream>), the etcd fleet budget
 * (<forewarn/etcd/maintenance_budget.hpp>) and the testing headers.
 */

#include <forewarn/alibaba/metadata_client.hpp>
#include <forewarn/poller/approval.hpp>
#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/aws/parse.hpp>
#include <forewarn/azure/parse.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/poller/change_tracker.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/poller/coordinator.hpp>
#include <forewarn/transport/default.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/fleet.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/gce/upcoming_maintenance.hpp>
#include <forewarn/json.hpp>
#include <forewarn/poller/leader.hpp>
#include <forewarn/log.hpp>
#include <forewarn/poller/notice_source.hpp>
#include <forewarn/poller/pause_meter.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/readiness.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport/retry.hpp>
#include <forewarn/poller/state_store.hpp>
#include <forewarn/tencent/metadata_client.hpp>
#include <forewarn/time.hpp>
#include <forewarn/transport.hpp>
