// SPDX-License-Identifier: MIT
#pragma once

// detail::hidden<T>: a class's member whose type only its definition file (x-inl.hpp) knows, so
// that a compiled-mode program parses none of what that type needs. The poller's parts keep their
// maps of events by id in one: <unordered_map> was a twentieth of what a compiled-mode program's
// compile costs (docs/benchmarks.md, "Narrow includes").
//
// The owner declares `struct T;` and a `detail::hidden<T>` member; its definition file defines T
// and includes <forewarn/detail/hidden-inl.hpp>. Header-only, the owner's implicit copies and
// destructor find the definitions there. In compiled mode libforewarn instantiates
// `detail::hidden<T>` (src/forewarn.cpp) and a program calls those, never needing T.

#include <forewarn/config.hpp>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

template <class T>
class hidden {
public:
    /// Empty: T is made on first use (a default-made T is what every read sees until then).
    hidden() noexcept = default;
    /// The source reads as a default-made T again.
    hidden(hidden&& other) noexcept : value_(other.value_) { other.value_ = nullptr; }
    hidden(const hidden& other);
    hidden& operator=(const hidden& other);
    hidden& operator=(hidden&& other) noexcept;
    ~hidden();

    T& operator*();
    const T& operator*() const;
    T* operator->() { return &**this; }
    const T* operator->() const { return &**this; }

private:
    // Owned. A raw pointer, so that the constructors above need nothing of T: every function
    // that deletes it is defined where T is complete (hidden-inl.hpp).
    T* value_ = nullptr;
};

}  // namespace detail
FOREWARN_END_NAMESPACE
