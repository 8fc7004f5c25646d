// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/poller/coordinator.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/poller/coordinator.hpp>
