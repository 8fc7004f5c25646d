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
inline std::wstring to_wide(std::string_view s) {
    if (s.empty()) return {};
    const int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    if (n <= 0) return {};
    std::wstring w(static_cast<std::size_t>(n), L'\0');
    ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

/// UTF-16 to UTF-8; an unpaired surrogate becomes U+FFFD.
inline std::string to_utf8(std::wstring_view w) {
    if (w.empty()) return {};
    const int n = ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
    if (n <= 0) return {};
    std::string s(static_cast<std::size_t>(n), '\0');
    ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr, nullptr);
    return s;
}

/// The system's text for an error code (GetLastError(), a WinHTTP code with `module` winhttp.dll),
/// on one line, with the number: "The operation timed out (12002)".
inline std::string system_message(unsigned long code, const wchar_t* module = nullptr) {
    wchar_t* text = nullptr;
    DWORD flags = FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS;
    HMODULE from = nullptr;
    if (module != nullptr) {
        from = ::GetModuleHandleW(module);
        if (from != nullptr) flags |= FORMAT_MESSAGE_FROM_HMODULE;
    }
    const DWORD n = ::FormatMessageW(flags, from, code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
    std::string out;
    if (n > 0 && text != nullptr) out = to_utf8(std::wstring_view(text, n));
    if (text != nullptr) ::LocalFree(text);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ' || out.back() == '.'))
        out.pop_back();
    for (auto& c : out)
        if (c == '\r' || c == '\n') c = ' ';
    if (out.empty()) out = "error";
    return out + " (" + std::to_string(code) + ")";
}

}  // namespace platform
FOREWARN_END_NAMESPACE
