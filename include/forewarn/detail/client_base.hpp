// SPDX-License-Identifier: MIT
#pragma once

// The one base of every cloud's client: its public surface (next, fetch, wake, cancel, reset,
// validate, clock, log, transport, options, endpoint, identity), its construction from the
// options, its keys' last good readings and errors, and how a document is made of them. A
// cloud's client is then its options, its key plan, one request per key with its status rules
// and parser, and how it reads its identity (docs/architecture.md, "A new cloud").

#include <forewarn/client_options.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/detail/http.hpp>
#include <forewarn/detail/metadata_exchange.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport/retry.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// A client's special members, declared in its class (FOREWARN_CLIENT_MOVABLE) and defaulted out of
// it (FOREWARN_CLIENT_MOVABLE_DEFAULTS, in its namespace after the class), so that compiled mode's
// `extern template` declaration covers them too: a user's file that moves a client (into a poller)
// then compiles none of its members' moves and destructors.
#define FOREWARN_CLIENT_MOVABLE(Class)                                                                  \
    Class(Class&&) noexcept;                                                                            \
    Class& operator=(Class&&) noexcept;                                                                 \
    ~Class()
#define FOREWARN_CLIENT_MOVABLE_DEFAULTS(Class)                                                         \
    template <class Transport>                                                                          \
    Class<Transport>::Class(Class&&) noexcept = default;                                                \
    template <class Transport>                                                                          \
    Class<Transport>& Class<Transport>::operator=(Class&&) noexcept = default;                          \
    template <class Transport>                                                                          \
    Class<Transport>::~Class() = default

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// What one key answered, parsed: its events, a tag that is part of its content (an ETag, an
/// incarnation) and the service's time.
struct key_reading {
    std::vector<event> events;
    std::string tag;
    std::optional<std::chrono::system_clock::time_point> service_time;
};

/// A failure of one key's answer (the service answered, but not usably for this key: a status,
/// a body that does not parse): the key keeps its last good reading and the others are
/// delivered. Any other failure (not reached, timed out, cancelled, not the metadata service,
/// or a 401, 403 or 429, which are about the client's standing, not the key) is the service's
/// and fails the reading.
constexpr bool key_failure_is_local(const error& e) noexcept {
    switch (e.code) {
    case errc::http_status: return e.http_status != 401 && e.http_status != 403 && e.http_status != 429;
    case errc::not_found:
    case errc::empty_body:
    case errc::parse_error:
    case errc::invalid_document:
    case errc::body_too_large: return true;
    default: return false;
    }
}

/**
 * The keys' readings of one source: each key's last good reading and last error, and the
 * document made of them. Not a template (compiled once, in libforewarn in compiled mode); a
 * hanging key's lane thread touches only its own key.
 */
class key_readings {
public:
    explicit key_readings(std::size_t keys) : slots_(keys) {}

    /// Key k's answer: a reading, or an error that is the key's own (it keeps its last good
    /// reading). True when a document should be made now: the reading differs from the one the
    /// last document holds, or the key starts failing (so that its error is heard).
    bool keep(std::size_t k, result<key_reading> answer);

    /**
     * The document of what the keys hold: their events in key order, the first service time,
     * the non-empty tags joined by '/', each failing key's error in key_errors; `owner` named by
     * the events without resources of their own. The error of the first failing key when no key
     * that `asked(k)` holds a good answer. `commit()` then makes it the one later answers are
     * compared with.
     */
    result<document> compose(cloud origin, function_ref<bool(std::size_t)> asked, const std::string& owner) const;
    void commit();

private:
    struct slot {
        key_reading good;              // the last good reading (none before the first)
        key_reading composed;          // the one the last document holds
        std::optional<error> failure;  // the last request's error, until a good reading
    };
    std::vector<slot> slots_;
};

