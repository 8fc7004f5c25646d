// SPDX-License-Identifier: MIT
#pragma once

// What every source of maintenance notices is: each cloud's client, the testing fake_source, or
// your own. The poller is written once against this and knows no cloud.

#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/event.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE

/**
 * Requirements on a notice source S (checked by is_notice_source<S> and, in C++20, the concept
 * forewarn::notice_source):
 *
 *   result<document> s.next(clock::time_point not_after);
 *       The next document, when the source's own cadence says (a poll interval after the last
 *       request, or a hanging GET that answers on a change), but no later than about
 *       `not_after` (plus one request), and at once when `not_after` has passed. The first call
 *       asks at once. The source keeps its own cursor (a document's incarnation, a key's ETag)
 *       and its own pause after a failure. It waits on s.clock().
 *   void s.wake() noexcept;          thread-safe: the wait in progress in next() (not a request)
 *                                    ends now, so next() asks at once. Not sticky.
 *   bool s.can_approve() const;      whether approve() can ever succeed (always, never, or as
 *                                    the source's options say: each cloud's client says which).
 *                                    Each event may narrow it: event::approvable, set by the source
 *                                    in next() (e.g. true for an event still Scheduled), says whether
 *                                    that event can be approved; absent, can_approve() decides.
 *   result<void> s.approve(const std::vector<std::string>& ids);   errc::unsupported when it cannot
 *   result<I> s.identity();          I has `std::string name`: this VM's name as events list it.
 *                                    Asking never changes later documents.
 *   result<void> s.validate() const; a configuration that can never work (malformed endpoint, ...)
 *   void s.cancel() noexcept;  void s.reset() noexcept;   sticky cancel, as the transport's
 *   const forewarn::clock& s.clock() const;   const forewarn::logger& s.log() const;
 *
 * Optional: `void s.abandon(const std::vector<std::string>& ids);` the poller calls it (on its
 * thread) for the events whose approval a handle declined (approval_handle::decline): let go of
 * what the source holds for them (e.g. the heartbeats that hold an action back).
 *
 * One thread uses a source at a time; wake(), cancel() and reset() may come from any thread.
 */
template <class S, class = void>
struct is_notice_source : std::false_type {};

template <class S>
struct is_notice_source<
    S, std::void_t<decltype(std::declval<S&>().next(std::declval<clock::time_point>())),
                   decltype(std::declval<S&>().wake()), decltype(std::declval<const S&>().can_approve()),
                   decltype(std::declval<S&>().approve(std::declval<const std::vector<std::string>&>())),
                   decltype(std::declval<S&>().identity().value().name), decltype(std::declval<const S&>().validate()),
                   decltype(std::declval<S&>().cancel()), decltype(std::declval<S&>().reset()),
                   decltype(std::declval<const S&>().clock()), decltype(std::declval<const S&>().log())>>
    : std::bool_constant<
          std::is_same_v<decltype(std::declval<S&>().next(std::declval<clock::time_point>())), result<document>> &&
          std::is_same_v<decltype(std::declval<S&>().approve(std::declval<const std::vector<std::string>&>())),
                         result<void>> &&
          std::is_same_v<decltype(std::declval<const S&>().validate()), result<void>> &&
          std::is_convertible_v<decltype(std::declval<const S&>().can_approve()), bool> &&
          std::is_convertible_v<decltype(std::declval<S&>().identity().value().name), std::string> &&
          std::is_convertible_v<decltype(std::declval<const S&>().clock()), const forewarn::clock&> &&
          std::is_convertible_v<decltype(std::declval<const S&>().log()), const logger&> &&
          noexcept(std::declval<S&>().wake()) && noexcept(std::declval<S&>().cancel()) &&
          noexcept(std::declval<S&>().reset())> {};

template <class S>
inline constexpr bool is_notice_source_v = is_notice_source<S>::value;

namespace detail {
template <class S, class = void>
struct has_abandon : std::false_type {};
template <class S>
struct has_abandon<S, std::void_t<decltype(std::declval<S&>().abandon(std::declval<const std::vector<std::string>&>()))>>
    : std::true_type {};

/// s.abandon(ids) when the source has it; nothing otherwise.
template <class S>
void abandon(S& s, const std::vector<std::string>& ids) {
    if constexpr (has_abandon<S>::value) s.abandon(ids);
    else (void)s, (void)ids;
}
}  // namespace detail

#if FOREWARN_HAS_CONCEPTS
/// C++20 spelling of is_notice_source<S>.
template <class S>
concept notice_source = is_notice_source_v<S>;
#endif

FOREWARN_END_NAMESPACE
