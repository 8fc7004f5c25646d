// SPDX-License-Identifier: MIT
#pragma once

// Definitions for <forewarn/detail/hidden.hpp>: included by the definition files of the classes
// that hold a detail::hidden<T> member, after T is defined (see hidden.hpp).

#include <forewarn/detail/hidden.hpp>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

template <class T>
hidden<T>::hidden(const hidden& other) : value_(other.value_ ? new T(*other.value_) : nullptr) {}

template <class T>
hidden<T>& hidden<T>::operator=(const hidden& other) {
    if (this == &other) return *this;
    if (!other.value_) {
        delete value_;
        value_ = nullptr;
    } else if (value_) {
        *value_ = *other.value_;
    } else {
        value_ = new T(*other.value_);
    }
    return *this;
}

template <class T>
hidden<T>& hidden<T>::operator=(hidden&& other) noexcept {
    if (this != &other) {
        delete value_;
        value_ = other.value_;
        other.value_ = nullptr;
    }
    return *this;
}

template <class T>
hidden<T>::~hidden() {
    delete value_;
}

template <class T>
T& hidden<T>::operator*() {
    if (!value_) value_ = new T();
    return *value_;
}

template <class T>
const T& hidden<T>::operator*() const {
    static const T empty{};
    return value_ ? *value_ : empty;
}

}  // namespace detail
FOREWARN_END_NAMESPACE
