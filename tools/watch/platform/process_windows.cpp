// SPDX-License-Identifier: MIT
// The Windows half of platform/process.hpp: CreateProcessW of `cmd.exe /c COMMAND` in a job object
// (its whole process tree ends with the job: TerminateJobObject at the deadline, and
// KILL_ON_JOB_CLOSE should forewarn-watch itself die), stdin and stdout/stderr through pipes, a
// Unicode environment block.
#include "arguments.hpp"
#include "process.hpp"

#include <forewarn/platform/windows.hpp>

#include <map>
#include <mutex>
#include <thread>

namespace watch {
namespace detail {

struct win_handle {
    HANDLE h = nullptr;
    win_handle() = default;
    explicit win_handle(HANDLE handle) : h(handle == INVALID_HANDLE_VALUE ? nullptr : handle) {}
    win_handle(const win_handle&) = delete;
    win_handle& operator=(const win_handle&) = delete;
    ~win_handle() { reset(); }
    void reset() {
        if (h != nullptr) ::CloseHandle(h);
        h = nullptr;
    }
};

// NAME=value pairs, sorted case-insensitively by name as Windows wants, each ending in NUL, the
// block ending in a second NUL.
std::wstring environment_block(const std::vector<std::string>& add) {
    struct iless {
        bool operator()(const std::wstring& a, const std::wstring& b) const {
            return ::CompareStringOrdinal(a.c_str(), static_cast<int>(a.size()), b.c_str(), static_cast<int>(b.size()),
                                          TRUE) == CSTR_LESS_THAN;
        }
    };
    std::map<std::wstring, std::wstring, iless> vars;
    if (wchar_t* env = ::GetEnvironmentStringsW()) {
        for (const wchar_t* p = env; *p != L'\0'; p += std::wcslen(p) + 1) {
            const std::wstring_view kv = p;
            const auto eq = kv.find(L'=', 1);  // "=C:=C:\dir": a drive's directory, name starts with '='
            if (eq == std::wstring_view::npos) continue;
            const std::wstring name(kv.substr(0, eq));
            // The agent's secrets stay the agent's: a hook never inherits the etcd password.
            if (::CompareStringOrdinal(name.c_str(), -1, L"FOREWARN_ETCD_PASSWORD", -1, TRUE) == CSTR_EQUAL ||
                ::CompareStringOrdinal(name.c_str(), -1, L"FOREWARN_WEBHOOK_AUTHORIZATION", -1, TRUE) == CSTR_EQUAL)
                continue;
            vars[name] = std::wstring(kv.substr(eq + 1));
        }
        ::FreeEnvironmentStringsW(env);
    }
    for (const auto& kv : add) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) continue;
        vars[forewarn::platform::to_wide(kv.substr(0, eq))] = forewarn::platform::to_wide(kv.substr(eq + 1));
    }
    std::wstring block;
    for (const auto& [k, v] : vars) {
        block += k;
        block += L'=';
        block += v;
        block += L'\0';
    }
    block += L'\0';
    return block;
}

}  // namespace detail

