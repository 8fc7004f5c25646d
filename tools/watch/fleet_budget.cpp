// SPDX-License-Identifier: MIT
// The fleet budget from the settings (fleet_budget.hpp).
#include "fleet_budget.hpp"

#include <forewarn/etcd/maintenance_budget.hpp>

#include "etcd_options.hpp"
#include "json.hpp"
#include "lines.hpp"
#include "platform/etcd_transport.hpp"

#include <utility>

namespace watch {

forewarn::result<std::shared_ptr<forewarn::approval_coordinator>> make_fleet_budget(const settings& s, const std::string& cloud,
                                                                                    metrics& counters,
                                                                                    std::function<void(const std::string&)> print) {
    forewarn::etcd::budget_options b;
    b.etcd = etcd_client_options(s);
    b.group = s.fleet_group;
    b.max_in_maintenance = static_cast<std::size_t>(s.fleet_max);
    b.lease_ttl = s.fleet_ttl;
    b.settle_time = s.fleet_settle;
    counters.fleet_slot(s.fleet_group, "none");
    b.on_slot_change = [&counters, json = s.json, cloud, print = std::move(print)](const forewarn::slot_change& c) {
        counters.fleet_slot(c.group, forewarn::to_string(c.to));
        log_line("fleet " + c.group + ": slot " + std::string(forewarn::to_string(c.from)) + " -> " +
                 std::string(forewarn::to_string(c.to)) + (c.event_id.empty() ? std::string() : " for " + c.event_id));
        if (!json) return;
        print(json_object()
                  .string("cloud", cloud)
                  .string("fleet_group", c.group)
                  .string("member", c.member)
                  .string("slot", forewarn::to_string(c.to))
                  .string("was", forewarn::to_string(c.from))
                  .string("event_id", c.event_id)
                  .str());
    };
    auto transport = etcd_transport(s.etcd_ca, s.etcd_cert, s.etcd_key);
    if (!transport) return forewarn::error(forewarn::errc::invalid_argument, transport.error().describe());
    auto budget = std::make_shared<forewarn::etcd::maintenance_budget>(b, std::move(*transport));
    if (auto v = budget->validate(); !v) return forewarn::error(forewarn::errc::invalid_argument, v.error().describe());
    if (s.approve == forewarn::approval_scope::never)
        log_line("fleet " + s.fleet_group + ": --approve never: the budget only counts events the platform starts");
    return std::shared_ptr<forewarn::approval_coordinator>(std::move(budget));
}

}  // namespace watch
