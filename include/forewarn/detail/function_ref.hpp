// SPDX-License-Identifier: MIT
#pragma once

// A non-owning reference to a callable, for callbacks that live only as long as the call that
// takes them (LLVM's function_ref). Unlike std::function it allocates nothing and instantiates
// one small thunk per callable type, which keeps the header-only build light.

#include <forewarn/config.hpp>

#include <memory>
#include <type_traits>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)> {
public:
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, function_ref> &&
                                                std::is_invocable_r_v<R, F&, Args...>>>
    function_ref(F&& f) noexcept  // NOLINT: implicit, like a reference
        : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          thunk_([](void* o, Args... args) -> R {
              return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return thunk_(object_, std::forward<Args>(args)...); }

private:
    void* object_;
    R (*thunk_)(void*, Args...);
};

}  // namespace detail
FOREWARN_END_NAMESPACE
