// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/poller/approval.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/poller/approval.hpp>