std::optional<bool> detail::run_process(const std::string& command, const std::string& input, const std::vector<std::string>& env,
                                        std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stop,
                                        const std::function<void(std::string_view)>& log_line, hook_outcome& out) {
    using clock = std::chrono::steady_clock;
    auto failed_to_start = [&](const char* what) {
        out.detail = std::string(what) + ": " + forewarn::platform::system_message(::GetLastError());
        return std::optional<bool>();
    };

    // Not inheritable: only while this hook's process is created (below) are its ends.
    HANDLE in_read = nullptr, in_write = nullptr, out_read = nullptr, out_write = nullptr;
    if (!::CreatePipe(&in_read, &in_write, nullptr, 0)) return failed_to_start("CreatePipe");
    detail::win_handle child_in(in_read), our_in(in_write);
    if (!::CreatePipe(&out_read, &out_write, nullptr, 0)) return failed_to_start("CreatePipe");
    detail::win_handle our_out(out_read), child_out(out_write);

    detail::win_handle job(::CreateJobObjectW(nullptr, nullptr));
    if (job.h == nullptr) return failed_to_start("CreateJobObject");
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    ::SetInformationJobObject(job.h, JobObjectExtendedLimitInformation, &limits, sizeof(limits));

    // cmd.exe /c COMMAND: the command is the operator's, passed whole; the change reaches it only
    // through stdin and the environment.
    wchar_t system_dir[MAX_PATH] = {};
    const UINT n = ::GetSystemDirectoryW(system_dir, MAX_PATH);
    const std::wstring shell = (n > 0 && n < MAX_PATH ? std::wstring(system_dir, n) : std::wstring(L"C:\\Windows\\System32")) + L"\\cmd.exe";
    std::wstring command_line = L"\"" + shell + L"\" /d /s /c \"" + forewarn::platform::to_wide(command) + L"\"";
    std::wstring environment = detail::environment_block(env);

    STARTUPINFOW si{};
    si.cb = sizeof(si);
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = child_in.h;
    si.hStdOutput = child_out.h;
    si.hStdError = child_out.h;
    PROCESS_INFORMATION pi{};
    {
        // CreateProcess with inheritance gives the child every inheritable handle of this process:
        // a hook started on another thread at the same moment would hold this one's pipe (and this
        // one's output would not end before that hook does). So the child's ends are inheritable
        // only under this lock, and closed before it is released.
        static std::mutex spawning;
        std::lock_guard<std::mutex> lock(spawning);
        if (!::SetHandleInformation(child_in.h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT) ||
            !::SetHandleInformation(child_out.h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
            return failed_to_start("SetHandleInformation");
        const BOOL created = ::CreateProcessW(shell.c_str(), command_line.data(), nullptr, nullptr, TRUE,
                                              CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | CREATE_NO_WINDOW,
                                              environment.data(), nullptr, &si, &pi);
        const DWORD error = ::GetLastError();
        child_in.reset();
        child_out.reset();
        if (!created) {
            ::SetLastError(error);
            return failed_to_start("CreateProcess");
        }
    }
    detail::win_handle process(pi.hProcess), thread(pi.hThread);
    // In the job before it runs a single instruction, so nothing it starts escapes it.
    if (!::AssignProcessToJobObject(job.h, process.h)) {
        ::TerminateProcess(process.h, 1);
        return failed_to_start("AssignProcessToJobObject");
    }
    ::ResumeThread(thread.h);

    // stdin and the output on threads of their own (anonymous pipes have no overlapped I/O);
    // closing our ends ends them.
    std::thread writer([&input, &our_in] {
        std::size_t written = 0;
        while (written < input.size()) {
            DWORD put = 0;
            const DWORD chunk = static_cast<DWORD>((std::min<std::size_t>)(input.size() - written, 1 << 16));
            if (!::WriteFile(our_in.h, input.data() + written, chunk, &put, nullptr) || put == 0) break;
            written += put;
        }
        our_in.reset();
    });
    output_lines lines(log_line);
    std::atomic<bool> output_done{false};
    std::thread reader([&] {
        char buf[4096];
        DWORD got = 0;
        while (::ReadFile(our_out.h, buf, sizeof buf, &got, nullptr) && got > 0) lines.add(buf, got);
        output_done.store(true);
    });

    bool timed_out = false, killed = false;
    for (;;) {
        const auto now = clock::now();
        if (!killed && (now >= deadline || stop.load())) {
            timed_out = !stop.load();
            ::TerminateJobObject(job.h, 1);  // the whole tree, at once (Windows has no SIGTERM)
            killed = true;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
        const DWORD wait_ms = static_cast<DWORD>(std::clamp<long long>(left, 0, 200));  // the stop flag, that often
        if (::WaitForSingleObject(process.h, killed ? INFINITE : wait_ms) == WAIT_OBJECT_0) break;
    }
    // The process is gone. A child it left in the background may still hold the output: it may
    // write until the deadline, then the job ends it (and with it the last writer of the pipe:
    // only this hook's tree ever held it, so the reader sees the end). The writer ends when the
    // reader side is gone.
    while (!output_done.load() && !killed && clock::now() < deadline && !stop.load()) ::Sleep(50);
    if (!output_done.load()) ::TerminateJobObject(job.h, 1);
    reader.join();
    lines.finish();
    writer.join();

    DWORD code = 0;
    ::GetExitCodeProcess(process.h, &code);
    out.exit_code = static_cast<int>(code);
    return timed_out;
}

unsigned long long process_id() { return ::GetCurrentProcessId(); }

bool runnable(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec);
}

std::optional<std::filesystem::path> find_on_path(const std::string& name) {
    return detail::search_path(platform::environment("PATH").value_or(""), ';', name, {"", ".exe", ".cmd", ".bat", ".com"});
}

}  // namespace watch
