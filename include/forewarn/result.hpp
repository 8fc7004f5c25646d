// SPDX-License-Identifier: MIT
#pragma once

#include <forewarn/config.hpp>

#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

FOREWARN_BEGIN_NAMESPACE

/// What went wrong in an I/O call. The numeric values are not stable across versions.
enum class errc {
    unknown = 0,           ///< a default-constructed error: nothing is known about it
    invalid_argument,      ///< a bad option, URL, id or path given by the caller
    transport,             ///< the connection failed (refused, reset, DNS, TLS, closed mid-body)
    timeout,               ///< the total or connect timeout passed
    cancelled,             ///< cancel() was called (stop in progress)
    body_too_large,        ///< the response body passed the configured cap
    http_status,           ///< the server answered with a status the call cannot use
    empty_body,            ///< a 200 answer with no body where a document was expected
    parse_error,           ///< the body is not well-formed JSON (or UTF-8), or too deeply nested
    invalid_document,      ///< well-formed JSON of the wrong shape: a member missing or mistyped
    not_metadata_server,   ///< the peer did not identify itself as the metadata service
    not_found,             ///< 404: the key or resource does not exist
    unsupported,           ///< the operation does not exist for this cloud or api-version
    io_error,              ///< a local file could not be read or written
    handler_failed,        ///< a user callback threw; the poller reported it and went on
};

/// A short lower-case name for a code, e.g. "http_status".
constexpr std::string_view to_string(errc code) noexcept {
    switch (code) {
    case errc::unknown: return "unknown";
    case errc::invalid_argument: return "invalid_argument";
    case errc::transport: return "transport";
    case errc::timeout: return "timeout";
    case errc::cancelled: return "cancelled";
    case errc::body_too_large: return "body_too_large";
    case errc::http_status: return "http_status";
    case errc::empty_body: return "empty_body";
    case errc::parse_error: return "parse_error";
    case errc::invalid_document: return "invalid_document";
    case errc::not_metadata_server: return "not_metadata_server";
    case errc::not_found: return "not_found";
    case errc::unsupported: return "unsupported";
    case errc::io_error: return "io_error";
    case errc::handler_failed: return "handler_failed";
    }
    return "unknown";
}

/**
 * What a transport could tell of a connection that failed below HTTP (errc::transport, or
 * errc::timeout for connect_timeout): the cause an operator acts on differs for each.
 */
enum class network_failure {
    none,               ///< not a connection failure, or one the transport could not tell apart
    refused,            ///< the connection was refused: nothing listens there, or a firewall rejects it (WinHTTP: or no route)
    unreachable,        ///< no route to the host or network (no such network here)
    name_not_resolved,  ///< the host name did not resolve (DNS)
    connect_timeout,    ///< no connection within the connect timeout: the packets are dropped on the way
    reset,              ///< the connection was reset or closed by the other end before a whole answer
};

/// "none", "refused", "unreachable", "name_not_resolved", "connect_timeout" or "reset".
constexpr std::string_view to_string(network_failure f) noexcept {
    switch (f) {
    case network_failure::none: return "none";
    case network_failure::refused: return "refused";
    case network_failure::unreachable: return "unreachable";
    case network_failure::name_not_resolved: return "name_not_resolved";
    case network_failure::connect_timeout: return "connect_timeout";
    case network_failure::reset: return "reset";
    }
    return "none";
}

/// The error half of a result: a code plus everything needed to say what failed.
struct error {
    errc code = errc::unknown;
    int http_status = 0;       ///< the HTTP status when one was received, else 0
    std::string message;       ///< a human-readable sentence
    std::string field;         ///< the JSON member at fault (e.g. "Events[2].EventId"), if any
    std::size_t offset = npos; ///< byte offset of a parse error, if any
    std::string url;           ///< the URL of the request it concerns, if any
    std::string event_id;      ///< the event it concerns, if any (several: comma-separated)
    /// Which connection failure it was, when the transport could tell (curl_transport and
    /// winhttp_transport do); none otherwise.
    network_failure network = network_failure::none;

    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    error() = default;
    error(errc c, std::string msg) : code(c), message(std::move(msg)) {}
    error(errc c, std::string msg, int status) : code(c), http_status(status), message(std::move(msg)) {}
    error(errc c, std::string msg, network_failure n) : code(c), message(std::move(msg)), network(n) {}

