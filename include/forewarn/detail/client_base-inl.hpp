// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/client_base.hpp> (spdlog's -inl files): the keys' readings,
// the same code for every client and transport. Header-only: included at the end of that header.
// Compiled mode: compiled once into libforewarn (src/forewarn.cpp).

#include <forewarn/detail/client_base.hpp>

#if FOREWARN_HEADER_DEFINITIONS
FOREWARN_BEGIN_NAMESPACE
namespace detail {

FOREWARN_INLINE bool key_readings::keep(std::size_t k, result<key_reading> answer) {
    slot& s = slots_.at(k);
    if (!answer) {
        const bool starts = !s.failure;
        s.failure = std::move(answer).error();
        return starts;
    }
    const bool changed = s.failure || answer->events != s.composed.events || answer->tag != s.composed.tag;
    s.failure.reset();
    s.good = std::move(*answer);
    return changed;
}

FOREWARN_INLINE result<document> key_readings::compose(cloud origin, function_ref<bool(std::size_t)> asked,
                                                       const std::string& owner) const {
    document doc;
    doc.origin = origin;
    bool any_good = false;
    for (std::size_t k = 0; k < slots_.size(); ++k) {
        const slot& s = slots_[k];
        if (s.failure)
            doc.key_errors.push_back(*s.failure);
        else
            any_good = any_good || asked(k);
        doc.events.insert(doc.events.end(), s.good.events.begin(), s.good.events.end());
        if (!doc.service_time) doc.service_time = s.good.service_time;
        if (!s.good.tag.empty()) doc.incarnation += (doc.incarnation.empty() ? "" : "/") + s.good.tag;
    }
    if (!any_good && !doc.key_errors.empty()) return doc.key_errors.front();
    if (!owner.empty())
        for (auto& e : doc.events)
            if (e.resources.empty()) e.resources = {owner};
    return doc;
}

FOREWARN_INLINE void key_readings::commit() {
    for (auto& s : slots_) s.composed = s.good;
}

}  // namespace detail
FOREWARN_END_NAMESPACE
#endif  // FOREWARN_HEADER_DEFINITIONS
