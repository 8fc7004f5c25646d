// SPDX-License-Identifier: MIT
// The command line and environment as UTF-8 (platform/arguments.hpp).
#include "arguments.hpp"

#if defined(_WIN32)
#include <forewarn/platform/windows.hpp>

#include <shellapi.h>
#else
#include <cstdlib>
#endif

namespace watch {
namespace platform {

std::vector<std::string> arguments(int argc, char** argv) {
#if defined(_WIN32)
    int n = 0;
    if (wchar_t** wide = ::CommandLineToArgvW(::GetCommandLineW(), &n)) {
        std::vector<std::string> out;
        for (int i = 0; i < n; ++i) out.push_back(forewarn::platform::to_utf8(wide[i]));
        ::LocalFree(wide);
        return out;
    }
#endif
    return std::vector<std::string>(argv, argv + argc);
}

std::optional<std::string> environment(const std::string& name) {
#if defined(_WIN32)
    const std::wstring wide_name = forewarn::platform::to_wide(name);
    std::wstring value(64, L'\0');
    for (;;) {
        ::SetLastError(ERROR_SUCCESS);
        const DWORD n = ::GetEnvironmentVariableW(wide_name.c_str(), value.data(), static_cast<DWORD>(value.size()));
        if (n == 0) {
            if (::GetLastError() == ERROR_ENVVAR_NOT_FOUND) return std::nullopt;
            return std::string();
        }
        if (n < value.size()) {
            value.resize(n);
            return forewarn::platform::to_utf8(value);
        }
        value.resize(n);  // n counts the terminating NUL when the buffer was too small
    }
#else
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
#endif
}

}  // namespace platform
}  // namespace watch
