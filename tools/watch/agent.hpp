// SPDX-License-Identifier: MIT
// The agent's wiring, written once for every cloud (agent.cpp): the lines and the log, the hooks
// and their journal, the handlers, the poller's options, the fleet budget, metrics and health,
// webhooks and the ready file. It reaches the poller through `poller_view`, so that the one piece
// written per cloud is `run_agent<Client>` below: the poller of that cloud, made and waited for.
#pragma once

#include <forewarn/poller.hpp>

#include "options.hpp"
#include "platform/service.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace watch {

/// Where the lines (stdout) and the log (stderr) go: a Windows service's log file instead. Set
/// once, by the program's main function, before anything is written.
void set_streams(service::streams out);
const service::streams& streams();

/// Text from the network (event ids, descriptions, a hook's output) as one line: control bytes (a
/// newline that would forge a second line, terminal escapes) written as \n, \r, \t or \xNN.
std::string one_line(std::string_view text);
/// One line on the log, whole (hooks, approvals and errors come from several threads).
void log_line(std::string_view text);

/// The poller as the agent reaches it, whatever its cloud (forewarn::poller<Client>'s members of
/// the same names).
class poller_view {
public:
    virtual forewarn::approval_handle approval(const std::string& event_id) = 0;
    virtual forewarn::document latest_document() const = 0;
    virtual forewarn::document last_document() const = 0;
    virtual std::string self() const = 0;
    virtual forewarn::poller_health health() const = 0;
    virtual forewarn::result<void> start() = 0;
    virtual void stop() noexcept = 0;

protected:
    ~poller_view() = default;
};

/// The agent over one poller: made from the settings, then prepare(), then the poller made with
/// handlers() and options(), then run() until a stop.
class agent {
public:
    /// `where`: the endpoint watched; `cloud`: its name ("azure", ...), as the lines say them.
    agent(const settings& s, std::string where, std::string cloud);
    agent(const agent&) = delete;
    agent& operator=(const agent&) = delete;
    ~agent();

    /// What can fail before the poller exists (the fleet budget's settings): 0, or the exit code.
    int prepare();
    const forewarn::poller_handlers& handlers() const;
    const forewarn::poller_options& options() const;
    /// The journal's hooks resumed, the metrics server, the start line, the poller started; then
    /// a sleep until a stop (a signal, or --exit-after's last line), and everything stopped.
    /// The exit code. Everything that reaches `p` is stopped before this returns.
    int run(poller_view& p);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// The agent over the poller of `Client`'s cloud: the one piece of the agent made per cloud.
template <class Client>
int run_agent(Client client, const settings& s) {
    agent a(s, client.endpoint(), std::string(forewarn::to_string(Client::source_cloud)));
    if (const int code = a.prepare()) return code;
    forewarn::poller<Client> p(std::move(client), a.handlers(), a.options());
    struct view final : poller_view {
        explicit view(forewarn::poller<Client>& poller) : p(poller) {}
        forewarn::approval_handle approval(const std::string& id) override { return p.approval(id); }
        forewarn::document latest_document() const override { return p.latest_document(); }
        forewarn::document last_document() const override { return p.last_document(); }
        std::string self() const override { return p.self(); }
        forewarn::poller_health health() const override { return p.health(); }
        forewarn::result<void> start() override { return p.start(); }
        void stop() noexcept override { p.stop(); }
        forewarn::poller<Client>& p;
    } v(p);
    return a.run(v);
}

}  // namespace watch