/**
 * The base of `Client` (CRTP), a source of `Cloud` configured by `Options` (derived from
 * client_options_base) whose identity() gives an `Identity`. `Client` gives, privately with
 * `friend client_base`:
 *   static constexpr std::size_t key_count;
 *   static constexpr bool may_hang;                   // a key may be a hanging GET
 *   static Options settled(Options);                  // the options with its intervals clamped
 *   static std::chrono::milliseconds error_pause(const Options&);  // next()'s pause after a failure
 *   key_plan plan(std::size_t k) const;
 *   result<key_reading> read_key(std::size_t k, std::size_t lane, std::optional<std::chrono::seconds> hang);
 *   std::string key_url(std::size_t k) const;         // where key k is read (key_urls())
 *   result<Identity> read_identity();                 // identity()'s request, when no self_name
 * and may shadow before_read(), before_fetch(), local_failure(k, e), finish(document&),
 * event_owner() (the name events without resources of their own carry) and, where its endpoint
 * moves, endpoint(). Its constructor resolves its endpoint (resolved()) and checks its own options
 * (this->x_.set_config_error()).
 */
template <class Client, class Transport, class Identity, cloud Cloud, class Options>
class client_base {
public:
    using transport_type = Transport;
    using identity_type = Identity;
    using options_type = Options;
    /// The cloud whose metadata this client reads (document::origin).
    static constexpr cloud source_cloud = Cloud;

    Transport& transport() noexcept { return x_.transport(); }
    const Transport& transport() const noexcept { return x_.transport(); }
    const forewarn::clock& clock() const noexcept { return x_.clock(); }
    const forewarn::logger& log() const noexcept { return x_.log(); }
    /// The options in use (intervals clamped to their floors).
    const Options& options() const noexcept { return options_; }
    /// The base URL in use, after the cloud's precedence rules (e.g. "http://169.254.169.254").
    const std::string& endpoint() const noexcept { return endpoint_; }

    /// A configuration that can never work (a malformed endpoint, an option out of range), or success.
    result<void> validate() const { return x_.validate(); }

    /**
     * This VM's identity, asked once and cached. With options().self_name, that is its name and
     * nothing is asked.
     */
    result<Identity> identity();

    /**
     * The next document, on the keys' own schedules (the client's class says them): at once the
     * first time, after wake() and after a failure (which waits its pause first); else as soon as
     * a key's answer changed, or once every key was asked again; no later than about `not_after`.
     */
    result<document> next(forewarn::clock::time_point not_after = (forewarn::clock::time_point::max)());

    /**
     * Every key read once, plainly, and the document made of them. A key whose answer fails (a
     * status, a body that does not parse) keeps its last good reading (none before its first),
     * and its error is in document::key_errors; the document fails only when every key failed,
     * or when the service itself could not be asked (not reached, cancelled).
     */
    result<document> fetch();

    /// Where each key is read, in the keys' order (what document::key_errors' URLs name; what
    /// `forewarn-watch check` lists).
    std::vector<std::string> key_urls() const {
        std::vector<std::string> out;
        for (std::size_t k = 0; k < Client::key_count; ++k) out.push_back(static_cast<const Client&>(*this).key_url(k));
        return out;
    }

    /// Whether approve() can ever succeed: false (a client whose notices can be approved shadows it;
    /// one whose service takes no approvals keeps it).
    bool can_approve() const noexcept { return false; }
    /// errc::unsupported: this cloud's notices cannot be approved (a client that approves shadows it).
    result<void> approve(const std::vector<std::string>&) {
        return error(errc::unsupported, cat({"the ", to_string(Cloud), " metadata service takes no approvals"}));
    }

    /// Ends the wait or the hanging GETs in progress in next() now; next() then asks at once. Thread-safe.
    void wake() noexcept { x_.wake(); }
    /// Makes the request in flight, any backoff and the wait in next() return errc::cancelled
    /// promptly; sticky until reset(). Thread-safe.
    void cancel() noexcept { x_.cancel(); }
    /// Clears a cancel() so that the client can be used again.
    void reset() noexcept { x_.reset(); }

protected:
    /// The exchange made from the options (their clock, log, rate limit, retry under `rules`,
    /// next()'s pause after a failure), a lane per key that may hang, the keys' readings.
    FOREWARN_COLD client_base(Options options, Transport transport, retry_rules rules)
        : options_(Client::settled(std::move(options))),
          x_(std::move(transport), Client::may_hang ? Client::key_count + 1 : 1,
             exchange_settings{options_.clock, options_.log, options_.rate_limit, Client::error_pause(options_)},
             retry_policy(rules, options_.retry)),
          readings_(Client::key_count) {
        static_assert(std::is_base_of_v<client_options_base, Options>, "a client's options derive from client_options_base");
        static_assert(is_transport_v<Transport>, "Transport must model forewarn::is_transport");
    }

