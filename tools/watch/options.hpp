// SPDX-License-Identifier: MIT
// forewarn-watch's settings and the one table of its flags: the table parses the command line,
// reads the FOREWARN_* environment variables (a flag wins over its variable) and writes --help,
// so the three can never disagree.
#pragma once

#include <forewarn/cloud_facts.hpp>
#include <forewarn/event.hpp>
#include <forewarn/poller/approval.hpp>
#include <forewarn/poller/approval_window.hpp>

#include "defaults.hpp"
#include "webhook_template.hpp"

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace watch {

struct settings {
    std::string cloud = "auto";  // a cloud's name (clouds.hpp), or auto
    std::string endpoint;
    bool json = false;
    std::string self;
    forewarn::approval_scope approve = forewarn::approval_scope::never;
    std::optional<std::chrono::milliseconds> interval;  // default: the client's (--help says each one's)
    std::optional<long long> exit_after;
    std::string state_file;
    std::optional<std::chrono::seconds> grace;
    bool dry_run = false;
    std::string on_prepare, on_started, on_recover;          // hook commands, run with /bin/sh -c
    std::chrono::seconds hook_deadline = defaults::hook_deadline;  // a prepare hook must be done this long before NotBefore
    std::chrono::seconds hook_timeout = defaults::hook_timeout;    // no hook runs longer than this
    std::string metrics_listen;                              // HOST:PORT, empty: no metrics server
    std::chrono::seconds health_max_age{60};                 // /healthz fails after this long without a good poll
    // The fleet budget on etcd (docs/fleet.md); the password only from FOREWARN_ETCD_PASSWORD.
    std::string etcd;                                        // client URLs, comma-separated
    std::string fleet_group;
    long long fleet_max = 1;
    std::chrono::seconds fleet_ttl{900};
    std::chrono::seconds fleet_settle{0};
    std::string etcd_user, etcd_ca, etcd_cert, etcd_key;
    // The seed's approval rules, and which events the agent handles at all.
    std::optional<std::chrono::seconds> approve_freeze_under;  // approve such Freezes at once
    bool approve_user_events = false;                         // approve EventSource User at once
    std::optional<forewarn::approval_window> approve_window;  // early approvals only inside it
    std::set<forewarn::event_type> only, ignore;              // empty only: every type
    // Readiness for a load balancer: /readyz and --ready-file.
    std::chrono::seconds unready_before{0};
    std::string ready_file;
    std::chrono::seconds lb_drain{0};  // approve only after /readyz said not ready this long
    // Webhooks: the URL, and a template of one's own (read and checked at start).
    std::string webhook, webhook_template_file;
    webhook_template webhook_body;
    // The Node, through the Kubernetes API (docs/kubernetes.md): in a pod, or from a kubeconfig.
    bool kubernetes = false;
    std::string kubeconfig;
    std::string node_name;                    // default: $NODE_NAME (the downward API's)
    std::chrono::seconds drain_lead = defaults::drain_lead;        // taint and cordon this long before NotBefore
    std::chrono::seconds drain_margin = defaults::drain_margin;    // the drain ends this long before --hook-deadline
    std::chrono::seconds drain_timeout = defaults::drain_timeout;  // a drain's length for an event with no time
    std::string kubernetes_rules;              // a rules file (JSON), read at start
    std::set<forewarn::event_type> drain_also;  // these types drained too
    bool no_drain = false;                     // taint and cordon only
    // Approvals through a cloud's own API: what cloud_flags.cpp's flags set and clients.cpp reads,
    // each field named for its cloud; --help and docs/ say what each one does.
    std::string aws_lifecycle_hook;            // empty: the notice is heard, nothing completed
    std::string aws_autoscaling_group;         // empty: the group's name from the instance's tags
    std::string aws_api_endpoint;              // empty: the region's endpoint
    std::chrono::seconds aws_heartbeat{300};   // a lifecycle action heartbeat this often
    std::string gce_api_endpoint;              // empty: the public API root
};

/// A comma-separated list of neutral event type names (event.hpp's to_string) into `out`; the
/// error in words (naming `what`), or empty.
std::string type_list(std::string_view v, std::set<forewarn::event_type>& out, const char* what);

/// One flag: its name, its value's name (empty: a switch), its help, and what it sets. The
/// environment variable is FOREWARN_ and the name in upper case with '_' for '-'.
struct flag {
    const char* name;
    const char* value;
    const char* help;
    // Applies a value (a switch gets "1"); an error message, or empty on success.
    std::function<std::string(settings&, std::string_view)> apply;
};

/// What a flag's value does to the settings, for the table's rows: kept as text (`if_empty`: the
/// error for an empty value, when it is not allowed), a number of seconds (seconds_flag), a switch.
using flag_apply = std::function<std::string(settings&, std::string_view)>;
flag_apply text_into(std::string settings::*field, const char* if_empty = nullptr);
flag_apply seconds_into(std::chrono::seconds settings::*field, const char* what, bool positive);
flag_apply seconds_into(std::optional<std::chrono::seconds> settings::*field, const char* what, bool positive);
flag_apply switch_on(bool settings::*field);
/// An http:// or https:// URL into `field`; else the error naming `what`.
flag_apply url_into(std::string settings::*field, const char* what);

/// The flags of each cloud's own API (approvals through it), in --help's order (cloud_flags.cpp;
/// the clients read what they set, clients.cpp).
std::vector<flag> cloud_flags();
/// --interval's help: each client's default and floor (cloud_flags.cpp, by hand: a new cloud's
/// client adds its own).
const char* interval_help();
/// The clouds (clouds.hpp) in a sentence: each one's `field` (display_name, service_name), joined
/// by ", " and, before the last, by `last` ("or", "and"; nullptr: ", "). A new cloud joins each
/// sentence written with it.
std::string clouds_in_words(std::string_view forewarn::cloud_facts::*field, const char* last);

/// A count of decimal digits (at most 18) into `out`; false for anything else.
bool parse_count(std::string_view text, long long& out);
/// A flag's environment variable: FOREWARN_ and its name in capitals with '_' for '-'.
std::string env_name(const char* flag_name);
/// A number of seconds (`positive`: above 0) into `out`; the error naming `what`, or empty.
std::string seconds_flag(std::string_view v, std::chrono::seconds& out, const char* what, bool positive);
/// --cloud's values: the clouds' names (clouds.hpp), then "auto".
const char* cloud_values();
/// The table: every flag, in --help's order.
const std::vector<flag>& flags();
/// --help's text.
void usage(std::FILE* out);
/// The settings from the environment, then the command line (`args`, the program's name first,
/// UTF-8: platform/arguments.hpp); or an exit code (0 after --help or --version, 2 for a bad option
/// or value, said on stderr).
std::optional<int> parse(const std::vector<std::string>& args, settings& s);

}  // namespace watch
