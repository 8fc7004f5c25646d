// SPDX-License-Identifier: MIT
// forewarn-watch: watches Azure Scheduled Events, GCE maintenance notices or AWS instance
// metadata notices (real or emulated), prints one line per change, and can approve events (Azure).
// Run with --help for the flags.
//
//   forewarn-watch --json                                  # on an Azure or GCE VM
//   forewarn-watch --endpoint http://127.0.0.1:8080 --cloud azure --self WestNO_0 --approve leader
//
// With --json, stdout carries nothing but one JSON object per change (flushed at once), so it can
// be piped into jq or a log shipper; everything else (errors, approvals) goes to stderr.

#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/curl_transport.hpp>
#include <forewarn/json.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/state_file.hpp>
#include <forewarn/time.hpp>

#include <chrono>
#include <csignal>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct settings {
    std::string cloud = "auto";  // azure | gce | aws | auto
    std::string endpoint;
    bool json = false;
    std::string self;
    forewarn::approval_scope approve = forewarn::approval_scope::never;
    std::optional<std::chrono::milliseconds> interval;  // default: the client's (Azure 1 s, AWS 5 s)
    std::optional<long long> exit_after;
    std::string state_file;
    std::optional<std::chrono::seconds> grace;
};

void usage(std::FILE* out) {
    std::fputs(
        "usage: forewarn-watch [options]\n"
        "  --cloud azure|gce|aws|auto\n"
        "                           which metadata service (default auto: probe them all)\n"
        "  --endpoint URL           the service root, e.g. http://127.0.0.1:8080 (default: the real address)\n"
        "  --json                   one JSON object per change on stdout, nothing else\n"
        "  --self NAME              this VM's name as listed in Resources (default: ask the metadata)\n"
        "  --approve never|own|leader|all\n"
        "                           never (default); own: events naming this VM; leader: where this VM\n"
        "                           is the elected leader (followers approve user events after a grace);\n"
        "                           all: every event seen\n"
        "  --grace SECONDS          the follower's grace for user events with --approve leader (default 30)\n"
        "  --interval MS            Azure poll interval in milliseconds (default 1000, at least 200);\n"
        "                           AWS: default 5000, at least 1000\n"
        "  --exit-after N           exit 0 after N change lines\n"
        "  --state-file PATH        remember what was handled across restarts\n"
        "  --help                   this text\n",
        out);
}

bool parse_number(const char* text, long long& out) {
    if (!text || !*text) return false;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0) return false;
    out = v;
    return true;
}

/// The settings, or an exit code (0 after --help, 2 for a bad command line).
std::optional<int> parse_args(int argc, char** argv, settings& s) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "forewarn-watch: %s needs a value\n", name);
                return nullptr;
            }
            return argv[++i];
        };
        long long n = 0;
        if (arg == "--help" || arg == "-h") {
            usage(stdout);
            return 0;
        } else if (arg == "--json") {
            s.json = true;
        } else if (arg == "--cloud") {
            const char* v = value("--cloud");
            if (!v) return 2;
            s.cloud = v;
            if (s.cloud != "azure" && s.cloud != "gce" && s.cloud != "aws" && s.cloud != "auto") {
                std::fprintf(stderr, "forewarn-watch: --cloud must be azure, gce, aws or auto, not \"%s\"\n", v);
                return 2;
            }
        } else if (arg == "--endpoint") {
            const char* v = value("--endpoint");
            if (!v) return 2;
            s.endpoint = v;
        } else if (arg == "--self") {
            const char* v = value("--self");
            if (!v) return 2;
            s.self = v;
        } else if (arg == "--approve") {
            const char* v = value("--approve");
            if (!v) return 2;
            const std::string_view a = v;
            if (a == "never") s.approve = forewarn::approval_scope::never;
            else if (a == "own") s.approve = forewarn::approval_scope::own;
            else if (a == "leader") s.approve = forewarn::approval_scope::leader;
            else if (a == "all") s.approve = forewarn::approval_scope::all;
            else {
                std::fprintf(stderr, "forewarn-watch: --approve must be never, own, leader or all, not \"%s\"\n", v);
                return 2;
            }
        } else if (arg == "--interval") {
            if (!parse_number(value("--interval"), n) || n == 0) {
                std::fputs("forewarn-watch: --interval needs a positive number of milliseconds\n", stderr);
                return 2;
            }
            s.interval = std::chrono::milliseconds(n);
        } else if (arg == "--exit-after") {
            if (!parse_number(value("--exit-after"), n) || n == 0) {
                std::fputs("forewarn-watch: --exit-after needs a positive number of lines\n", stderr);
                return 2;
            }
            s.exit_after = n;
        } else if (arg == "--grace") {
            if (!parse_number(value("--grace"), n)) {
                std::fputs("forewarn-watch: --grace needs a number of seconds\n", stderr);
                return 2;
            }
            s.grace = std::chrono::seconds(n);
        } else if (arg == "--state-file") {
            const char* v = value("--state-file");
            if (!v) return 2;
            s.state_file = v;
        } else {
            std::fprintf(stderr, "forewarn-watch: unknown option \"%s\" (see --help)\n", argv[i]);
            return 2;
        }
    }
    return std::nullopt;
}

