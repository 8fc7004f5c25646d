// SPDX-License-Identifier: MIT
// The agent's wiring, once for every cloud (agent.hpp): what forewarn-watch does with each change
// (a line, a webhook, the hooks, the ready file, the counters), the poller's options and the fleet
// budget, the metrics server and the life of the run.

#include "agent.hpp"

#include <forewarn/json.hpp>
#include <forewarn/poller.hpp>
#include <forewarn/readiness.hpp>
#include <forewarn/state_file.hpp>
#include <forewarn/time.hpp>

#include "fleet_budget.hpp"
#include "hooks.hpp"
#include "json.hpp"
#include "lines.hpp"
#include "metrics.hpp"
#include "node_side.hpp"
#include "prepare_policy.hpp"
#include "ready_file.hpp"
#include "webhook.hpp"
#include "platform/arguments.hpp"
#include "platform/stop_signal.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace watch {

namespace {

/// The error's kind for the metrics: its errc name.
std::string error_kind(const forewarn::error& e) { return std::string(forewarn::to_string(e.code)); }

std::string joined(const std::vector<std::string>& ids) {
    std::string text;
    for (const auto& id : ids) text += " " + id;
    return text;
}

}  // namespace

namespace {

/// The agent over one poller: everything run_agent() wires, with the handlers that reach it.
struct agent {
    agent(const settings& settings_, std::string where_, std::string cloud_)
        : s(settings_),
          where(std::move(where_)),
          cloud(std::move(cloud_)),
          approving(s.approve != forewarn::approval_scope::never),
          policy(s, approving),
          // Hooks: the journal lives beside the state file, so a restart knows what already ran.
          hooks(hook_journal(s.state_file.empty() ? std::string() : s.state_file + ".hooks"), log_line,
                [this](const hook_runner::report& r) { hook_ended(r); }) {}

    const settings& s;
    const std::string where;
    const std::string cloud;
    const bool approving;
    const prepare_policy policy;  // when a prepare hook's event is ready, and by when
    metrics counters;
    std::optional<webhook> hook_url;  // --webhook
    hook_runner hooks;
    std::optional<ready_file> ready;  // --ready-file
    std::optional<metrics_server> server;
    forewarn::poller_handlers handlers;
    forewarn::poller_options options;
    forewarn::poller<any_source>* poller = nullptr;  // while run() runs
    std::unique_ptr<node_side> node;  // --kubernetes, --kubeconfig

    // What the handlers write, under one lock: stdout's lines, counted against --exit-after.
    std::mutex out_mutex;
    long long lines = 0;
    bool done = false;

    // stdout: one line each, whole, and counted against --exit-after when it is a change.
    void print(const std::string& line, bool is_change) {
        std::lock_guard<std::mutex> lock(out_mutex);
        if (done) return;
        std::fwrite(line.data(), 1, line.size(), streams().lines);
        std::fputc('\n', streams().lines);
        std::fflush(streams().lines);
        if (!is_change) return;
        ++lines;
        if (s.exit_after && lines >= *s.exit_after) {
            done = true;
            if (poller) poller->stop();  // from the handler: nothing more is delivered
            stop_signal::notify_done();  // wakes run()
        }
    }

    // A change's JSON line, made once per change and shared by what takes it: the --json line, the
    // webhook, the hooks' standard input and the node's record.
    using change_line = std::shared_ptr<const std::string>;
    static change_line line_of(const forewarn::change& c) {
        return std::make_shared<const std::string>(forewarn::to_json(c, forewarn::invalid_utf8::replace).value_or(std::string()));
    }

    void emit(const forewarn::change& c, const std::string& json) {
        counters.change(forewarn::to_string(c.kind), forewarn::to_string(c.event.type));
        if (hook_url) hook_url->send(json);
        print(s.json ? json : one_line(text_line(c)), true);
        if (ready) ready->changed();  // --ready-file: looked at again after each change
    }

    void hook_ended(const hook_runner::report& r) {
        counters.hook_ran(r.hook, to_string(r.outcome.what), r.outcome.took);
        const std::string id = r.key.substr(r.key.find(':') + 1);
        if (r.outcome.what == hook_outcome::kind::succeeded)
            log_line("hook " + r.hook + " " + id + ": done in " + std::to_string(r.outcome.took.count()) + " ms");
        else
            log_line("hook " + r.hook + " " + id + ": " + std::string(to_string(r.outcome.what)) +
                     (r.outcome.detail.empty() ? std::string() : ": " + r.outcome.detail));
    }

