// SPDX-License-Identifier: MIT
// forewarn-watch, the agent: watches the maintenance notices of the cloud VM it runs on (each
// cloud of clouds.hpp; real or emulated), prints one line per change, runs the operator's hooks,
// approves events as told where the cloud takes approvals (each through its own API), and serves
// metrics and health. Run with --help for the flags; docs/operators.md for the whole story.
//
//   forewarn-watch --json                                  # on a cloud VM: the cloud is detected
//   forewarn-watch --endpoint http://127.0.0.1:8080 --cloud NAME --self VM_0 --approve leader
//   forewarn-watch --approve own --on-prepare /etc/forewarn/drain.sh --state-file /var/lib/forewarn/state.json
//
// With --json, stdout carries nothing but one JSON object per line (a change, or with --dry-run
// what would have been approved), flushed at once, so it can be piped into jq or a log shipper;
// everything else (errors, approvals, hook output) goes to stderr.

#include <forewarn/clouds.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/transport/default.hpp>

#include "agent.hpp"
#include "lines.hpp"
#include "check.hpp"
#include "options.hpp"
#include "platform/arguments.hpp"
#include "platform/service.hpp"
#include "platform/stop_signal.hpp"
#include "source.hpp"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

using watch::settings;

/// 0 when the client's settings can work; else says why, before anything else is printed or
/// started, and gives the exit code: 2 for a usage error (a malformed --endpoint), else 1 (a
/// service the environment turns off, as its facts' `disabled` says, say).
int usable(const watch::source& client) {
    if (auto v = client.validate(); !v) {
        std::fprintf(watch::streams().log, "forewarn-watch: %s\n", v.error().describe().c_str());
        return v.error().code == forewarn::errc::invalid_argument ? 2 : 1;
    }
    return 0;
}

/// The agent: its arguments (the program's name first) to its exit code.
int agent_main(const std::vector<std::string>& args, watch::service::streams out) {
    watch::set_streams(out);
    if (args.size() > 1 && args[1] == "check") {
        std::vector<std::string> rest = args;
        rest.erase(rest.begin() + 1);
        return watch::check_main(std::move(rest));
    }
    settings s;
    if (auto code = watch::parse(args, s)) return *code;
    // Before any thread starts (detect_cloud's probes, the poller): on POSIX every thread then
    // inherits the signal mask and the signals wait for main().
    watch::stop_signal::prepare();

    std::string cloud = s.cloud;
    if (cloud == "auto") {
        auto found = watch::detect_cloud(s);
        if (!found) {
            // A malformed --endpoint is a usage error (exit 2), said before anything else; any other
            // failure to probe (a thread that could not start) is the agent's own (exit 1).
            const bool usage = found.error().code == forewarn::errc::invalid_argument;
            std::fprintf(watch::streams().log, "forewarn-watch: %s%s\n", usage ? "--endpoint: " : "",
                         found.error().describe().c_str());
            return usage ? 2 : 1;
        }
        if (found->found == forewarn::cloud::none) {
            std::fprintf(watch::streams().log, "forewarn-watch: no %s answers here (%s)",
                         watch::clouds_in_words(&forewarn::cloud_facts::service_name, "or").c_str(),
                         watch::detection_evidence(*found).c_str());
            std::fputs("; use --cloud and --endpoint\n", watch::streams().log);
            return 1;
        }
        cloud = std::string(forewarn::to_string(found->found));
    }

    auto client = watch::make_source(cloud, s);
    if (const int code = usable(*client)) return code;
    return watch::run_agent(std::move(client), s);
}

}  // namespace

int main(int argc, char** argv) {
    // The log as it happens: the Windows C runtime buffers stderr into a pipe or a file.
    std::setvbuf(stderr, nullptr, _IONBF, 0);
    const auto args = watch::platform::arguments(argc, argv);
    const auto check = [](const std::vector<std::string>& a) {
        settings s;
        return watch::parse(a, s);
    };
    if (auto code = watch::service::command(args, &agent_main, check)) return *code;  // Windows: service install|uninstall|run
    return agent_main(args, watch::service::streams{stdout, stderr});
}
