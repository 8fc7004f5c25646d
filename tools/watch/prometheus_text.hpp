// SPDX-License-Identifier: MIT
// Prometheus' text exposition format (version 0.0.4), written once for the agent: a label
// value's escaping and one sample line. metrics.hpp writes /metrics with it; the Kubernetes room
// hands it its drain counts (kubernetes/node_actions.cpp, drain_metrics).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace watch {

/// Escapes a label value for Prometheus' text format: backslash, double quote and newline.
inline std::string prometheus_label(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (const char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

/// Appends one sample, `name{labels} value`: `labels` already escaped (name="value",...), the
/// value with every digit a double holds.
inline void prometheus_sample(std::string& out, std::string_view name, std::string_view labels, double value) {
    char num[64];
    std::snprintf(num, sizeof num, "%.17g", value);
    out.append(name.data(), name.size());
    out += '{';
    out.append(labels.data(), labels.size());
    out += "} ";
    out += num;
    out += '\n';
}

}  // namespace watch
