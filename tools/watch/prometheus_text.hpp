// SPDX-License-Identifier: MIT
// Prometheus' text exposition format (version 0.0.4), written once for the agent: a label
// value's escaping and one sample line. Only metrics.cpp writes /metrics with it; the Kubernetes
// room hands metrics its drain counts as numbers (drain_stats, metrics.hpp).
#pragma once

#include <string>
#include <string_view>

namespace watch {

/// Escapes a label value for Prometheus' text format: backslash, double quote and newline.
std::string prometheus_label(std::string_view v);

/// Appends one sample, `name{labels} value`: `labels` already escaped (name="value",...), the
/// value with every digit a double holds.
void prometheus_sample(std::string& out, std::string_view name, std::string_view labels, double value);

}  // namespace watch
