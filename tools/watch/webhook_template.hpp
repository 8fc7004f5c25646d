// SPDX-License-Identifier: MIT
// --webhook-template (webhook_template.cpp): a webhook body of one's own (Slack, Teams) with the
// change's fields in it, escaped as JSON. Parsed and checked once, at start; what settings hold.
#pragma once

#include <string>
#include <vector>

namespace watch {

/// A --webhook-template: JSON text with {{name}} placeholders, each a member of the change's JSON
/// line (change, cloud, id, type, raw_type, status, raw_status, resource_type, resources,
/// not_before, description, source, raw_source, duration_s, reason, evidence, observed_pause_s,
/// observed_pause_seen_by, incarnation) put
/// in as the inside of a JSON string, or {{json}}, the whole line as a JSON value.
class webhook_template {
public:
    /// Parses `text`; the error in words, or empty.
    std::string parse(std::string text);
    bool empty() const noexcept { return parts_.empty(); }
    /// The body for a change, from its JSON line.
    std::string render(const std::string& line) const;

private:
    struct part {
        std::string text;  // literal text before the placeholder
        std::string name;  // the placeholder, empty for the tail
    };
    std::vector<part> parts_;
};

}  // namespace watch
