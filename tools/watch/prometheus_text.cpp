// SPDX-License-Identifier: MIT
// Prometheus' text exposition format (prometheus_text.hpp).
#include "prometheus_text.hpp"

#include <cstdio>

namespace watch {

std::string prometheus_label(std::string_view v) {
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

void prometheus_sample(std::string& out, std::string_view name, std::string_view labels, double value) {
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
