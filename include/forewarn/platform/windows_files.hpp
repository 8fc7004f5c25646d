// SPDX-License-Identifier: MIT
#pragma once

// The Windows half of <forewarn/platform/files.hpp>: CreateFileW, WriteFile, FlushFileBuffers,
// then MoveFileExW with MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH (the rename is on the
// disk when it returns). Paths by their wide names.

#include <forewarn/platform/files.hpp>
#include <forewarn/platform/windows.hpp>

#include <atomic>

FOREWARN_BEGIN_NAMESPACE
namespace platform {

inline result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text) {
    static std::atomic<unsigned long> counter{0};
    std::filesystem::path tmp = path;
    tmp += ".tmp-" + std::to_string(static_cast<unsigned long long>(::GetCurrentProcessId())) + "-" +
           std::to_string(counter.fetch_add(1));
    auto give_up = [&](std::string what) -> result<void> {
        ::DeleteFileW(tmp.c_str());
        return error(errc::io_error, std::move(what));
    };
    HANDLE h = ::CreateFileW(tmp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE)
        return error(errc::io_error, "cannot create " + tmp.u8string() + ": " + system_message(::GetLastError()));
    bool written = true;
    DWORD failure = 0;
    while (!text.empty() && written) {
        const DWORD chunk = static_cast<DWORD>((std::min<std::size_t>)(text.size(), 1u << 30));
        DWORD n = 0;
        written = ::WriteFile(h, text.data(), chunk, &n, nullptr) != FALSE && n > 0;
        if (!written) failure = ::GetLastError();
        text.remove_prefix(n);
    }
    if (written && !::FlushFileBuffers(h)) {
        written = false;
        failure = ::GetLastError();
    }
    ::CloseHandle(h);
    if (!written) return give_up("cannot write " + tmp.u8string() + ": " + system_message(failure));
    if (!::MoveFileExW(tmp.c_str(), path.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return give_up("cannot rename " + tmp.u8string() + " to " + path.u8string() + ": " + system_message(::GetLastError()));
    return {};
}

}  // namespace platform
FOREWARN_END_NAMESPACE