    std::string command_of(const std::string& hook) const {
        if (hook == "prepare") return s.on_prepare;
        if (hook == "started") return s.on_started;
        if (hook == "recover") return s.on_recover;
        return {};
    }

    void run_hook(const std::string& hook, const forewarn::change& c, const std::string& json,
                  std::chrono::steady_clock::time_point deadline, hook_runner::done_fn done_fn) {
        hooks.run(hook + ":" + c.event.id, hook, command_of(hook), json + "\n", hook_environment(hook, c, cloud), deadline,
                  std::move(done_fn));
    }

    // An announced event's prepare hook and its readiness for approval: at the announcement, or
    // with --kubernetes once the node is ready for it (taint and cordon done, at their time).
    // `may_approve` is false when the node's drain reached its deadline with pods left, or
    // --lb-drain cannot fit (policy.hold_fits): the hook still runs, the event is not approved.
    void prepare(const forewarn::change& c, const std::string& json, forewarn::approval_handle handle, bool may_approve = true) {
        if (s.on_prepare.empty()) {
            // Nothing to drain: ready at once, and the policy decides.
            if (approving && may_approve) handle.ready();
            return;
        }
        const auto approve_by = policy.approve_by(c.event);
        if (!may_approve) {
            run_hook("prepare", c, json, policy.deadline(approve_by), nullptr);
            return;
        }
        if (approve_by && *approve_by <= std::chrono::steady_clock::now())
            log_line("hook prepare " + c.event.id +
                     ": announced too close to NotBefore to approve after a hook; it runs, the event is not approved");
        run_hook("prepare", c, json, policy.deadline(approve_by), policy.after(c.event.id, approve_by, std::move(handle), false));
    }

    // An event the node acts on (node_side::acts_on: one for this VM, or one that names no VM;
    // a document that also lists its neighbours' events must never drain this node for theirs).
    bool for_node(const forewarn::event& e) const { return node && node->acts_on(e); }

    void make_handlers() {
        handlers.on_prepare = [this](const forewarn::change& c, forewarn::approval_handle handle) {
            const change_line line = line_of(c);
            emit(c, *line);
            hooks.forget({"recover:" + c.event.id});  // an earlier occurrence of this id is over
            const bool fits = policy.hold_fits(c, handle);
            if (for_node(c.event)) {  // the node first (its drain too), then the hook and the approval (on the node's thread)
                node->announced(c, *line, [this, c, line, fits, handle = std::move(handle)](bool drained) mutable {
                    prepare(c, *line, std::move(handle), drained && fits);
                });
                return;
            }
            prepare(c, *line, std::move(handle), fits);
        };
        handlers.on_started = [this](const forewarn::change& c) {
            const change_line line = line_of(c);
            emit(c, *line);
            if (for_node(c.event)) node->started(c.event);
            hooks.forget({"recover:" + c.event.id});
            if (!s.on_started.empty()) run_hook("started", c, *line, std::chrono::steady_clock::now() + s.hook_timeout, nullptr);
        };
        handlers.on_recover = [this](const forewarn::change& c) {
            if (c.pause) counters.pause(forewarn::to_string(c.event.type), *c.pause, c.event.duration());
            const change_line line = line_of(c);
            emit(c, *line);
            if (for_node(c.event)) node->over(c.event, std::string(forewarn::to_string(c.reason)));
            if (!s.on_recover.empty()) run_hook("recover", c, *line, std::chrono::steady_clock::now() + s.hook_timeout, nullptr);
            hooks.forget({"prepare:" + c.event.id, "started:" + c.event.id});  // a later occurrence runs them again
        };
        handlers.on_updated = [this](const forewarn::change& c) { emit(c, *line_of(c)); };
        handlers.on_error = [this](const forewarn::error& e) {
            counters.poll_failed(error_kind(e));
            log_line(e.describe());
        };
        handlers.on_approved = [](const std::vector<std::string>& ids) { log_line("approved" + joined(ids)); };
        handlers.on_would_approve = [this](const std::vector<std::string>& ids) {
            counters.would_approve(ids.size());
            log_line("dry run: would approve" + joined(ids) + " (nothing sent)");
            if (s.json) {
                json_object line;
                line.boolean("dry_run", true).string("cloud", cloud);
                if (s.approve_window) line.string("approve_window", s.approve_window->to_string());
                print(line.strings("would_approve", ids).str(), false);
            }
        };
    }

