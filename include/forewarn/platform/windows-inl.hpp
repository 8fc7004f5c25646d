// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/platform/windows.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/platform/windows.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace platform {

FOREWARN_INLINE std::wstring to_wide(std::string_view s) {
    if (s.empty()) return {};
    const int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    if (n <= 0) return {};
    std::wstring w(static_cast<std::size_t>(n), L'\0');
    ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

FOREWARN_INLINE std::string to_utf8(std::wstring_view w) {
    if (w.empty()) return {};
    const int n = ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
    if (n <= 0) return {};
    std::string s(static_cast<std::size_t>(n), '\0');
    ::WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr, nullptr);
    return s;
}

FOREWARN_INLINE std::string system_message(unsigned long code, const wchar_t* module) {
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

#endif  // FOREWARN_HEADER_DEFINITIONS