    /// The constructor's resolved endpoint, or the configuration error every call then returns.
    bool resolved(result<std::string> endpoint) {
        if (!endpoint) {
            x_.set_config_error(std::move(endpoint).error());
            return false;
        }
        endpoint_ = std::move(*endpoint);
        return true;
    }

    // The hooks a client may shadow.
    result<void> before_read() { return {}; }   // before each key's request (a session token)
    result<void> before_fetch() { return {}; }  // before fetch()'s reading (the instance's name)
    bool local_failure(std::size_t, const error& e) const { return key_failure_is_local(e); }
    void finish(document&) {}
    /// Events without resources of their own name this VM: its identity, once known.
    std::string event_owner() const { return identity_ ? identity_->name : options_.self_name; }

    Options options_;
    std::string endpoint_;
    std::optional<Identity> identity_;
    metadata_exchange<Transport> x_;

private:
    Client& self() noexcept { return static_cast<Client&>(*this); }
    result<bool> ask(std::size_t k, std::size_t lane, std::optional<std::chrono::seconds> hang);
    result<document> compose();

    key_readings readings_;
};

template <class Client, class Transport, class Identity, cloud Cloud, class Options>
FOREWARN_COLD result<Identity> client_base<Client, Transport, Identity, Cloud, Options>::identity() {
    if (!identity_ && !options_.self_name.empty()) {
        identity_.emplace();
        identity_->name = options_.self_name;
    }
    if (identity_) return *identity_;
    if (auto v = x_.validate(); !v) return std::move(v).error();
    auto id = self().read_identity();
    if (!id) return std::move(id).error();
    identity_ = *id;
    return id;
}

template <class Client, class Transport, class Identity, cloud Cloud, class Options>
result<document> client_base<Client, Transport, Identity, Cloud, Options>::next(forewarn::clock::time_point not_after) {
    auto r = x_.template next<Client::may_hang>(
        not_after, Client::key_count, [this](std::size_t k) { return self().plan(k); },
        [this](std::size_t k, std::size_t lane, std::optional<std::chrono::seconds> hang) { return ask(k, lane, hang); },
        [this] { return fetch(); }, [this] { return compose(); });
    if (!r && r.error().code == errc::cancelled && r.error().url.empty()) return std::move(r).error().at_url(self().endpoint());
    return r;
}

template <class Client, class Transport, class Identity, cloud Cloud, class Options>
result<document> client_base<Client, Transport, Identity, Cloud, Options>::fetch() {
    if (auto v = x_.validate(); !v) return std::move(v).error();
    if (x_.cancelled()) return error(errc::cancelled, "the client was cancelled").at_url(self().endpoint());
    if (auto b = self().before_fetch(); !b) return std::move(b).error();
    auto read = x_.read_all(
        Client::key_count, [this](std::size_t k) { return self().plan(k); },
        [this](std::size_t k, std::size_t lane, std::optional<std::chrono::seconds>) { return ask(k, lane, std::nullopt); });
    if (!read) return std::move(read).error();
    return compose();
}

// One key's request: a failure that is the key's own is kept by the readings, any other fails it.
template <class Client, class Transport, class Identity, cloud Cloud, class Options>
result<bool> client_base<Client, Transport, Identity, Cloud, Options>::ask(std::size_t k, std::size_t lane, std::optional<std::chrono::seconds> hang) {
    if (auto b = self().before_read(); !b) return std::move(b).error();
    auto r = self().read_key(k, lane, hang);
    if (!r && !self().local_failure(k, r.error())) return std::move(r).error();
    return readings_.keep(k, std::move(r));
}

template <class Client, class Transport, class Identity, cloud Cloud, class Options>
result<document> client_base<Client, Transport, Identity, Cloud, Options>::compose() {
    auto doc = readings_.compose(Cloud, [this](std::size_t k) { return self().plan(k).how != key_plan::mode::off; },
                                 self().event_owner());
    if (!doc) return doc;
    self().finish(*doc);
    readings_.commit();
    return doc;
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/client_base-inl.hpp>
#endif
