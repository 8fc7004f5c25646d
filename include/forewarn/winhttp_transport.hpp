// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/transport/winhttp.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/transport/winhttp.hpp>
