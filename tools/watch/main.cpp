// SPDX-License-Identifier: MIT
// forewarn-watch, the agent: watches Azure Scheduled Events, GCE maintenance notices or AWS
// instance metadata notices (real or emulated), prints one line per change, runs the operator's
// hooks, approves events (Azure) as told, and serves metrics and health. Run with --help for the
// flags; docs/operators.md for the whole story.
//
//   forewarn-watch --json                                  # on an Azure, GCE or AWS VM
//   forewarn-watch --endpoint http://127.0.0.1:8080 --cloud azure --self WestNO_0 --approve leader
//   forewarn-watch --approve own --on-prepare /etc/forewarn/drain.sh --state-file /var/lib/forewarn/state.json
//
// With --json, stdout carries nothing but one JSON object per line (a change, or with --dry-run
// what would have been approved), flushed at once, so it can be piped into jq or a log shipper;
// everything else (errors, approvals, hook output) goes to stderr.

#include <forewarn/aws/instance_metadata_client.hpp>
#include <forewarn/azure/scheduled_events_client.hpp>
#include <forewarn/transport/default.hpp>
#include <forewarn/json.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/etcd/maintenance_budget.hpp>
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/readiness.hpp>
#include <forewarn/state_file.hpp>
#include <forewarn/time.hpp>

#include "check.hpp"
#include "clients.hpp"
#include "hooks.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "ready_file.hpp"
#include "platform/arguments.hpp"
#include "platform/etcd_transport.hpp"
#include "platform/service.hpp"
#include "platform/stop_signal.hpp"

#include <chrono>
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

using watch::settings;

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
        if (c.pause) {
            char seen[96];
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(c.pause->longest).count();  // as the JSON
            std::snprintf(seen, sizeof seen, ", paused %lld.%03lld s by the %s clock", static_cast<long long>(ms / 1000),
                          static_cast<long long>(ms % 1000), std::string(c.pause->seen_by()).c_str());
            out += seen;
        }
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

/// Where the lines and the log go: stdout and stderr, or a Windows service's log file.
watch::service::streams out_streams{nullptr, nullptr};

/// One line on stderr, whole (hook output, approvals and errors come from several threads).
/// Text from the network (event ids, descriptions, a hook's output) as one line: control bytes
/// (a newline that would forge a second line, terminal escapes) written as \n, \r, \t or \xNN.
std::string one_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += ch;
        }
    }
    return out;
}

void log_line(std::string_view text) {
    std::string line = "forewarn-watch: ";
    line += one_line(text);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), out_streams.log);
}

/// The error's kind for the metrics: its errc name.
std::string error_kind(const forewarn::error& e) { return std::string(forewarn::to_string(e.code)); }

