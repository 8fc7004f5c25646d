// SPDX-License-Identifier: MIT
#pragma once

// The clients' default transport (forewarn::default_transport, fwd.hpp): WinHTTP on Windows,
// where it needs nothing beyond the system, libcurl elsewhere. Either can be named explicitly
// instead (curl_transport also works on Windows where libcurl is installed).

#include <forewarn/fwd.hpp>

#if defined(_WIN32)
#include <forewarn/transport/winhttp.hpp>
#else
#include <forewarn/transport/curl.hpp>
#endif
