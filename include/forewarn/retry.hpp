// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/transport/retry.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/transport/retry.hpp>