template <class Client>
int run_agent(Client client, const settings& s, const std::string& where, std::string_view cloud_name) {
    output out;
    forewarn::poller<Client>* poller = nullptr;
    watch::metrics counters;
    const std::string cloud(cloud_name);

    // stdout: one line each, whole, and counted against --exit-after when it is a change.
    auto print = [&](const std::string& line, bool is_change) {
        std::lock_guard<std::mutex> lock(out.mutex);
        if (out.done) return;
        std::fwrite(line.data(), 1, line.size(), out_streams.lines);
        std::fputc('\n', out_streams.lines);
        std::fflush(out_streams.lines);
        if (!is_change) return;
        ++out.lines;
        if (s.exit_after && out.lines >= *s.exit_after) {
            out.done = true;
            poller->stop();               // from the handler: nothing more is delivered
            watch::stop_signal::notify_done();  // wakes main()
        }
    };
    // --webhook: each change queued for a thread of its own, never waited for.
    std::optional<watch::webhook> hook_url;
    if (!s.webhook.empty()) {
        watch::webhook::options wo;
        wo.url = s.webhook;
        wo.body = s.webhook_body;
        if (auto a = watch::platform::environment("FOREWARN_WEBHOOK_AUTHORIZATION")) wo.authorization = *a;
        hook_url.emplace(std::move(wo), log_line, [&](std::string_view result, int retries) { counters.webhook(result, retries); });
    }
    auto emit = [&](const forewarn::change& c) {
        counters.change(forewarn::to_string(c.kind), forewarn::to_string(c.event.type));
        // The JSON line, written once for stdout and the webhook alike.
        const std::string json = s.json || hook_url ? forewarn::to_json(c, forewarn::invalid_utf8::replace).value_or(std::string())
                                                    : std::string();
        if (hook_url) hook_url->send(json);
        print(s.json ? json : one_line(text_line(c)), true);
    };

    // Hooks: the journal lives beside the state file, so a restart knows what already ran.
    watch::hook_runner hooks(watch::hook_journal(s.state_file.empty() ? std::string() : s.state_file + ".hooks"), log_line,
                             [&](const watch::hook_runner::report& r) {
                                 counters.hook_ran(r.hook, watch::to_string(r.outcome.what), r.outcome.took);
                                 const std::string id = r.key.substr(r.key.find(':') + 1);
                                 if (r.outcome.what == watch::hook_outcome::kind::succeeded)
                                     log_line("hook " + r.hook + " " + id + ": done in " + std::to_string(r.outcome.took.count()) + " ms");
                                 else
                                     log_line("hook " + r.hook + " " + id + ": " + std::string(watch::to_string(r.outcome.what)) +
                                              (r.outcome.detail.empty() ? std::string() : ": " + r.outcome.detail));
                             });
    if (auto e = hooks.journal().load(); !e.empty()) log_line(e);
    auto command_of = [&](const std::string& hook) -> std::string {
        if (hook == "prepare") return s.on_prepare;
        if (hook == "started") return s.on_started;
        if (hook == "recover") return s.on_recover;
        return {};
    };
    auto run_hook = [&](const std::string& hook, const forewarn::change& c, std::chrono::steady_clock::time_point deadline,
                        watch::hook_runner::done_fn done) {
        const std::string input = forewarn::to_json(c, forewarn::invalid_utf8::replace).value_or(std::string());
        hooks.run(hook + ":" + c.event.id, hook, command_of(hook), input + "\n", watch::hook_environment(hook, c, cloud_name),
                  deadline, std::move(done));
    };
    const bool approving = s.approve != forewarn::approval_scope::never;
    // A prepare hook makes its event ready only when it succeeds before NotBefore less
    // --hook-deadline (approve_by); it is stopped at that point or at --hook-timeout.
    auto approve_by_of = [&](const forewarn::event& e) -> std::optional<std::chrono::steady_clock::time_point> {
        if (!e.not_before) return std::nullopt;
        const auto left = *e.not_before - std::chrono::system_clock::now() - s.hook_deadline;
        return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
    };
    auto prepare_deadline = [&](const std::optional<std::chrono::steady_clock::time_point>& approve_by) {
        const auto now = std::chrono::steady_clock::now();
        return approve_by && *approve_by > now ? (std::min)(now + s.hook_timeout, *approve_by) : now + s.hook_timeout;
    };
    // What a prepare hook's end means for its event: ready (approved as the policy allows) or not.
    auto after_prepare = [&](const std::string& id, std::optional<std::chrono::steady_clock::time_point> approve_by,
                             forewarn::approval_handle ready, bool quiet) -> watch::hook_runner::done_fn {
        return [id, approve_by, ready = std::move(ready), quiet, approving](const watch::hook_outcome& o) {
            if (o.what != watch::hook_outcome::kind::succeeded) {
                if (!quiet) log_line("hook prepare " + id + ": the event is not approved");
                return;
            }
            if (approve_by && std::chrono::steady_clock::now() >= *approve_by) {
                if (!quiet) log_line("hook prepare " + id + ": done after its deadline; the event is not approved");
                return;
            }
            if (approving) ready.ready();
        };
    };

    // --ready-file: looked at again after each change (and when the clock turns its answer).
    std::optional<watch::ready_file> ready_file;
    if (!s.ready_file.empty()) ready_file.emplace(s.ready_file, log_line);
    auto changed = [&] {
        if (ready_file) ready_file->changed();
    };

    forewarn::poller_handlers h;
    h.on_prepare = [&](const forewarn::change& c, forewarn::approval_handle ready) {
        emit(c);
        changed();
        hooks.forget({"recover:" + c.event.id});  // an earlier occurrence of this id is over
        if (s.on_prepare.empty()) {
            // Nothing to drain: ready at once, and the policy decides.
            if (approving) ready.ready();
            return;
        }
        const auto approve_by = approve_by_of(c.event);
        if (approve_by && *approve_by <= std::chrono::steady_clock::now())
            log_line("hook prepare " + c.event.id + ": announced too close to NotBefore to approve after a hook; it runs, the event is not approved");
        run_hook("prepare", c, prepare_deadline(approve_by), after_prepare(c.event.id, approve_by, std::move(ready), false));
    };
    h.on_started = [&](const forewarn::change& c) {
        emit(c);
        changed();
        hooks.forget({"recover:" + c.event.id});
        if (!s.on_started.empty()) run_hook("started", c, std::chrono::steady_clock::now() + s.hook_timeout, nullptr);
    };
    h.on_recover = [&](const forewarn::change& c) {
        if (c.pause) counters.pause(forewarn::to_string(c.event.type), *c.pause, c.event.duration());
        emit(c);
        changed();
        if (!s.on_recover.empty()) run_hook("recover", c, std::chrono::steady_clock::now() + s.hook_timeout, nullptr);
        hooks.forget({"prepare:" + c.event.id, "started:" + c.event.id});  // a later occurrence runs them again
    };
    h.on_updated = [&](const forewarn::change& c) {
        emit(c);
        changed();
    };
    h.on_error = [&](const forewarn::error& e) {
        counters.poll_failed(error_kind(e));
        log_line(e.describe());
    };
    h.on_approved = [](const std::vector<std::string>& ids) {
        std::string text;
        for (const auto& id : ids) text += " " + id;
        log_line("approved" + text);
    };
    h.on_would_approve = [&](const std::vector<std::string>& ids) {
        counters.would_approve(ids.size());
        std::string text;
        for (const auto& id : ids) text += " " + id;
        log_line("dry run: would approve" + text + " (nothing sent)");
        if (s.json) {
            watch::json_object line;
            line.boolean("dry_run", true).string("cloud", cloud_name);
            if (s.approve_window) line.string("approve_window", s.approve_window->to_string());
            print(line.strings("would_approve", ids).str(), false);
        }
    };

    forewarn::poller_options o;
    if (!s.state_file.empty()) o.state = std::make_shared<forewarn::state_file>(s.state_file);
    o.approval.scope = s.approve;
    o.approval.dry_run = s.dry_run;
    if (s.grace) o.approval.follower_grace = *s.grace;
    o.approval.approve_freeze_shorter_than = s.approve_freeze_under;
    o.approval.approve_user_events = s.approve_user_events;
    o.approval.window = s.approve_window;
    if (!s.only.empty() || !s.ignore.empty())
        o.filter = [&s](const forewarn::event& e) {
            return (s.only.empty() || s.only.count(e.type)) && !s.ignore.count(e.type);
        };

    if (!s.etcd.empty()) {
        forewarn::etcd::budget_options b;
        b.etcd = watch::etcd_client_options(s);
        b.group = s.fleet_group;
        b.max_in_maintenance = static_cast<std::size_t>(s.fleet_max);
        b.lease_ttl = s.fleet_ttl;
        b.settle_time = s.fleet_settle;
        counters.fleet_slot(s.fleet_group, "none");
        b.on_slot_change = [&](const forewarn::slot_change& c) {
            counters.fleet_slot(c.group, forewarn::to_string(c.to));
            log_line("fleet " + c.group + ": slot " + std::string(forewarn::to_string(c.from)) + " -> " +
                     std::string(forewarn::to_string(c.to)) + (c.event_id.empty() ? std::string() : " for " + c.event_id));
            if (!s.json) return;
            print(watch::json_object()
                      .string("cloud", cloud_name)
                      .string("fleet_group", c.group)
                      .string("member", c.member)
                      .string("slot", forewarn::to_string(c.to))
                      .string("was", forewarn::to_string(c.from))
                      .string("event_id", c.event_id)
                      .str(),
                  false);
        };
        auto transport = watch::etcd_transport(s.etcd_ca, s.etcd_cert, s.etcd_key);
        if (!transport) {
            log_line(transport.error().describe());
            return 2;
        }
        auto budget = std::make_shared<forewarn::etcd::maintenance_budget>(b, std::move(*transport));
        if (auto v = budget->validate(); !v) {
            log_line(v.error().describe());
            return 2;
        }
        o.coordinator = budget;
        if (s.approve == forewarn::approval_scope::never)
            log_line("fleet " + s.fleet_group + ": --approve never: the budget only counts events the platform starts");
    }

    forewarn::poller<Client> p(std::move(client), h, o);
    poller = &p;

    // The journal of the last run. Its events were announced before this start and the poller
    // does not announce them again, so a prepare's approval goes through p.approval(id): a hook
    // that was running when forewarn-watch stopped runs again and, on success, makes its event
    // ready; one that had succeeded makes it ready now (the crash may have come before that was
    // saved). Repeating ready() for an event already approved or over changes nothing.
    hooks.resume({"prepare"}, [&](const std::string& key, const watch::hook_journal::entry& e) {
        watch::hook_runner::resumed r;
        r.command = command_of(e.hook);
        r.deadline = std::chrono::steady_clock::now() + s.hook_timeout;
        if (e.hook != "prepare" || r.command.empty()) return r;
        const std::string id = key.substr(key.find(':') + 1);
        auto c = forewarn::change_from_json(e.input);
        const auto approve_by = c ? approve_by_of(c->event) : std::nullopt;
        if (c) r.deadline = prepare_deadline(approve_by);
        else if (e.state == "done") r.command.clear();  // nothing to approve by: leave it
        r.done = after_prepare(id, approve_by, p.approval(id), e.state == "done");
        return r;
    });

    // Readiness for a load balancer (/readyz, --ready-file, forewarn_ready): from the latest
    // document, this VM's events.
    forewarn::readiness_options readiness_options;
    readiness_options.unready_before = s.unready_before;
    auto readiness_now = [&] {
        return forewarn::ready_for_traffic(p.latest_document(), s.self.empty() ? p.self() : s.self,
                                           std::chrono::system_clock::now(), readiness_options);
    };

    std::optional<watch::metrics_server> server;
    if (!s.metrics_listen.empty()) {
        server.emplace([&](std::string_view path) -> std::pair<int, std::string> {
            const auto health = p.health();
            if (path == "/metrics") return {200, counters.exposition(cloud, health, p.last_document(), readiness_now().ready)};
            if (path == "/readyz") {
                const auto r = readiness_now();
                return {r.ready ? 200 : 503, (r.ready ? "ready: " : "not ready: ") + one_line(r.why) + "\n"};
            }
            if (path == "/healthz") {
                if (counters.healthy(health, s.health_max_age)) {
                    // Still healthy (the other keys are heard), but a failing key is named.
                    std::string body = "ok\n";
                    for (const auto& e : health.key_errors) body += "failing key " + e.url + ": " + one_line(e.describe()) + "\n";
                    return {200, body};
                }
                return {503, "no successful poll for more than " + std::to_string(s.health_max_age.count()) + " s" +
                                 (health.last_error ? ": " + health.last_error->describe() : std::string()) + "\n"};
            }
            return {404, "not found: /metrics, /healthz or /readyz\n"};
        });
        if (auto e = server->start(s.metrics_listen); !e.empty()) {
            log_line(e);
            return 2;
        }
        log_line("metrics on http://" + s.metrics_listen.substr(0, s.metrics_listen.rfind(':')) + ":" +
                 std::to_string(server->port()) + "/metrics and /healthz");
    }

    const std::string window = s.approve_window ? ", window " + s.approve_window->to_string() : std::string();
    std::fprintf(out_streams.log, "forewarn-watch: watching %s at %s (approve: %s%s%s%s%s)\n", cloud.c_str(), where.c_str(),
                 std::string(forewarn::to_string(s.approve)).c_str(), s.self.empty() ? "" : " as ", s.self.c_str(),
                 window.c_str(), s.dry_run ? ", dry run: nothing is sent" : "");
    if (auto started = p.start(); !started) {
        log_line(started.error().describe());
        return 1;
    }
    if (ready_file) ready_file->start(readiness_now, [&] { return p.health().polls > 0; });
    // The main thread sleeps until a stop (SIGINT, SIGTERM; on Windows Ctrl+C, Ctrl+Break, the
    // console closing, a shutdown) or the last --exit-after line: no polling.
    const bool by_signal = watch::stop_signal::wait();
    p.stop();
    if (server) server->stop();
    if (ready_file) ready_file->stop();  // the file stays as it was: a stop is not maintenance
    if (hook_url) hook_url->stop();      // what is still queued is not sent
    hooks.stop();  // running hooks are stopped; the journal keeps them pending for the next start
    if (by_signal) std::fputs("forewarn-watch: stopped by a signal\n", out_streams.log);
    watch::stop_signal::finished();
    return 0;
}

