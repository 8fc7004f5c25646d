// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/poller/state_keeper.hpp> (spdlog's -inl files). Header-only: included
// at the end of that header. Compiled mode: compiled once into libforewarn (src/forewarn.cpp) and
// empty in a user's file, where FOREWARN_HEADER_DEFINITIONS is 0 (docs/building.md).

#include <forewarn/detail/poller/state_keeper.hpp>
#include <forewarn/detail/strings.hpp>

#if FOREWARN_HEADER_DEFINITIONS

FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE FOREWARN_COLD std::optional<poller_state> state_keeper::load(const logger& log, function_ref<void(const error&)> report) {
    if (loaded_) return std::nullopt;
    loaded_ = true;
    if (!store_) return std::nullopt;
    auto st = store_->load();
    if (st) return std::move(st).value();
    if (st.error().code == errc::not_found) {
        log(log_level::info, cat({"no saved state at ", store_->where(), " yet: starting with no events known"}));
    } else {
        error e = std::move(st).error();
        e.message = cat({"the saved state at ", store_->where(), " is unreadable, starting with no events known: ", e.message});
        report(e);
    }
    return std::nullopt;
}

FOREWARN_INLINE FOREWARN_COLD void state_keeper::save(function_ref<poller_state()> snapshot, function_ref<void(const error&)> report) {
    if (!dirty_ || !store_) return;
    if (auto r = store_->save(snapshot()); r)
        dirty_ = false;
    else
        report(r.error());  // dirty stays set: the next call tries again
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#endif
