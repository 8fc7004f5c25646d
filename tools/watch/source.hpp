// SPDX-License-Identifier: MIT
// The client of the cloud watched, whatever the cloud: what the agent's poller and `check` ask of
// it, behind one interface (watch::source), so that the agent, its poller and check's steps are
// compiled once, not once per cloud. clients.cpp makes the one source of a cloud from the
// settings (make_source); any_source is the notice source the poller holds.
#pragma once

#include <forewarn/clock.hpp>
#include <forewarn/detect.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>

#include "check_row.hpp"
#include "options.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace watch {

/// This VM's name as the events name it (the identity every cloud's client gives).
struct source_identity {
    std::string name;
};

/// A cloud's client: the notice source's members (poller/notice_source.hpp) and what `check`
/// and the start line ask besides.
class source {
public:
    virtual ~source() = default;

    virtual forewarn::result<forewarn::document> next(forewarn::clock::time_point not_after) = 0;
    virtual void wake() noexcept = 0;
    virtual bool can_approve() const = 0;
    virtual forewarn::result<void> approve(const std::vector<std::string>& ids) = 0;
    virtual void abandon(const std::vector<std::string>& ids) = 0;  // a declined approval (heartbeats stop)
    virtual forewarn::result<source_identity> identity() = 0;
    virtual forewarn::result<void> validate() const = 0;
    virtual void cancel() noexcept = 0;
    virtual void reset() noexcept = 0;
    virtual const forewarn::clock& clock() const = 0;
    virtual const forewarn::logger& log() const = 0;

    virtual forewarn::cloud cloud() const = 0;
    /// The base URL in use, after the cloud's precedence rules.
    virtual std::string endpoint() const = 0;
    /// The api-version in use, for a service whose URLs carry one (check's handshake sends it); else empty.
    virtual std::string api_version() const = 0;
    virtual forewarn::result<forewarn::document> fetch() = 0;
    virtual std::vector<std::string> key_urls() const = 0;
    /**
     * `check`'s steps for approving through the cloud's own API (what that API needs: a lifecycle
     * hook and its group, the credentials, the token and its scopes; clients.cpp words them), each
     * asked of the cloud now; none for a cloud that has no such lever. And, when can_approve() is false, why and what to do (the approvals step).
     */
    virtual std::vector<check_row> lever_steps(const settings&) { return {}; }
    virtual check_row cannot_approve() const;
};

/// The cloud detected from the settings' endpoint (every cloud probed there, or at its own
/// address), within `timeout` (the library's default when none): the agent's start and `check`'s
/// "cloud" step both choose it so.
forewarn::result<forewarn::detection> detect_cloud(const settings& s, std::optional<std::chrono::milliseconds> timeout = {});
/// What each probe said, "NAME: answered" or "NAME: why not", joined with "; ".
std::string detection_evidence(const forewarn::detection& found);

/// The client of `cloud` (a name of clouds.hpp; any other is the last one make_source tries, as the
/// flag table allows no other) with the command line's endpoint, name and interval.
std::unique_ptr<source> make_source(const std::string& cloud, const settings& s);

/// A source as the poller holds it: a movable notice source over one watch::source.
class any_source {
public:
    explicit any_source(std::unique_ptr<source> s) : s_(std::move(s)) {}

    forewarn::result<forewarn::document> next(forewarn::clock::time_point not_after) { return s_->next(not_after); }
    void wake() noexcept { s_->wake(); }
    bool can_approve() const { return s_->can_approve(); }
    forewarn::result<void> approve(const std::vector<std::string>& ids) { return s_->approve(ids); }
    void abandon(const std::vector<std::string>& ids) { s_->abandon(ids); }
    forewarn::result<source_identity> identity() { return s_->identity(); }
    forewarn::result<void> validate() const { return s_->validate(); }
    void cancel() noexcept { s_->cancel(); }
    void reset() noexcept { s_->reset(); }
    const forewarn::clock& clock() const { return s_->clock(); }
    const forewarn::logger& log() const { return s_->log(); }

private:
    std::unique_ptr<source> s_;
};

}  // namespace watch