    /// "http_status (HTTP 400): ..." with the field and offset when known.
    std::string describe() const;

    /// This error with the URL it concerns (kept when one is set already).
    error&& at_url(std::string_view u) && {
        if (url.empty()) url = std::string(u);
        return std::move(*this);
    }
    /// This error with the event it concerns (kept when one is set already).
    error&& for_event(std::string_view id) && {
        if (event_id.empty()) event_id = std::string(id);
        return std::move(*this);
    }
};

namespace detail {
/// What error() gives on a result that holds a value: not undefined behaviour, an error that says so.
const error& no_error() noexcept;

}  // namespace detail

/// Thrown by result<T>::value() when the result holds an error.
class bad_result_access : public std::exception {
public:
    explicit bad_result_access(forewarn::error e) : error_(std::move(e)), what_(error_.describe()) {}
    const char* what() const noexcept override { return what_.c_str(); }
    const forewarn::error& error() const noexcept { return error_; }

private:
    forewarn::error error_;
    std::string what_;
};

namespace detail {

/**
 * result<T>'s storage: a value or an error in one union. std::variant would do, at several times
 * the compile cost (every result<T> instantiates its machinery) for two alternatives known in
 * advance. Assignment that changes the alternative keeps the old error if building the value
 * throws, so a result always holds one or the other.
 */
template <class T>
class result_storage {
public:
    template <class... A>
    explicit result_storage(std::in_place_index_t<0>, A&&... a) : value_(std::forward<A>(a)...), has_value_(true) {}
    template <class... A>
    explicit result_storage(std::in_place_index_t<1>, A&&... a) : error_(std::forward<A>(a)...), has_value_(false) {}

