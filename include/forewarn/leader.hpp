// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/poller/leader.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/poller/leader.hpp>
