// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/poller/approval_window.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/poller/approval_window.hpp>