std::string_view status_text(const forewarn::event& e) {
    switch (e.status) {
    case forewarn::event_status::scheduled: return "Scheduled";
    case forewarn::event_status::started: return "Started";
    case forewarn::event_status::completed:
    case forewarn::event_status::cancelled:
    case forewarn::event_status::unknown: break;
    }
    return e.raw_status;
}

std::optional<std::string_view> source_text(const forewarn::event& e) {
    if (!e.source) return std::nullopt;
    switch (*e.source) {
    case forewarn::event_source::platform: return std::string_view("Platform");
    case forewarn::event_source::user: return std::string_view("User");
    case forewarn::event_source::unknown: break;
    }
    return std::string_view(e.raw_source);
}

/// The line for a person.
std::string text_line(const forewarn::change& c) {
    const forewarn::event& e = c.event;
    std::string out(forewarn::to_string(c.kind));
    out.resize(8, ' ');
    out += ' ';
    out += forewarn::to_string(e.type);
    out += ' ';
    out += e.id;
    out += ' ';
    out += status_text(e);
    if (c.kind == forewarn::change_kind::recover) {
        out += " (";
        out += forewarn::to_string(c.reason);
        out += ')';
    }
    if (e.not_before) out += ", not before " + forewarn::format_iso8601(*e.not_before);
    if (!e.resources.empty()) {
        out += ", for ";
        for (std::size_t i = 0; i < e.resources.size(); ++i) out += (i ? "," : "") + e.resources[i];
    }
    if (auto src = source_text(e)) out += ", source " + std::string(*src);
    if (auto d = e.duration()) out += ", " + std::to_string(d->count()) + " s";
    if (!e.description.empty()) out += ": " + e.description;
    return out;
}

/// What the handlers write, under one lock.
struct output {
    std::mutex mutex;
    long long lines = 0;
    bool done = false;
};

/// The signals main() waits for: blocked in every thread (so none runs a handler), taken by
/// sigwait. SIGUSR1 is forewarn-watch's own: the last --exit-after line was written.
sigset_t waited_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    return set;
}

/// Sleeps until one of waited_signals() arrives; wakes for nothing else.
int wait_for_signal() {
    const sigset_t set = waited_signals();
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    return sig;
}