    result_storage(const result_storage& other) : has_value_(other.has_value_) {
        if (has_value_)
            ::new (static_cast<void*>(std::addressof(value_))) T(other.value_);
        else
            ::new (static_cast<void*>(std::addressof(error_))) error(other.error_);
    }
    result_storage(result_storage&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
        : has_value_(other.has_value_) {
        if (has_value_)
            ::new (static_cast<void*>(std::addressof(value_))) T(std::move(other.value_));
        else
            ::new (static_cast<void*>(std::addressof(error_))) error(std::move(other.error_));
    }
    result_storage& operator=(const result_storage& other) {
        if (this == &other) return *this;
        if (has_value_ && other.has_value_) {
            value_ = other.value_;
        } else if (!has_value_ && !other.has_value_) {
            error_ = other.error_;
        } else if (other.has_value_) {
            T copy(other.value_);  // a throwing copy leaves this as it was
            become_value(std::move(copy));
        } else {
            error copy(other.error_);
            become_error(std::move(copy));
        }
        return *this;
    }
    result_storage& operator=(result_storage&& other) noexcept(std::is_nothrow_move_constructible_v<T> &&
                                                              std::is_nothrow_move_assignable_v<T>) {
        if (this == &other) return *this;
        if (has_value_ && other.has_value_)
            value_ = std::move(other.value_);
        else if (!has_value_ && !other.has_value_)
            error_ = std::move(other.error_);
        else if (other.has_value_)
            become_value(std::move(other.value_));
        else
            become_error(std::move(other.error_));
        return *this;
    }
    ~result_storage() {
        if (has_value_)
            value_.~T();
        else
            error_.~error();
    }

protected:
    // Holds an error now: becomes `v`, or stays that error when moving `v` in throws.
    void become_value(T&& v) {
        error saved(std::move(error_));
        error_.~error();
        try {
            ::new (static_cast<void*>(std::addressof(value_))) T(std::move(v));
        } catch (...) {
            ::new (static_cast<void*>(std::addressof(error_))) error(std::move(saved));
            throw;
        }
        has_value_ = true;
    }
    // Holds a value now: becomes `e` (moving an error cannot throw).
    void become_error(error&& e) noexcept {
        value_.~T();
        ::new (static_cast<void*>(std::addressof(error_))) error(std::move(e));
        has_value_ = false;
    }

    union {
        T value_;
        error error_;
    };
    bool has_value_;
};

// Deletes result<T>'s copy operations when T has none, so that traits (and the containers
// that consult them) see what std::variant would have shown.
template <bool Copyable>
struct result_copy_control {};
template <>
struct result_copy_control<false> {
    result_copy_control() = default;
    result_copy_control(const result_copy_control&) = delete;
    result_copy_control(result_copy_control&&) = default;
    result_copy_control& operator=(const result_copy_control&) = delete;
    result_copy_control& operator=(result_copy_control&&) = default;
};

}  // namespace detail

/// A value or an error. Nothing on an I/O path throws; value() throws bad_result_access.
template <class T>
class result : private detail::result_storage<T>,
               private detail::result_copy_control<std::is_copy_constructible_v<T>> {
    static_assert(!std::is_same_v<std::decay_t<T>, forewarn::error>, "result<error> is not meaningful");
    static_assert(!std::is_reference_v<T>, "result<T&> is not supported");
    static_assert(std::is_nothrow_move_constructible_v<forewarn::error>, "result relies on a non-throwing error move");
    using storage = detail::result_storage<T>;

public:
    using value_type = T;

    template <class U = T, std::enable_if_t<std::is_default_constructible_v<U>, int> = 0>
    result() : storage(std::in_place_index<0>) {}
    result(const T& v) : storage(std::in_place_index<0>, v) {}
    result(T&& v) : storage(std::in_place_index<0>, std::move(v)) {}
    result(const forewarn::error& e) : storage(std::in_place_index<1>, e) {}
    result(forewarn::error&& e) : storage(std::in_place_index<1>, std::move(e)) {}

    bool has_value() const noexcept { return this->has_value_; }
    explicit operator bool() const noexcept { return this->has_value_; }

    T& value() & {
        check();
        return this->value_;
    }
    const T& value() const& {
        check();
        return this->value_;
    }
    T&& value() && {
        check();
        return std::move(this->value_);
    }

    /// Precondition: has_value().
    T& operator*() & noexcept { return this->value_; }
    const T& operator*() const& noexcept { return this->value_; }
    T&& operator*() && noexcept { return std::move(this->value_); }
    T* operator->() noexcept { return std::addressof(this->value_); }
    const T* operator->() const noexcept { return std::addressof(this->value_); }

    template <class U>
    T value_or(U&& fallback) const& {
        return has_value() ? **this : static_cast<T>(std::forward<U>(fallback));
    }

    /// The error; on a result that holds a value, an errc::unknown error that says so.
    const forewarn::error& error() const& noexcept { return this->has_value_ ? detail::no_error() : this->error_; }
    forewarn::error error() && { return this->has_value_ ? detail::no_error() : std::move(this->error_); }

private:
    void check() const {
        if (!this->has_value_) throw bad_result_access(this->error_);
    }
};

/// The outcome of a call that returns nothing on success.
template <>
class result<void> {
public:
    using value_type = void;

    result() noexcept = default;
    result(const forewarn::error& e) : error_(e), failed_(true) {}
    result(forewarn::error&& e) : error_(std::move(e)), failed_(true) {}

    bool has_value() const noexcept { return !failed_; }
    explicit operator bool() const noexcept { return has_value(); }
    void value() const {
        if (failed_) throw bad_result_access(error_);
    }
    /// The error; on a success, an errc::unknown error that says so.
    const forewarn::error& error() const& noexcept { return failed_ ? error_ : detail::no_error(); }
    forewarn::error error() && { return failed_ ? std::move(error_) : detail::no_error(); }

private:
    forewarn::error error_;
    bool failed_ = false;
};

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/result-inl.hpp>
#endif
