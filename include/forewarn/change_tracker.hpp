// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/poller/change_tracker.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/poller/change_tracker.hpp>
