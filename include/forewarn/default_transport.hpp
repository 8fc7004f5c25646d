// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/transport/default.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/transport/default.hpp>