    void make_options() {
        if (!s.state_file.empty()) options.state = std::make_shared<forewarn::state_file>(s.state_file);
        options.approval.scope = s.approve;
        options.approval.dry_run = s.dry_run;
        if (s.grace) options.approval.follower_grace = *s.grace;
        options.approval.approve_freeze_shorter_than = s.approve_freeze_under;
        options.approval.approve_user_events = s.approve_user_events;
        options.approval.window = s.approve_window;
        options.approval.unready_for = s.lb_drain;  // --lb-drain counts the readiness /readyz answers
        options.approval.readiness = readiness_settings();
        if (!s.only.empty() || !s.ignore.empty())
            options.filter = [&s = s](const forewarn::event& e) {
                return (s.only.empty() || s.only.count(e.type)) && !s.ignore.count(e.type);
            };
    }

    // Readiness for a load balancer (/readyz, --ready-file, forewarn_ready): from the latest
    // document, this VM's events.
    forewarn::readiness_options readiness_settings() const {
        forewarn::readiness_options o;
        o.unready_before = s.unready_before;
        return o;
    }
    forewarn::readiness readiness_now() const {
        return forewarn::ready_for_traffic(poller->latest_document(), s.self.empty() ? poller->self() : s.self,
                                           std::chrono::system_clock::now(), readiness_settings());
    }

    std::pair<int, std::string> serve(std::string_view path) const {
        const auto health = poller->health();
        if (path == "/metrics") {
            return {200, counters.exposition(cloud, health, poller->last_document(), readiness_now().ready,
                                             node ? std::optional<drain_stats>(node->drains()) : std::nullopt)};
        }
        if (path == "/readyz") {
            const auto r = readiness_now();
            return {r.ready ? 200 : 503, (r.ready ? "ready: " : "not ready: ") + one_line(r.why) + "\n"};
        }
        if (path == "/healthz") {
            if (counters.healthy(health, s.health_max_age)) {
                // Still healthy (the other keys are heard), but a failing key is named.
                std::string body = "ok\n";
                for (const auto& e : health.key_errors) body += "failing key " + e.url + ": " + one_line(e.describe()) + "\n";
                // The API server's failure is named, never fatal: /healthz is the pod's liveness.
                if (node)
                    if (const std::string f = node->failing(); !f.empty()) body += "failing kubernetes " + one_line(f) + "\n";
                return {200, body};
            }
            return {503, "no successful poll for more than " + std::to_string(s.health_max_age.count()) + " s" +
                             (health.last_error ? ": " + health.last_error->describe() : std::string()) + "\n"};
        }
        return {404, "not found: /metrics, /healthz or /readyz\n"};
    }

    // The journal of the last run. Its events were announced before this start and the poller
    // does not announce them again, so a prepare's approval goes through approval(id): a hook
    // that was running when forewarn-watch stopped runs again and, on success, makes its event
    // ready; one that had succeeded makes it ready now (the crash may have come before that was
    // saved). Repeating ready() for an event already approved or over changes nothing.
    void resume_hooks() {
        hooks.resume({"prepare"}, [this](const std::string& key, const hook_journal::entry& e) {
            hook_runner::resumed r;
            r.command = command_of(e.hook);
            r.deadline = std::chrono::steady_clock::now() + s.hook_timeout;
            if (e.hook != "prepare" || r.command.empty()) return r;
            const std::string id = key.substr(key.find(':') + 1);
            auto c = forewarn::change_from_json(e.input);
            const auto approve_by = c ? policy.approve_by(c->event) : std::nullopt;
            if (c) r.deadline = policy.deadline(approve_by);
            else if (e.state == "done") r.command.clear();  // nothing to approve by: leave it
            r.done = policy.after(id, approve_by, poller->approval(id), e.state == "done");
            return r;
        });
    }

    // The events an earlier run recorded on the node (killed mid-drain, or stopped): their work
    // again, the drain resumed, the prepare hook and the approval after it through approval(id),
    // as resume_hooks() does for a hook. An event the service no longer lists is put back.
    void resume_node() {
        if (!node) return;
        auto recorded = node->recorded();
        if (!recorded) {  // the node's writes will say more; the poller's own announcements still come
            log_line("kubernetes: the node's record of earlier events could not be read: " + one_line(recorded.error().describe()));
            return;
        }
        for (auto& c : *recorded) {
            if (!for_node(c.event)) continue;
            log_line("kubernetes: resuming " + c.event.id + " (recorded on the node by an earlier run)");
            const std::string id = c.event.id;
            const change_line line = line_of(c);
            node->resumed(c, *line, [this, c, line, id](bool drained) mutable { prepare(c, *line, poller->approval(id), drained); });
        }
    }

