// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/poller/pause_meter.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/poller/pause_meter.hpp>
