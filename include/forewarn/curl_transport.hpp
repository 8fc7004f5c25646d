// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/transport/curl.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/transport/curl.hpp>
