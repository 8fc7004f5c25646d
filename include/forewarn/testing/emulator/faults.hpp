// SPDX-License-Identifier: MIT
#pragma once

// Faults: which requests a fault matches (service, path, method, count or a seeded fraction), and
// how it turns the answer a service would have given into a directive for the front end.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/detail/strings.hpp>
#include <forewarn/testing/emulator/types.hpp>
#include <forewarn/transport.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

/// splitmix64: a tiny deterministic generator (fractional faults, generated EventIds).
struct emulator_splitmix64 {
    std::uint64_t state;
    std::uint64_t next() noexcept {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, 1).
    double unit() noexcept { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

/// The faults in force. Not thread-safe: the engine calls it with its lock held.
class emulator_faults {
public:
    /// Forgets every fault; fractional draws start over from `seed`.
    void restart(std::uint64_t seed) {
        list_.clear();
        rng_ = emulator_splitmix64{seed};
    }
    void add(testing::fault_spec f) {
        record r;
        r.remaining = f.count;
        r.spec = std::move(f);
        list_.push_back(std::move(r));
    }
    void clear() noexcept { list_.clear(); }

    /// "status 503 on azure for 2 request(s)": the log line of a new fault.
    static std::string describe(const testing::fault_spec& f) {
        using kind = testing::fault_spec::kind;
        return std::string(to_string(f.what)) +
               (f.what == kind::status || f.what == kind::body ? " " + std::to_string(f.status) : "") + " on " + f.service +
               (f.path.empty() ? "" : " " + f.path) + " for " +
               (f.count < 0 ? std::string("every") : std::to_string(f.count)) + " request(s)" +
               (f.fraction < 1 ? " at fraction " + std::to_string(f.fraction) : "");
    }

    /// The first fault matching this request of `service`, with one unit of it consumed.
    std::optional<testing::fault_spec> take(http_method method, const std::string& path, std::string_view service) {
        for (auto it = list_.begin(); it != list_.end(); ++it) {
            const testing::fault_spec& f = it->spec;
            if (f.service != "any" && f.service != service) continue;
            if (!f.path.empty() && path.find(f.path) == std::string::npos) continue;
            if (!f.method.empty() && !iequals(f.method, to_string(method))) continue;
            if (f.fraction < 1 && !(rng_.unit() < f.fraction)) continue;
            testing::fault_spec hit = f;
            ++it->hits;
            if (it->remaining > 0 && --it->remaining == 0) list_.erase(it);
            return hit;
        }
        return std::nullopt;
    }

    /// Turns a fault into the directive, around the answer the service would have given.
    static void apply(const testing::fault_spec& f, testing::emulated_response& r, testing::logged_request& entry) {
        using kind = testing::fault_spec::kind;
        using action = testing::emulated_response::action;
        entry.fault = std::string(to_string(f.what));
        switch (f.what) {
        case kind::status:
            entry.fault += " " + std::to_string(f.status);
            r.status = f.status;
            if (r.header("Metadata-Flavor")) {
                r.body = std::to_string(f.status) + " emulated fault\n";
            } else {
                json_writer w;
                w.begin_object();
                w.key("error");
                w.string("emulated fault " + std::to_string(f.status));
                w.end_object();
                r.body = w.str();
            }
            break;
        case kind::delay: r.delay = f.duration; break;
        case kind::stall:
            r.what = action::stall;
            r.delay = f.duration.count() > 0 ? f.duration : (testing::scenario_duration::max)();
            r.body.clear();
            break;
        case kind::empty_body:
            r.status = 200;
            r.body.clear();
            break;
        case kind::truncated_json:
            r.body.resize(f.bytes > 0 ? (std::min)(f.bytes, r.body.size()) : r.body.size() / 2);
            break;
        case kind::malformed_json:
            r.status = 200;
            r.body = "{\"DocumentIncarnation\": 7, \"Events\": [{\"EventId\": \"oops\", }";
            break;
        case kind::close_mid_body:
            r.what = action::close_mid_body;
            r.close_after = f.bytes > 0 ? (std::min)(f.bytes, r.body.size() > 0 ? r.body.size() - 1 : 0) : r.body.size() / 2;
            break;
        case kind::body:
            r.status = f.status;
            r.body = f.body;
            break;
        }
    }

    /// The "faults" member of GET /emulator/v1/state.
    void write_state(json_writer& w) const {
        w.key("faults");
        w.begin_array();
        for (const auto& f : list_) {
            w.begin_object();
            w.key("kind");
            w.string(to_string(f.spec.what));
            w.key("service");
            w.string(f.spec.service);
            w.key("remaining");
            w.int64(f.remaining);
            w.key("hits");
            w.uint64(f.hits);
            w.end_object();
        }
        w.end_array();
    }

private:
    struct record {
        testing::fault_spec spec;
        std::int64_t remaining = 1;
        std::uint64_t hits = 0;
    };
    std::vector<record> list_;
    emulator_splitmix64 rng_{1};
};

}  // namespace detail
FOREWARN_END_NAMESPACE