    // What reaches the poller, stopped (the poller itself is stopped by its owner).
    void stop_around() {
        if (server) server->stop();
        if (ready) ready->stop();  // the file stays as it was: a stop is not maintenance
    }
};

}  // namespace

int run_agent(std::unique_ptr<source> src, const settings& s) {
    agent a(s, src->endpoint(), std::string(forewarn::to_string(src->cloud())));
    if (auto e = a.hooks.journal().load(); !e.empty()) log_line(e);
    // --webhook: each change queued for a thread of its own, never waited for.
    if (!s.webhook.empty()) {
        webhook::options wo;
        wo.url = s.webhook;
        wo.body = s.webhook_body;
        if (auto auth = platform::environment("FOREWARN_WEBHOOK_AUTHORIZATION")) wo.authorization = *auth;
        a.hook_url.emplace(std::move(wo), log_line, [&a](std::string_view result, int retries) { a.counters.webhook(result, retries); });
    }
    if (!s.ready_file.empty()) a.ready.emplace(s.ready_file, log_line);
    a.make_handlers();
    a.make_options();
    if (!s.etcd.empty()) {  // the fleet budget as the poller's coordinator
        auto budget = make_fleet_budget(s, a.cloud, a.counters, [&a](const std::string& line) { a.print(line, false); });
        if (!budget) {
            log_line(budget.error().message);
            return 2;
        }
        a.options.coordinator = std::move(*budget);
    }
    {
        node_context context;
        context.cloud = a.cloud;
        // A resumed event is over when the service's document no longer lists it (once there is one).
        context.still_on = [&a](const std::string& id) -> std::optional<bool> {
            if (!a.poller || !a.poller->health().last_success) return std::nullopt;
            const auto doc = a.poller->latest_document();
            return std::any_of(doc.events.begin(), doc.events.end(), [&](const forewarn::event& e) { return e.id == id; });
        };
        context.self = [&a, &s] { return !s.self.empty() ? s.self : a.poller ? a.poller->self() : std::string(); };
        auto node = make_node_side(s, std::move(context));
        if (!node) {
            log_line(node.error().message);
            return 2;
        }
        a.node = std::move(*node);
    }

    forewarn::poller<any_source> p(any_source(std::move(src)), a.handlers, a.options);
    a.poller = &p;
    a.resume_hooks();
    a.resume_node();

    if (!s.metrics_listen.empty()) {
        a.server.emplace([&a](std::string_view path) { return a.serve(path); });
        if (auto e = a.server->start(s.metrics_listen); !e.empty()) {
            log_line(e);
            return 2;
        }
        log_line("metrics on http://" + s.metrics_listen.substr(0, s.metrics_listen.rfind(':')) + ":" +
                 std::to_string(a.server->port()) + "/metrics and /healthz");
    }

    const std::string window = s.approve_window ? ", window " + s.approve_window->to_string() : std::string();
    std::fprintf(streams().log, "forewarn-watch: watching %s at %s (approve: %s%s%s%s%s)\n", a.cloud.c_str(), a.where.c_str(),
                 std::string(forewarn::to_string(s.approve)).c_str(), s.self.empty() ? "" : " as ", s.self.c_str(),
                 window.c_str(), s.dry_run ? ", dry run: nothing is sent" : "");
    if (auto started = p.start(); !started) {
        log_line(started.error().describe());
        a.stop_around();
        return 1;
    }
    if (a.ready) a.ready->start([&a] { return a.readiness_now(); }, [&p] { return p.health().polls > 0; });
    // The main thread sleeps until a stop (SIGINT, SIGTERM; on Windows Ctrl+C, Ctrl+Break, the
    // console closing, a shutdown) or the last --exit-after line: no polling.
    const bool by_signal = stop_signal::wait();
    p.stop();
    if (a.node) a.node->stop();  // what is queued is done by the next start, which reads the node again
    a.stop_around();
    if (a.hook_url) a.hook_url->stop();  // what is still queued is not sent
    a.hooks.stop();  // running hooks are stopped; the journal keeps them pending for the next start
    if (by_signal) std::fputs("forewarn-watch: stopped by a signal\n", streams().log);
    stop_signal::finished();
    return 0;
}

}  // namespace watch
