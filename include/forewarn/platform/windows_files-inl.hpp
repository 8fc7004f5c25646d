// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/platform/files.hpp>, the Windows half (included by files-inl.hpp, so
// compiled once into libforewarn in compiled mode): CreateFileW, WriteFile, FlushFileBuffers,
// then MoveFileExW with MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH (the rename is on the
// disk when it returns). Paths by their wide names.

#include <forewarn/platform/files.hpp>
#include <forewarn/platform/windows.hpp>

#include <algorithm>
#include <atomic>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace platform {

FOREWARN_INLINE result<void> write_file_atomically(const std::filesystem::path& path, std::string_view text) {
    static std::atomic<unsigned long> counter{0};
    const std::string name = utf8_name(path);
    std::filesystem::path tmp = path;
    tmp += ".tmp-" + std::to_string(static_cast<unsigned long long>(::GetCurrentProcessId())) + "-" +
           std::to_string(counter.fetch_add(1));
    auto give_up = [&](std::string what) -> result<void> {
        ::DeleteFileW(tmp.c_str());
        return error(errc::io_error, std::move(what));
    };
    // Each step asks the test seam first (detail::observe_file_step; nothing in a program).
    auto injected = [](int e) { return std::generic_category().message(e); };
    if (const int e = detail::observe_file_step(file_step::create, tmp))
        return error(errc::io_error, "cannot create " + utf8_name(tmp) + ": " + injected(e));
    HANDLE h = ::CreateFileW(tmp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE)
        return error(errc::io_error, "cannot create " + utf8_name(tmp) + ": " + system_message(::GetLastError()));
    std::string failure;
    std::size_t allowed = text.size();
    const int write_fault = detail::observe_file_step(file_step::write, tmp, allowed);
    if (write_fault) text = text.substr(0, allowed);  // a short write, then the fault
    while (!text.empty() && failure.empty()) {
        const DWORD chunk = static_cast<DWORD>((std::min<std::size_t>)(text.size(), 1u << 30));
        DWORD n = 0;
        if (::WriteFile(h, text.data(), chunk, &n, nullptr) == FALSE || n == 0) failure = system_message(::GetLastError());
        text.remove_prefix(n);
    }
    if (failure.empty() && write_fault) failure = injected(write_fault);
    if (failure.empty()) {
        if (const int e = detail::observe_file_step(file_step::flush_file, tmp)) failure = injected(e);
        else if (!::FlushFileBuffers(h)) failure = system_message(::GetLastError());
    }
    const int close_fault = detail::observe_file_step(file_step::close, tmp);
    ::CloseHandle(h);
    if (failure.empty() && close_fault) failure = injected(close_fault);
    if (!failure.empty()) return give_up("cannot write " + utf8_name(tmp) + ": " + failure);
    if (const int e = detail::observe_file_step(file_step::rename, path))
        return give_up("cannot rename " + utf8_name(tmp) + " to " + name + ": " + injected(e));
    // A reader, a virus scanner or the indexer may hold the old file open for a moment without
    // FILE_SHARE_DELETE: the rename is tried again for up to half a second.
    DWORD moved_error = 0;
    for (int attempt = 0; attempt < 25; ++attempt) {
        if (::MoveFileExW(tmp.c_str(), path.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return {};
        moved_error = ::GetLastError();
        if (moved_error != ERROR_ACCESS_DENIED && moved_error != ERROR_SHARING_VIOLATION) break;
        ::Sleep(20);
    }
    return give_up("cannot rename " + utf8_name(tmp) + " to " + name + ": " + system_message(moved_error));
}

FOREWARN_INLINE bool process_running(unsigned long long pid) {
    if (pid == 0 || pid > 0xffffffffULL) return false;
    HANDLE h = ::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
    if (h == nullptr) return ::GetLastError() == ERROR_ACCESS_DENIED;  // denied: it runs, as another user
    DWORD code = 0;
    const bool running = ::GetExitCodeProcess(h, &code) && code == STILL_ACTIVE;
    ::CloseHandle(h);
    return running;
}

}  // namespace platform
FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
