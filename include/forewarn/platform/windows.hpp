// SPDX-License-Identifier: MIT
#pragma once

// What every Windows part of forewarn needs: <windows.h> without its macros' worst (min, max,
// the whole of winsock 1), UTF-8 <-> UTF-16 (forewarn's strings are UTF-8, Windows' are wide),
// and a system error's text. Only the platform folder and the Windows transport include it.

#include <forewarn/config.hpp>

#if !defined(_WIN32)
#error "<forewarn/platform/windows.hpp> is for Windows"
#endif

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace platform {

/// UTF-8 to UTF-16; invalid UTF-8 becomes U+FFFD (never a failure).
std::wstring to_wide(std::string_view s);

/// UTF-16 to UTF-8; an unpaired surrogate becomes U+FFFD.
std::string to_utf8(std::wstring_view w);

/// The system's text for an error code (GetLastError(), a WinHTTP code with `module` winhttp.dll),
/// on one line, with the number: "The operation timed out (12002)".
std::string system_message(unsigned long code, const wchar_t* module = nullptr);

}  // namespace platform
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/platform/windows-inl.hpp>
#endif
