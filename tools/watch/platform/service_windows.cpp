// SPDX-License-Identifier: MIT
// The Windows half of platform/service.hpp: the service control manager's API (advapi32).
#include "service.hpp"
#include "stop_signal.hpp"

#include <forewarn/platform/windows.hpp>

#include <cstdio>
#include <string_view>

namespace watch {
namespace service {
namespace detail {

constexpr const wchar_t* name = L"forewarn-watch";

/// One argument as CommandLineToArgvW reads it back (quotes, and the backslashes before them).
std::wstring quote(const std::wstring& arg) {
    if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) return arg;
    std::wstring out = L"\"";
    for (auto it = arg.begin();; ++it) {
        std::size_t backslashes = 0;
        while (it != arg.end() && *it == L'\\') {
            ++it;
            ++backslashes;
        }
        if (it == arg.end()) {
            out.append(backslashes * 2, L'\\');
            break;
        }
        out.append(*it == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
        out.push_back(*it);
    }
    out.push_back(L'"');
    return out;
}

std::wstring program_path() {
    std::wstring path(MAX_PATH, L'\0');
    for (;;) {
        const DWORD n = ::GetModuleFileNameW(nullptr, path.data(), static_cast<DWORD>(path.size()));
        if (n == 0) return std::wstring();
        if (n < path.size()) {
            path.resize(n);
            return path;
        }
        path.resize(path.size() * 2);
    }
}

int failed(const char* what) {
    std::fprintf(stderr, "forewarn-watch service: %s: %s\n", what,
                 forewarn::platform::system_message(::GetLastError()).c_str());
    return 1;
}

/// A call that failed with the error an operator meets (`usual`: the service exists, is not
/// installed, ...): `said`, and `code`; with any other error, failed(what).
int failed(const char* what, DWORD usual, const char* said, int code) {
    if (::GetLastError() != usual) return failed(what);
    std::fputs(said, stderr);
    return code;
}

struct sc_handle {
    SC_HANDLE h;
    explicit sc_handle(SC_HANDLE handle) : h(handle) {}
    sc_handle(const sc_handle&) = delete;
    sc_handle& operator=(const sc_handle&) = delete;
    ~sc_handle() {
        if (h != nullptr) ::CloseServiceHandle(h);
    }
};

/// The service process: what service_main runs and how it reports to the control manager.
struct running {
    agent_main agent = nullptr;
    std::vector<std::string> args;
    std::wstring log;
    SERVICE_STATUS_HANDLE handle = nullptr;
    int exit_code = 0;
};
running& the() {
    static running r;
    return r;
}

void report(DWORD state, int exit_code = 0, DWORD wait_hint = 0) {
    SERVICE_STATUS st{};
    st.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
    st.dwCurrentState = state;
    st.dwControlsAccepted = state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN : 0;
    st.dwWin32ExitCode = exit_code == 0 ? NO_ERROR : ERROR_SERVICE_SPECIFIC_ERROR;
    st.dwServiceSpecificExitCode = static_cast<DWORD>(exit_code);
    st.dwWaitHint = wait_hint;
    ::SetServiceStatus(the().handle, &st);
}

DWORD WINAPI on_control(DWORD control, DWORD, void*, void*) {
    switch (control) {
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_SHUTDOWN:
        report(SERVICE_STOP_PENDING, 0, 10000);
        stop_signal::request();  // the agent stops as on Ctrl+C, then service_main reports STOPPED
        return NO_ERROR;
    case SERVICE_CONTROL_INTERROGATE: return NO_ERROR;
    default: return ERROR_CALL_NOT_IMPLEMENTED;
    }
}

void WINAPI service_main(DWORD, LPWSTR*) {
    running& r = the();
    // A service has no console (its stdout and stderr are no streams at all): its lines and its
    // log go to the log file, appended, each line whole.
    std::FILE* log = ::_wfopen(r.log.c_str(), L"a");
    if (log == nullptr) r.exit_code = 1;  // reported below (SERVICE_EXIT_CODE 1), nowhere to say more
    else std::setvbuf(log, nullptr, _IONBF, 0);
    r.handle = ::RegisterServiceCtrlHandlerExW(name, &on_control, nullptr);
    if (r.handle == nullptr) {
        r.exit_code = failed("RegisterServiceCtrlHandlerEx");
        return;
    }
    if (r.exit_code == 0) {
        report(SERVICE_RUNNING);
        r.exit_code = r.agent(r.args, streams{log, log});
    }
    if (log != nullptr) std::fclose(log);
    report(SERVICE_STOPPED, r.exit_code);
}

/// Takes a leading `--log-file PATH` off the arguments (the default is beside the program);
/// nothing, said on stderr, when the path is missing.
std::optional<std::wstring> take_log_file(const char* command, std::vector<std::string>& rest) {
    if (!rest.empty() && rest[0] == "--log-file") {
        if (rest.size() < 2) {
            std::fprintf(stderr, "forewarn-watch service %s: --log-file needs a value (a file's path)\n", command);
            return std::nullopt;
        }
        std::wstring path = forewarn::platform::to_wide(rest[1]);
        rest.erase(rest.begin(), rest.begin() + 2);
        return path;
    }
    std::wstring path = program_path();
    const auto slash = path.find_last_of(L"\\/");
    return (slash == std::wstring::npos ? std::wstring() : path.substr(0, slash + 1)) + L"forewarn-watch.log";
}

/// The agent's arguments: its name, then the options.
std::vector<std::string> agent_arguments(const std::vector<std::string>& options) {
    std::vector<std::string> args{"forewarn-watch"};
    args.insert(args.end(), options.begin(), options.end());
    return args;
}

int install(std::vector<std::string> rest, options_check check) {
    const auto log_file = take_log_file("install", rest);
    if (!log_file) return 2;
    const std::wstring& log = *log_file;
    // The options are checked now, as the agent will read them: a bad one installs nothing.
    if (const auto code = check(agent_arguments(rest))) return *code;

    std::wstring command = quote(program_path()) + L" service run --log-file " + quote(log);
    for (const auto& a : rest) command += L" " + quote(forewarn::platform::to_wide(a));

    sc_handle scm(::OpenSCManagerW(nullptr, nullptr, SC_MANAGER_CREATE_SERVICE));
    if (scm.h == nullptr) return failed("cannot open the service control manager (run it as an administrator)");
    sc_handle svc(::CreateServiceW(scm.h, name, name, SERVICE_CHANGE_CONFIG | SERVICE_QUERY_STATUS,
                                   SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START, SERVICE_ERROR_NORMAL, command.c_str(),
                                   nullptr, nullptr, nullptr, nullptr, nullptr));
    if (svc.h == nullptr)
        return failed("CreateService", ERROR_SERVICE_EXISTS,
                      "forewarn-watch service install: the service forewarn-watch exists; "
                      "`forewarn-watch service uninstall` first\n",
                      1);
    std::wstring about = L"Hears of this cloud VM's host maintenance before it happens, runs hooks, approves events.";
    SERVICE_DESCRIPTIONW description{about.data()};
    ::ChangeServiceConfig2W(svc.h, SERVICE_CONFIG_DESCRIPTION, &description);
    // As the systemd unit's Restart=always, RestartSec=2s: restarted 2 s after it fails, also
    // when it stops with an error of its own (an exit code other than 0).
    SC_ACTION restart[3] = {{SC_ACTION_RESTART, 2000}, {SC_ACTION_RESTART, 2000}, {SC_ACTION_RESTART, 2000}};
    SERVICE_FAILURE_ACTIONSW actions{};
    actions.dwResetPeriod = 24 * 60 * 60;
    actions.cActions = 3;
    actions.lpsaActions = restart;
    ::ChangeServiceConfig2W(svc.h, SERVICE_CONFIG_FAILURE_ACTIONS, &actions);
    SERVICE_FAILURE_ACTIONS_FLAG on_error{TRUE};
    ::ChangeServiceConfig2W(svc.h, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &on_error);
    std::printf("forewarn-watch service: installed forewarn-watch (starts with Windows; start it now with "
                "`sc.exe start forewarn-watch`)\n  command: %s\n  log: %s\n",
                forewarn::platform::to_utf8(command).c_str(), forewarn::platform::to_utf8(log).c_str());
    return 0;
}

int uninstall() {
    sc_handle scm(::OpenSCManagerW(nullptr, nullptr, SC_MANAGER_CONNECT));
    if (scm.h == nullptr) return failed("cannot open the service control manager (run it as an administrator)");
    sc_handle svc(::OpenServiceW(scm.h, name, SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE));
    if (svc.h == nullptr)
        return failed("OpenService", ERROR_SERVICE_DOES_NOT_EXIST,
                      "forewarn-watch service uninstall: the service forewarn-watch is not installed\n", 1);
    SERVICE_STATUS st{};
    if (::ControlService(svc.h, SERVICE_CONTROL_STOP, &st)) {
        for (int i = 0; i < 150 && ::QueryServiceStatus(svc.h, &st) && st.dwCurrentState != SERVICE_STOPPED; ++i)
            ::Sleep(100);  // up to 15 s for its clean stop
    }
    if (!::DeleteService(svc.h)) return failed("DeleteService");
    std::puts("forewarn-watch service: removed forewarn-watch");
    return 0;
}

int run(std::vector<std::string> rest, agent_main agent) {
    const auto log_file = take_log_file("run", rest);
    if (!log_file) return 2;
    running& r = the();
    r.log = *log_file;
    r.agent = agent;
    r.args = agent_arguments(rest);
    SERVICE_TABLE_ENTRYW table[] = {{const_cast<wchar_t*>(name), &service_main}, {nullptr, nullptr}};
    if (!::StartServiceCtrlDispatcherW(table))
        return failed("StartServiceCtrlDispatcher", ERROR_FAILED_SERVICE_CONTROLLER_CONNECT,
                      "forewarn-watch service run: only the service control manager starts this; in a console, "
                      "run forewarn-watch with the options alone\n",
                      2);
    return r.exit_code;
}

}  // namespace detail

std::optional<int> command(const std::vector<std::string>& args, agent_main agent, options_check check) {
    if (args.size() < 2 || args[1] != "service") return std::nullopt;
    const std::string what = args.size() > 2 ? args[2] : std::string();
    std::vector<std::string> rest(args.begin() + (std::min)(args.size(), std::size_t(3)), args.end());
    if (what == "install") return detail::install(std::move(rest), check);
    if (what == "uninstall" && rest.empty()) return detail::uninstall();
    if (what == "run") return detail::run(std::move(rest), agent);
    std::fputs("usage: forewarn-watch service install [--log-file PATH] [OPTIONS...]\n"
               "       forewarn-watch service uninstall\n"
               "       forewarn-watch service run [--log-file PATH] [OPTIONS...]   (the service control manager's)\n",
               stderr);
    return 2;
}

}  // namespace service
}  // namespace watch
