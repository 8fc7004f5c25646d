// SPDX-License-Identifier: MIT
// One row of `forewarn-watch check`'s report, whoever words it: check.cpp's own steps, a cloud's
// client's steps for its approval lever (source.hpp, lever_steps) and the Kubernetes room's
// (kubernetes/access.hpp): what was looked at, what was seen, and for a warning or a failure why
// that is likely and what to do.
#pragma once

#include <string>
#include <string_view>

namespace watch {

enum class check_result { ok, warn, fail, skip };

/// "ok", "warn", "fail" or "skip": the report's JSON form, in check_result's order.
inline constexpr std::string_view check_result_names[] = {"ok", "warn", "fail", "skip"};
constexpr std::string_view to_string(check_result r) { return check_result_names[static_cast<int>(r)]; }

struct check_row {
    std::string step;  ///< what was looked at: "handshake", "compute access", "kubernetes node", ...
    check_result result = check_result::ok;
    std::string saw;
    std::string cause;
    std::string fix;
};

}  // namespace watch
