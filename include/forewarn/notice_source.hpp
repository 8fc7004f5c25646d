// SPDX-License-Identifier: MIT
#pragma once

// Moved to <forewarn/poller/notice_source.hpp> (CHANGELOG, "Changed"); this path keeps existing includes building.
#include <forewarn/poller/notice_source.hpp>