/// 0 when the client's settings can work; else says why, before anything else is printed or
/// started, and gives the exit code: 2 for a usage error (a malformed --endpoint), else 1 (AWS's
/// metadata turned off by AWS_EC2_METADATA_DISABLED, say).
template <class Client>
int usable(const Client& client) {
    if (auto v = client.validate(); !v) {
        std::fprintf(out_streams.log, "forewarn-watch: %s\n", v.error().describe().c_str());
        return v.error().code == forewarn::errc::invalid_argument ? 2 : 1;
    }
    return 0;
}

/// `forewarn-watch check [options] [--timeout SECONDS]` (args without "check"): the report on
/// stdout, exit 0 (no failure), 1 (a step failed) or 2 (usage).
int check_main(std::vector<std::string> args) {
    namespace check = watch::check;
    check::check_flags cf;
    if (auto e = check::take_flags(args, cf); !e.empty()) {
        std::fprintf(out_streams.log, "forewarn-watch check: %s\n", e.c_str());
        return 2;
    }
    settings s;
    if (auto code = watch::parse(args, s)) return *code;
    const check::budget overall(cf.bound);
    // The surroundings' network steps (webhook, etcd) keep a quarter of the bound for themselves.
    const bool far_steps = !s.webhook.empty() || !s.etcd.empty();
    const check::budget cloud_part(far_steps ? cf.bound * 3 / 4 : cf.bound);
    check::report rep;
    if (auto cloud = check::which_cloud(rep, s, cloud_part)) {
        watch::with_client(*cloud, s, [&](auto client) {
            if (auto v = client.validate(); !v) {
                rep.add("endpoint", check::outcome::fail, v.error().describe(), "the settings can never work",
                        "correct --endpoint (or the cloud's endpoint variable)");
                if (v.error().code == forewarn::errc::invalid_argument) rep.usage();
                return;
            }
            check::cloud_steps(rep, client, s, cloud_part);
        });
    }
    check::state_directory(rep, s);
    check::hook(rep, "on-prepare", s.on_prepare);
    check::hook(rep, "on-started", s.on_started);
    check::hook(rep, "on-recover", s.on_recover);
    check::metrics_port(rep, s);
    check::webhook_reachable(rep, s, overall);
    check::etcd_budget(rep, s, overall);
    const std::string out = s.json ? rep.json(cf.bound) + "\n" : rep.text(cf.bound);
    std::fwrite(out.data(), 1, out.size(), out_streams.lines);
    std::fflush(out_streams.lines);
    return rep.exit_code();
}

