// SPDX-License-Identifier: MIT
// forewarn-watch's option table (options.hpp): the flags, what each sets, --help, and parse().
#include "options.hpp"

#include "webhook.hpp"

#include "platform/arguments.hpp"

#include <forewarn/clouds.hpp>
#include <forewarn/config.hpp>
#include <forewarn/platform/files.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace watch {

std::string type_list(std::string_view v, std::set<forewarn::event_type>& out, const char* what) {
    out.clear();
    while (true) {
        const auto comma = v.find(',');
        const std::string_view name = v.substr(0, comma);
        const auto t = forewarn::event_type_from_string(name);
        if (name.empty() || (t == forewarn::event_type::unknown && name != "unknown"))
            return std::string(what) + " takes event types separated by commas: freeze, reboot, redeploy, preempt, terminate, "
                                       "live_migrate, host_terminate, preempted, maintenance, retirement, stop, hibernate, "
                                       "rebalance, unknown";
        out.insert(t);
        if (comma == std::string_view::npos) return {};
        v.remove_prefix(comma + 1);
    }
}

bool parse_count(std::string_view text, long long& out) {
    if (text.empty() || text.size() > 18) return false;
    long long v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    out = v;
    return true;
}

std::string env_name(const char* flag_name) {
    std::string out = "FOREWARN_";
    for (const char* p = flag_name; *p; ++p) out += *p == '-' ? '_' : static_cast<char>(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    return out;
}

std::string seconds_flag(std::string_view v, std::chrono::seconds& out, const char* what, bool positive) {
    long long n = 0;
    if (!parse_count(v, n) || (positive && n == 0)) return std::string(what) + " needs a " + (positive ? "positive " : "") + "number of seconds";
    out = std::chrono::seconds(n);
    return {};
}

const char* cloud_values() {
    static const std::string values = [] {
        std::string v;
        for (const auto& c : forewarn::clouds) v += std::string(c.name) + "|";
        return v + "auto";
    }();
    return values.c_str();
}

flag_apply text_into(std::string settings::*field, const char* if_empty) {
    return [field, if_empty](settings& s, std::string_view v) -> std::string {
        if (if_empty && v.empty()) return if_empty;
        s.*field = std::string(v);
        return {};
    };
}
flag_apply seconds_into(std::chrono::seconds settings::*field, const char* what, bool positive) {
    return [=](settings& s, std::string_view v) { return seconds_flag(v, s.*field, what, positive); };
}
flag_apply seconds_into(std::optional<std::chrono::seconds> settings::*field, const char* what, bool positive) {
    return [=](settings& s, std::string_view v) {
        std::chrono::seconds n{};
        auto e = seconds_flag(v, n, what, positive);
        if (e.empty()) s.*field = n;
        return e;
    };
}
flag_apply switch_on(bool settings::*field) {
    return [field](settings& s, std::string_view) -> std::string {
        s.*field = true;
        return {};
    };
}

flag_apply url_into(std::string settings::*field, const char* what) {
    return [field, what](settings& s, std::string_view v) -> std::string {
        if (v.rfind("https://", 0) != 0 && v.rfind("http://", 0) != 0) return std::string(what) + " needs an http(s):// URL";
        s.*field = std::string(v);
        return {};
    };
}

namespace {

/// A count above 0 (parse_count) handed to `set`; else `error`.
flag_apply positive_count(const char* error, void (*set)(settings&, long long)) {
    return [error, set](settings& s, std::string_view v) -> std::string {
        long long n = 0;
        if (!parse_count(v, n) || n == 0) return error;
        set(s, n);
        return {};
    };
}

}  // namespace

std::string clouds_in_words(std::string_view forewarn::cloud_facts::*field, const char* last) {
    std::string out;
    for (std::size_t i = 0; i < forewarn::clouds.size(); ++i) {
        if (i > 0) out += i + 1 == forewarn::clouds.size() && last ? std::string(" ") + last + " " : std::string(", ");
        out += std::string(forewarn::clouds[i].*field);
    }
    return out;
}

const std::vector<flag>& flags() {
    static const std::vector<flag> table = [] {
        std::vector<flag> t = {
            {"cloud", cloud_values(), "which metadata service (default auto: probe them all)",
             [](settings& s, std::string_view v) -> std::string {
                 if (v != "auto" && !forewarn::find_cloud(v))
                     return "--cloud must be " + clouds_in_words(&forewarn::cloud_facts::name, nullptr) + " or auto";
                 s.cloud = std::string(v);
                 return {};
             }},
            {"endpoint", "URL", "the service root, e.g. http://127.0.0.1:8080 (default: the real address)", text_into(&settings::endpoint)},
            {"json", "", "one JSON object per change on stdout, nothing else", switch_on(&settings::json)},
            {"self", "NAME", "this VM's name as listed in Resources (default: ask the metadata)", text_into(&settings::self)},
            {"approve", "never|own|leader|all", "never (default); own: events naming this VM; leader: where this VM is the elected leader (followers approve user events after a grace); all: every event seen",
             [](settings& s, std::string_view v) -> std::string {
                 if (v == "never") s.approve = forewarn::approval_scope::never;
                 else if (v == "own") s.approve = forewarn::approval_scope::own;
                 else if (v == "leader") s.approve = forewarn::approval_scope::leader;
                 else if (v == "all") s.approve = forewarn::approval_scope::all;
                 else return "--approve must be never, own, leader or all";
                 return {};
             }},
            {"dry-run", "", "decide approvals as configured but send none; say what would have been approved", switch_on(&settings::dry_run)},
            {"approve-freeze-under", "SECONDS", "approve at once, without waiting for a hook, a Freeze whose announced duration is known and shorter than this (the platform's own sample uses 9); with --approve, which still says whose events", seconds_into(&settings::approve_freeze_under, "--approve-freeze-under", true)},
            {"approve-user-events", "", "approve at once, without waiting for a hook, events an administrator started (EventSource User); with --approve, which still says whose events", switch_on(&settings::approve_user_events)},
            {"approve-window", "HH:MM-HH:MM[/DAYS][ UTC+HH:MM]", "approve early only inside this daily window (UTC unless an offset is given; DAYS: mon,tue,... or mon-fri); outside it events proceed at NotBefore as the platform decides",
             [](settings& s, std::string_view v) -> std::string {
                 auto w = forewarn::approval_window::parse(v);
                 if (!w) return "--approve-window: " + w.error().message;
                 s.approve_window = *w;
                 return {};
             }},
            {"only", "TYPES", "handle only events of these types (comma-separated: freeze, reboot, live_migrate, ...); others are not printed, hooked or approved",
             [](settings& s, std::string_view v) -> std::string { return type_list(v, s.only, "--only"); }},
            {"ignore", "TYPES", "leave events of these types alone (comma-separated, as --only)",
             [](settings& s, std::string_view v) -> std::string { return type_list(v, s.ignore, "--ignore"); }},
            {"unready-before", "SECONDS", "/readyz and --ready-file say not ready from this long before an event's NotBefore rather than from its announcement (default 0: from the announcement)", seconds_into(&settings::unready_before, "--unready-before", false)},
            {"lb-drain", "SECONDS", "approve an event only once /readyz and --ready-file have said not ready for this long (the time the load balancer needs to take this VM out), and the prepare hook, if any, has succeeded: both run at once (default 0: approve when the hook is done)", seconds_into(&settings::lb_drain, "--lb-drain", false)},
            {"ready-file", "PATH", "a file present while this VM should take traffic, removed from an event's announcement (or --unready-before) until it is over", text_into(&settings::ready_file, "--ready-file needs a path")},
            {"webhook", "URL", "POST each change there as JSON (its line, or --webhook-template), from a thread of its own, retried on errors; an Authorization header only from FOREWARN_WEBHOOK_AUTHORIZATION",
             [](settings& s, std::string_view v) -> std::string {
                 s.webhook = std::string(v);
                 return webhook::check_url(s.webhook);
             }},
            {"webhook-template", "FILE", "the webhook's body: JSON with {{id}}, {{type}}, {{change}}, {{not_before}}, {{resources}}, ... (the change's fields, escaped) or {{json}} (its whole line)",
             [](settings& s, std::string_view v) -> std::string {
                 s.webhook_template_file = std::string(v);
                 auto text = forewarn::platform::read_small_file(forewarn::platform::path_from_utf8(v), 64 * 1024);
                 if (!text) return "--webhook-template: " + text.error().describe();
                 return s.webhook_body.parse(*text);
             }},
            {"grace", "SECONDS", "the follower's grace for user events with --approve leader (default 30)", seconds_into(&settings::grace, "--grace", false)},
            {"interval", "MS", interval_help(),
             positive_count("--interval needs a positive number of milliseconds", [](settings& s, long long n) { s.interval = std::chrono::milliseconds(n); })},
            {"exit-after", "N", "exit 0 after N change lines",
             positive_count("--exit-after needs a positive number of lines", [](settings& s, long long n) { s.exit_after = n; })},
            {"state-file", "PATH", "remember what was handled (and which hooks ran) across restarts", text_into(&settings::state_file)},
            {"on-prepare", "CMD", "run CMD (with /bin/sh -c) when an event is announced; the event counts as ready for --approve only once it exits 0", text_into(&settings::on_prepare)},
            {"on-started", "CMD", "run CMD when an event starts", text_into(&settings::on_started)},
            {"on-recover", "CMD", "run CMD when an event is over", text_into(&settings::on_recover)},
            {"hook-deadline", "SECONDS", "a prepare hook still running this long before NotBefore is stopped and its event not approved (default 15)", seconds_into(&settings::hook_deadline, "--hook-deadline", false)},
            {"hook-timeout", "SECONDS", "no hook runs longer than this (default 600)", seconds_into(&settings::hook_timeout, "--hook-timeout", true)},
            {"metrics-listen", "HOST:PORT", "serve /metrics (Prometheus text), /healthz and /readyz there, e.g. 127.0.0.1:9464",
             [](settings& s, std::string_view v) -> std::string {
                 if (v.find(':') == std::string_view::npos) return "--metrics-listen needs HOST:PORT";
                 s.metrics_listen = std::string(v);
                 return {};
             }},
            {"health-max-age", "SECONDS", "/healthz fails when no poll has succeeded for this long (default 60)", seconds_into(&settings::health_max_age, "--health-max-age", true)},
            {"kubernetes", "", "act on this node through the Kubernetes API, from inside its pod (the service account): an Event, conditions and a label at the announcement; for disruptive events a taint, a cordon and a drain that evicts the node's pods (--no-drain keeps them); all undone when it is over (docs/kubernetes.md; Linux)", switch_on(&settings::kubernetes)},
            {"kubeconfig", "FILE", "as --kubernetes, reaching the API server through this kubeconfig's current context (from outside a pod)", text_into(&settings::kubeconfig, "--kubeconfig needs a file")},
            {"node-name", "NAME", "this node's name in Kubernetes (default: $NODE_NAME, set from the downward API's spec.nodeName)", text_into(&settings::node_name, "--node-name needs a name")},
            {"drain-lead", "SECONDS", "taint and cordon the node this long before an event's NotBefore, at once when less is left (default 900)", seconds_into(&settings::drain_lead, "--drain-lead", false)},
            {"drain-margin", "SECONDS", "the drain ends this long before the prepare hook's deadline (NotBefore less --hook-deadline): the time the --on-prepare hook and the approval get after it (default 10)", seconds_into(&settings::drain_margin, "--drain-margin", false)},
            {"kubernetes-rules", "FILE", "what each event type does to the node: a JSON object of types, each with taint, cordon, drain (true or false) and effect (docs/kubernetes.md, \"The rules\")", text_into(&settings::kubernetes_rules, "--kubernetes-rules needs a file")},
            {"drain-also", "TYPES", "these types take the node out of service and drain it too (comma-separated, e.g. freeze)",
             [](settings& s, std::string_view v) -> std::string { return type_list(v, s.drain_also, "--drain-also"); }},
            {"no-drain", "", "taint and cordon the node as the rules say, never evict its pods", switch_on(&settings::no_drain)},
            {"drain-timeout", "SECONDS", "how long a drain may take for an event with no set time (a reclaim, a scale-in; default 120)", seconds_into(&settings::drain_timeout, "--drain-timeout", true)},
        };
        // The flags of a cloud's own API (approvals through it), which the clients read (clients.cpp).
        for (auto& f : cloud_flags()) t.push_back(std::move(f));
        t.insert(t.end(), {
            {"etcd", "URL[,URL...]", "a fleet budget on this etcd cluster (its client URLs): approve early only while holding one of the group's slots (needs --fleet-group; docs/fleet.md)", text_into(&settings::etcd)},
            {"fleet-group", "NAME", "the group of VMs that share the budget, e.g. the database's replicas", text_into(&settings::fleet_group, "--fleet-group needs a name")},
            {"fleet-max", "N", "at most N members of the group in maintenance at once (default 1)",
             positive_count("--fleet-max needs a positive number", [](settings& s, long long n) { s.fleet_max = n; })},
            {"fleet-ttl", "SECONDS", "the member's etcd lease: a slot outlives a reboot shorter than this and is freed this long after a VM that never returns (default 900, at least 10)",
             [](settings& s, std::string_view v) -> std::string {
                 auto e = seconds_flag(v, s.fleet_ttl, "--fleet-ttl", true);
                 if (e.empty() && s.fleet_ttl < std::chrono::seconds(10)) return "--fleet-ttl must be at least 10 seconds";
                 return e;
             }},
            {"fleet-settle", "SECONDS", "keep the slot this long after the last event's recover (default 0)", seconds_into(&settings::fleet_settle, "--fleet-settle", false)},
            {"etcd-user", "NAME", "etcd user name; the password is read from FOREWARN_ETCD_PASSWORD, never from a flag", text_into(&settings::etcd_user)},
            {"etcd-ca", "PATH", "the CA bundle (PEM) that signs etcd's certificate, for https:// URLs", text_into(&settings::etcd_ca)},
            {"etcd-cert", "PATH", "a client certificate (PEM) for etcd", text_into(&settings::etcd_cert)},
            {"etcd-key", "PATH", "the client certificate's key (PEM)", text_into(&settings::etcd_key)},
        });
        return t;
    }();
    return table;
}

void usage(std::FILE* out) {
    std::fputs("usage: forewarn-watch [options]\n"
               "       forewarn-watch check [options] [--timeout SECONDS]\n",
               out);
    std::fprintf(out, "Watches the VM's maintenance notices (%s),\n",
                 clouds_in_words(&forewarn::cloud_facts::display_name, nullptr).c_str());
    std::fputs("prints one line per change, runs hooks and approves events as told. Every option can also be\n"
               "set by an environment variable, FOREWARN_ and its name in capitals with '_' for '-'\n"
               "(--on-prepare: FOREWARN_ON_PREPARE; a switch: FOREWARN_JSON=1); an option on the command\n"
               "line wins.\n\n"
               "check walks the chain from this VM to its notices once with the same options: the cloud, the\n"
               "endpoint, the connection, the handshake, this VM's name, one reading of every key and the\n"
               "service's clock, what approving through the cloud's own API needs (with --approve or the\n"
               "cloud's flags), then the state directory, hooks, --metrics-listen, --webhook,\n"
               "--etcd and, with --kubernetes or --kubeconfig, the API server, the node and the agent's access.\n"
               "One line per step (\u2714 fine, ! a warning, \u2718 a failure with its likely cause and fix); --json\n"
               "prints one JSON object instead. It approves nothing, writes no state and runs no hook, and\n"
               "ends within --timeout (default 15 s). Exit 0: no failure; 1: a step failed; 2: usage.\n\n",
               out);
    for (const auto& f : flags()) {
        std::string head = std::string("  --") + f.name + (*f.value ? std::string(" ") + f.value : std::string());
        std::fprintf(out, "%s\n", head.c_str());
        // the help, wrapped at 72 columns under an indent
        std::string_view text = f.help;
        while (!text.empty()) {
            std::size_t cut = text.size() <= 70 ? text.size() : text.rfind(' ', 70);
            if (cut == std::string_view::npos || cut == 0) cut = (std::min)(text.size(), std::size_t(70));
            std::fprintf(out, "        %.*s\n", static_cast<int>(cut), text.data());
            text.remove_prefix(cut);
            while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
        }
        std::fprintf(out, "        (environment: %s)\n", env_name(f.name).c_str());
    }
    std::fputs("  --help\n        this text\n  --version\n        the version, e.g. \"forewarn-watch " FOREWARN_VERSION_STRING "\"\n"
               "Each option with a value is written --name VALUE or --name=VALUE.\n",
               out);
}

std::optional<int> parse(const std::vector<std::string>& args, settings& s) {
    for (const auto& f : flags()) {
        const auto from_env = platform::environment(env_name(f.name));
        if (!from_env) continue;
        const char* v = from_env->c_str();
        std::string_view value = *from_env;
        if (!*f.value) {  // a switch: 1/true/yes on, 0/false/no/empty off
            if (value.empty() || value == "0" || value == "false" || value == "no") continue;
            if (value != "1" && value != "true" && value != "yes") {
                std::fprintf(stderr, "forewarn-watch: %s must be 1 or 0, not \"%s\"\n", env_name(f.name).c_str(), v);
                return 2;
            }
        }
        if (auto e = f.apply(s, value); !e.empty()) {
            std::fprintf(stderr, "forewarn-watch: %s (from %s): \"%s\"\n", e.c_str(), env_name(f.name).c_str(), v);
            return 2;
        }
    }
    const std::size_t argc = args.size();
    for (std::size_t i = 1; i < argc; ++i) {
        const std::string_view arg = args[i];
        if (arg == "--help" || arg == "-h") {
            usage(stdout);
            return 0;
        }
        if (arg == "--version") {
            std::fputs("forewarn-watch " FOREWARN_VERSION_STRING "\n", stdout);
            return 0;
        }
        // --name VALUE, or --name=VALUE (the GNU form; the value may be empty or hold '=').
        const flag* found = nullptr;
        std::string_view name = arg.size() > 2 && arg.substr(0, 2) == "--" ? arg.substr(2) : std::string_view();
        std::optional<std::string_view> inline_value;
        if (const auto eq = name.find('='); eq != std::string_view::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (!name.empty())
            for (const auto& f : flags())
                if (name == f.name) found = &f;
        if (!found) {
            std::fprintf(stderr, "forewarn-watch: unknown option \"%s\" (see --help)\n", args[i].c_str());
            return 2;
        }
        std::string_view value = "1";
        if (!*found->value && inline_value) {
            std::fprintf(stderr, "forewarn-watch: --%s takes no value, not \"%s\"\n", found->name, args[i].c_str());
            return 2;
        }
        if (*found->value) {
            if (inline_value) {
                value = *inline_value;
            } else if (i + 1 >= argc) {
                std::fprintf(stderr, "forewarn-watch: --%s needs a value (%s)\n", found->name, found->value);
                return 2;
            } else {
                value = args[++i];
            }
        }
        if (auto e = found->apply(s, value); !e.empty()) {
            std::fprintf(stderr, "forewarn-watch: %s, not \"%.*s\"\n", e.c_str(), static_cast<int>(value.size()), value.data());
            return 2;
        }
    }
    if (s.etcd.empty() != s.fleet_group.empty()) {
        std::fputs("forewarn-watch: --etcd and --fleet-group go together (see --help)\n", stderr);
        return 2;
    }
    if (s.etcd.empty() && (!s.etcd_user.empty() || !s.etcd_ca.empty() || !s.etcd_cert.empty() || !s.etcd_key.empty())) {
        std::fputs("forewarn-watch: --etcd-user, --etcd-ca, --etcd-cert and --etcd-key need --etcd\n", stderr);
        return 2;
    }
    if (!s.webhook_template_file.empty() && s.webhook.empty()) {
        std::fputs("forewarn-watch: --webhook-template needs --webhook\n", stderr);
        return 2;
    }
    if (s.etcd_cert.empty() != s.etcd_key.empty()) {
        std::fputs("forewarn-watch: --etcd-cert and --etcd-key go together\n", stderr);
        return 2;
    }
    if (s.kubernetes || !s.kubeconfig.empty()) {
        if (s.node_name.empty())
            if (auto n = platform::environment("NODE_NAME")) s.node_name = *n;
        if (s.node_name.empty()) {
            std::fputs("forewarn-watch: --kubernetes needs this node's name: give --node-name NAME, or set NODE_NAME from the "
                       "downward API (env: - name: NODE_NAME, valueFrom: fieldRef: fieldPath: spec.nodeName)\n",
                       stderr);
            return 2;
        }
    }
    return std::nullopt;
}

}  // namespace watch