template <class Client>
int watch(Client client, const settings& s, const std::string& where, std::string_view cloud_name) {
    output out;
    forewarn::poller<Client>* poller = nullptr;
    auto emit = [&](const forewarn::change& c) {
        const std::string line =
            s.json ? forewarn::to_json(c, forewarn::invalid_utf8::replace).value_or(std::string()) : text_line(c);
        std::lock_guard<std::mutex> lock(out.mutex);
        if (out.done) return;
        std::fwrite(line.data(), 1, line.size(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
        ++out.lines;
        if (s.exit_after && out.lines >= *s.exit_after) {
            out.done = true;
            poller->stop();         // from the handler: nothing more is delivered
            ::kill(::getpid(), SIGUSR1);  // wakes main()'s sigwait
        }
    };

    forewarn::poller_handlers h;
    h.on_prepare = [&](const forewarn::change& c, forewarn::approval_handle ready) {
        emit(c);
        // forewarn-watch has nothing to drain: it is ready at once, and the policy decides.
        if (s.approve != forewarn::approval_scope::never) ready.ready();
    };
    h.on_started = emit;
    h.on_recover = emit;
    h.on_updated = emit;
    h.on_error = [](const forewarn::error& e) { std::fprintf(stderr, "forewarn-watch: %s\n", e.describe().c_str()); };
    h.on_approved = [](const std::vector<std::string>& ids) {
        std::string text;
        for (const auto& id : ids) text += " " + id;
        std::fprintf(stderr, "forewarn-watch: approved%s\n", text.c_str());
    };

    forewarn::poller_options o;
    if (!s.state_file.empty()) o.state = std::make_shared<forewarn::state_file>(s.state_file);
    o.approval.scope = s.approve;
    if (s.grace) o.approval.follower_grace = *s.grace;

    forewarn::poller<Client> p(std::move(client), h, o);
    poller = &p;
    std::fprintf(stderr, "forewarn-watch: watching %s at %s (approve: %s%s%s)\n",
                 std::string(cloud_name).c_str(), where.c_str(),
                 std::string(forewarn::to_string(s.approve)).c_str(), s.self.empty() ? "" : " as ", s.self.c_str());
    if (auto started = p.start(); !started) {
        std::fprintf(stderr, "forewarn-watch: %s\n", started.error().describe().c_str());
        return 1;
    }
    // The main thread sleeps until SIGINT, SIGTERM or the last --exit-after line: no polling.
    const int sig = wait_for_signal();
    p.stop();
    if (sig != SIGUSR1) std::fputs("forewarn-watch: stopped by a signal\n", stderr);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    settings s;
    if (auto code = parse_args(argc, argv, s)) return *code;
    // Before any thread starts (detect_cloud's probes, the poller), so that every thread inherits
    // the mask and the signals wait for main()'s sigwait.
    const sigset_t waited = waited_signals();
    pthread_sigmask(SIG_BLOCK, &waited, nullptr);

    std::string cloud = s.cloud;
    if (cloud == "auto") {
        forewarn::detect_options d;
        d.azure_endpoint = s.endpoint;
        d.gce_endpoint = s.endpoint;
        d.aws_endpoint = s.endpoint;
        auto found = forewarn::detect_cloud(d);
        if (!found || found->found == forewarn::cloud::none) {
            std::fputs("forewarn-watch: no Azure IMDS, GCE metadata server or AWS IMDS answers here", stderr);
            if (found)
                std::fprintf(stderr, " (azure: %s; gce: %s; aws: %s)", found->azure_error.describe().c_str(),
                             found->gce_error.describe().c_str(), found->aws_error.describe().c_str());
            else
                std::fprintf(stderr, " (%s)", found.error().describe().c_str());
            std::fputs("; use --cloud and --endpoint\n", stderr);
            return 1;
        }
        cloud = std::string(forewarn::to_string(found->found));
    }

    if (cloud == "azure") {
        forewarn::azure::client_options o;
        o.endpoint = s.endpoint;
        o.self_name = s.self;
        if (s.interval) o.poll_interval = *s.interval;
        forewarn::azure::scheduled_events_client client(o);
        const std::string where = client.endpoint();
        return watch(std::move(client), s, where, "azure");
    }
    if (cloud == "aws") {
        forewarn::aws::client_options o;
        o.endpoint = s.endpoint;
        o.self_name = s.self;
        if (s.interval) o.poll_interval = *s.interval;
        forewarn::aws::instance_metadata_client client(o);
        const std::string where = client.endpoint();
        return watch(std::move(client), s, where, "aws");
    }
    forewarn::gce::client_options o;
    o.endpoint = s.endpoint;
    o.self_name = s.self;
    forewarn::gce::metadata_client client(o);
    const std::string where = client.endpoint();
    return watch(std::move(client), s, where, "gce");
}