/// The agent: its arguments (the program's name first) to its exit code.
int agent_main(const std::vector<std::string>& args, watch::service::streams out) {
    out_streams = out;
    if (args.size() > 1 && args[1] == "check") {
        std::vector<std::string> rest = args;
        rest.erase(rest.begin() + 1);
        return check_main(std::move(rest));
    }
    settings s;
    if (auto code = watch::parse(args, s)) return *code;
    // Before any thread starts (detect_cloud's probes, the poller): on POSIX every thread then
    // inherits the signal mask and the signals wait for main().
    watch::stop_signal::prepare();

    std::string cloud = s.cloud;
    if (cloud == "auto") {
        forewarn::detect_options d;
        d.azure_endpoint = s.endpoint;
        d.gce_endpoint = s.endpoint;
        d.aws_endpoint = s.endpoint;
        d.alibaba_endpoint = s.endpoint;
        d.tencent_endpoint = s.endpoint;
        auto found = forewarn::detect_cloud(d);
        if (!found) {
            // A malformed --endpoint is a usage error (exit 2), said before anything else; any other
            // failure to probe (a thread that could not start) is the agent's own (exit 1).
            const bool usage = found.error().code == forewarn::errc::invalid_argument;
            std::fprintf(out_streams.log, "forewarn-watch: %s%s\n", usage ? "--endpoint: " : "",
                         found.error().describe().c_str());
            return usage ? 2 : 1;
        }
        if (found->found == forewarn::cloud::none) {
            std::fputs("forewarn-watch: no Azure IMDS, GCE metadata server, AWS IMDS, Alibaba or Tencent metadata answers here",
                       out_streams.log);
            std::fprintf(out_streams.log, " (azure: %s; gce: %s; aws: %s; alibaba: %s; tencent: %s)",
                         found->azure_error.describe().c_str(), found->gce_error.describe().c_str(),
                         found->aws_error.describe().c_str(), found->alibaba_error.describe().c_str(),
                         found->tencent_error.describe().c_str());
            std::fputs("; use --cloud and --endpoint\n", out_streams.log);
            return 1;
        }
        cloud = std::string(forewarn::to_string(found->found));
    }

    return watch::with_client(cloud, s, [&](auto client) {
        if (auto v = usable(client); v != 0) return v;
        const std::string where = client.endpoint();
        return run_agent(std::move(client), s, where, forewarn::to_string(decltype(client)::source_cloud));
    });
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
