// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/poller/state_store.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/poller/state_store.hpp>
