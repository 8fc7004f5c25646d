// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/transport/retry.hpp> (spdlog's -inl files). Header-only: included at
// the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/transport/retry.hpp>

#if FOREWARN_HEADER_DEFINITIONS
#include <algorithm>
#include <map>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE double jitter_draw() noexcept {
    thread_local std::uint64_t state =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&state)) << 16);
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);  // 53 bits: [0, 1)
}

}  // namespace detail

FOREWARN_INLINE bool is_retryable(const error& e, retry_rules rules) noexcept {
    switch (e.code) {
    case errc::transport:
    case errc::timeout: return true;
    case errc::http_status:
        if (rules == retry_rules::azure)
            return e.http_status == 410 || e.http_status == 429 || e.http_status == 500 || e.http_status == 503;
        return e.http_status == 429 || (e.http_status >= 500 && e.http_status <= 599);
    default: return false;
    }
}

FOREWARN_INLINE bool retry_budget::try_spend() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
}

FOREWARN_INLINE void retry_budget::on_success() {
    std::lock_guard<std::mutex> lock(mutex_);
    tokens_ = (std::min)(capacity_, tokens_ + per_success_);
}

FOREWARN_INLINE double retry_budget::available() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return tokens_;
}

FOREWARN_INLINE std::chrono::nanoseconds rate_limiter::try_acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (limit_ == 0) return std::chrono::nanoseconds(0);
    const auto now = clock_.now();
    if (sent_.size() < limit_) {
        sent_.push_back(now);
        return std::chrono::nanoseconds(0);
    }
    const auto oldest = sent_[next_];
    if (now - oldest < window_) return oldest + window_ - now;
    sent_[next_] = now;
    next_ = (next_ + 1) % limit_;
    return std::chrono::nanoseconds(0);
}

FOREWARN_INLINE bool rate_limiter::acquire(interruptible_sleep& sleep) {
    for (;;) {
        const auto wait = try_acquire();
        if (wait.count() == 0) return true;
        if (!sleep.sleep_for(wait)) return false;
    }
}

FOREWARN_INLINE FOREWARN_COLD std::shared_ptr<rate_limiter> rate_limiter::for_host(std::string_view authority,
                                                                     const forewarn::clock& c) {
    static std::mutex m;
    static std::map<std::pair<std::string, const void*>, std::shared_ptr<rate_limiter>> limiters;
    std::lock_guard<std::mutex> lock(m);
    auto& slot = limiters[std::make_pair(std::string(authority), static_cast<const void*>(c.impl().get()))];
    if (!slot) slot = std::make_shared<rate_limiter>(5, std::chrono::seconds(1), c);
    return slot;
}

FOREWARN_INLINE std::chrono::milliseconds retry_policy::backoff(int retry) const {
    double d = static_cast<double>(options_.initial_backoff.count());
    for (int i = 1; i < retry && d < static_cast<double>(options_.max_backoff.count()); ++i)
        d *= options_.multiplier;
    d = (std::min)(d, static_cast<double>(options_.max_backoff.count()));
    const double j = std::clamp(options_.jitter, 0.0, 1.0);
    return std::chrono::milliseconds(static_cast<std::int64_t>(d * (1.0 - j * detail::jitter_draw())));
}

FOREWARN_INLINE retry_policy::retry_policy(retry_rules rules, retry_options options)
    : rules_(rules), options_(options),
      budget_(std::make_shared<retry_budget>(options.budget_capacity, options.budget_per_success)) {}

FOREWARN_END_NAMESPACE

#endif  // FOREWARN_HEADER_DEFINITIONS
