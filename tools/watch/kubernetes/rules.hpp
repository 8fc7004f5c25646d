// SPDX-License-Identifier: MIT
#pragma once

// What an event does to the node, by its type (docs/kubernetes.md, "The rules"): the taint (and
// its effect), the cordon, the drain. The defaults: every type takes the node out of service
// (taint NoSchedule, cordon, drain) but live migration, freeze and rebalance, which get only the
// Event, the condition and the label. `--kubernetes-rules FILE` changes them per type, and
// `--drain-also TYPES` and `--no-drain` cover the common cases.

#include <forewarn/event.hpp>
#include <forewarn/result.hpp>

#include <map>
#include <string>
#include <string_view>

namespace watch::kubernetes {

/// Whether the type takes the node out of service by default (taint, cordon, drain).
bool disruptive(forewarn::event_type t) noexcept;

struct node_rule {
    bool taint = false;
    bool cordon = false;
    bool drain = false;
    std::string effect = "NoSchedule";  ///< the taint's: NoSchedule, PreferNoSchedule or NoExecute
    /// Whether the node is taken out of service at all (at NotBefore less the drain lead).
    bool takes_out() const noexcept { return taint || cordon || drain; }
};

class node_rules {
public:
    /// The defaults.
    node_rules();
    const node_rule& of(forewarn::event_type t) const;
    void set(forewarn::event_type t, node_rule r) { rules_[t] = std::move(r); }

    /// The defaults changed by a rules document: an object keyed by event type names
    /// (`reboot`, `live_migrate`, ...; event.hpp's to_string), each an object of `taint`,
    /// `cordon`, `drain` (booleans) and `effect`; a member left out keeps the type's default.
    /// Anything else (an unknown type or member, a wrong type, an unknown effect) is an error
    /// that names it.
    static forewarn::result<node_rules> parse(std::string_view json);
    /// parse() of a file's content (at most 64 KiB).
    static forewarn::result<node_rules> from_file(const std::string& path);

    /// These types are taken out of service and drained too (`--drain-also`).
    void drain_also(const std::vector<forewarn::event_type>& types);
    /// No type is drained (`--no-drain`): taint and cordon stay as the rules say.
    void no_drain();

    /// One line for the log: each type that takes the node out, and how.
    std::string describe() const;

private:
    std::map<forewarn::event_type, node_rule> rules_;
};

}  // namespace watch::kubernetes
