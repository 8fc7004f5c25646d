// SPDX-License-Identifier: MIT
// Sets or clears an environment variable for one scope (POSIX setenv, Windows _putenv_s).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

class scoped_env {
public:
    scoped_env(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        set(name, value);
    }
    ~scoped_env() { set(name_, old_ ? old_->c_str() : nullptr); }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    static void set(const char* name, const char* value) {
#if defined(_WIN32)
        ::_putenv_s(name, value ? value : "");  // "" removes it
#else
        if (value)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
#endif
    }
    const char* name_;
    std::optional<std::string> old_;
};
