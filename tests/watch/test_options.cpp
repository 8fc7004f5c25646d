// SPDX-License-Identifier: MIT
// forewarn-watch's option table at its own layer (tools/watch/options.hpp): the two spellings of a
// value, the environment under the command line, switches, every refusal an exit code 2, the
// flags that go together, and the table itself (every flag's environment name, no name twice).
// What the program prints for them is tests/integration/test_watch.cpp's.
#include "options.hpp"

#include "catch.hpp"
#include "scoped_env.hpp"
#include "temp_dir.hpp"

#include <chrono>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace test_options {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using namespace std::chrono_literals;

namespace {

// parse() over a command line (the program's name first); the settings it left.
struct parsed {
    std::optional<int> exit;
    watch::settings s;
};
parsed parse(std::vector<std::string> args) {
    args.insert(args.begin(), "forewarn-watch");
    parsed p;
    p.exit = watch::parse(args, p.s);
    return p;
}

}  // namespace

TEST_CASE("options: --name VALUE and --name=VALUE alike, a switch, seconds, the approval scope and type lists") {
    const auto p = parse({"--cloud", "gce", "--endpoint=http://127.0.0.1:8080", "--json", "--approve=own", "--hook-deadline", "30",
                          "--only", "reboot,freeze", "--on-prepare=echo a=b"});
    REQUIRE_FALSE(p.exit);
    CHECK(p.s.cloud == "gce");
    CHECK(p.s.endpoint == "http://127.0.0.1:8080");
    CHECK(p.s.json);
    CHECK(p.s.approve == forewarn::approval_scope::own);
    CHECK(p.s.hook_deadline == 30s);
    CHECK(p.s.only == std::set<forewarn::event_type>{forewarn::event_type::reboot, forewarn::event_type::freeze});
    CHECK(p.s.on_prepare == "echo a=b");  // the value holds '=': only the first one splits
    // The defaults, where nothing was said.
    const auto none = parse({});
    REQUIRE_FALSE(none.exit);
    CHECK(none.s.cloud == "auto");
    CHECK(none.s.approve == forewarn::approval_scope::never);
    CHECK(none.s.hook_timeout == 600s);
    CHECK(none.s.aws_heartbeat == 300s);
}

TEST_CASE("options: FOREWARN_ variables set what the flags do, and the command line wins over them") {
    scoped_env cloud("FOREWARN_CLOUD", "aws");
    scoped_env json("FOREWARN_JSON", "yes");
    scoped_env interval("FOREWARN_HOOK_TIMEOUT", "42");
    const auto from_env = parse({});
    REQUIRE_FALSE(from_env.exit);
    CHECK(from_env.s.cloud == "aws");
    CHECK(from_env.s.json);
    CHECK(from_env.s.hook_timeout == 42s);
    const auto both = parse({"--cloud", "azure"});
    REQUIRE_FALSE(both.exit);
    CHECK(both.s.cloud == "azure");
    {
        scoped_env off("FOREWARN_JSON", "0");
        CHECK_FALSE(parse({}).s.json);
    }
    scoped_env bad("FOREWARN_JSON", "maybe");  // a switch is 1/true/yes or 0/false/no
    CHECK(parse({}).exit == std::optional<int>(2));
}

TEST_CASE("options: every mistake is exit code 2 - unknown, a missing value, a switch given one, a bad value, "
          "flags that go together") {
    CHECK(parse({"--nope"}).exit == std::optional<int>(2));
    CHECK(parse({"-x"}).exit == std::optional<int>(2));
    CHECK(parse({"--endpoint"}).exit == std::optional<int>(2));       // its value missing
    CHECK(parse({"--json=1"}).exit == std::optional<int>(2));         // a switch takes none
    CHECK(parse({"--cloud", "mars"}).exit == std::optional<int>(2));
    CHECK(parse({"--approve", "some"}).exit == std::optional<int>(2));
    CHECK(parse({"--hook-timeout", "-5"}).exit == std::optional<int>(2));
    CHECK(parse({"--hook-timeout", "99999999999999999999"}).exit == std::optional<int>(2));
    CHECK(parse({"--only", "reboot,nonsense"}).exit == std::optional<int>(2));
    CHECK(parse({"--etcd", "http://127.0.0.1:2379"}).exit == std::optional<int>(2));  // without --fleet-group
    CHECK(parse({"--etcd-user", "u"}).exit == std::optional<int>(2));                 // without --etcd
    {
        forewarn_test::temp_dir dir("options-template");
        const std::string tpl = dir.file("t.json");
        std::ofstream(tpl) << R"({"text":"{{id}}"})";
        CHECK(parse({"--webhook-template", tpl}).exit == std::optional<int>(2));  // without --webhook
        const auto both = parse({"--webhook", "http://127.0.0.1:9/hook", "--webhook-template", tpl});
        REQUIRE_FALSE(both.exit);
        CHECK_FALSE(both.s.webhook_body.empty());  // read and parsed at start
    }
    CHECK(parse({"--etcd", "http://127.0.0.1:2379", "--fleet-group", "g", "--etcd-cert", "c.pem"}).exit ==
          std::optional<int>(2));  // a certificate without its key
    {
        scoped_env no_node("NODE_NAME", nullptr);
        CHECK(parse({"--kubernetes"}).exit == std::optional<int>(2));  // no node name anywhere
    }
    scoped_env node("NODE_NAME", "node-7");
    const auto k = parse({"--kubernetes"});
    REQUIRE_FALSE(k.exit);
    CHECK(k.s.node_name == "node-7");  // the downward API's variable
    CHECK(parse({"--etcd", "http://127.0.0.1:2379", "--fleet-group", "g"}).exit == std::nullopt);
}

TEST_CASE("options: the table - each flag once, lower-case words and dashes, its environment name, help for every one") {
    std::set<std::string> names, envs;
    for (const auto& f : watch::flags()) {
        const std::string name = f.name;
        INFO(name);
        CHECK(names.insert(name).second);
        CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos);
        CHECK(std::string(f.help).size() > 10);
        CHECK(f.apply);
        const std::string env = watch::env_name(f.name);
        CHECK(env.rfind("FOREWARN_", 0) == 0);
        CHECK(env.find('-') == std::string::npos);
        CHECK(envs.insert(env).second);
    }
    CHECK(watch::env_name("aws-heartbeat") == "FOREWARN_AWS_HEARTBEAT");
    CHECK(names.count("approve"));
    CHECK(names.count("kubernetes"));
    CHECK_FALSE(names.count("etcd-password"));  // a secret only from the environment
    CHECK_FALSE(names.count("webhook-authorization"));
}

TEST_CASE("options: a cloud's own rows, the shared setters, and the clouds in a sentence") {
    // The rows cloud_flags.cpp gives the table, set as the clients read them.
    const auto a = parse({"--aws-lifecycle-hook", "drain", "--aws-heartbeat", "30", "--aws-api-endpoint", "https://vpce.example",
                          "--gce-api-endpoint", "http://127.0.0.1:9/compute"});
    REQUIRE_FALSE(a.exit);
    CHECK(a.s.aws_lifecycle_hook == "drain");
    CHECK(a.s.aws_heartbeat == 30s);
    CHECK(a.s.aws_api_endpoint == "https://vpce.example");
    CHECK(a.s.gce_api_endpoint == "http://127.0.0.1:9/compute");
    CHECK(parse({"--aws-api-endpoint", "ftp://vpce.example"}).exit == std::optional<int>(2));  // url_into
    CHECK(parse({"--gce-api-endpoint", "compute.example"}).exit == std::optional<int>(2));
    CHECK(parse({"--aws-heartbeat", "0"}).exit == std::optional<int>(2));
    // positive_count: above 0, into each field's own type.
    const auto n = parse({"--interval", "250", "--exit-after", "3", "--etcd", "http://127.0.0.1:2379", "--fleet-group", "g",
                          "--fleet-max", "2"});
    REQUIRE_FALSE(n.exit);
    CHECK(n.s.interval == std::optional<std::chrono::milliseconds>(250ms));
    CHECK(n.s.exit_after == std::optional<long long>(3));
    CHECK(n.s.fleet_max == 2);
    for (const char* zero : {"--interval", "--exit-after", "--fleet-max"}) {
        INFO(zero);
        CHECK(parse({zero, "0"}).exit == std::optional<int>(2));
    }
    // The optional seconds: --grace 0 is a value, --approve-freeze-under 0 is not.
    CHECK(parse({"--grace", "0"}).s.grace == std::optional<std::chrono::seconds>(0s));
    CHECK(parse({"--approve-freeze-under", "0"}).exit == std::optional<int>(2));
    CHECK(parse({"--approve-freeze-under", "9"}).s.approve_freeze_under == std::optional<std::chrono::seconds>(9s));
    // Sentences written from forewarn::clouds, in its order.
    CHECK(watch::clouds_in_words(&forewarn::cloud_facts::name, nullptr) == "azure, gce, aws, alibaba, tencent");
    CHECK(watch::clouds_in_words(&forewarn::cloud_facts::display_name, "or") ==
          "Azure, GCE, AWS, Alibaba Cloud or Tencent Cloud");
}

TEST_CASE("options: the defaults --help states are the ones the settings and the Kubernetes room start from") {
    const watch::settings s;
    auto help_of = [](const std::string& name) {
        for (const auto& f : watch::flags())
            if (name == f.name) return std::string(f.help);
        return std::string();
    };
    const std::pair<const char*, std::chrono::seconds> stated[] = {
        {"hook-deadline", watch::defaults::hook_deadline}, {"hook-timeout", watch::defaults::hook_timeout},
        {"drain-lead", watch::defaults::drain_lead},       {"drain-margin", watch::defaults::drain_margin},
        {"drain-timeout", watch::defaults::drain_timeout}};
    for (const auto& [name, value] : stated) {
        INFO(name);
        CHECK(help_of(name).find("default " + std::to_string(value.count())) != std::string::npos);
    }
    CHECK(s.hook_deadline == watch::defaults::hook_deadline);
    CHECK(s.hook_timeout == watch::defaults::hook_timeout);
    CHECK(s.drain_lead == watch::defaults::drain_lead);
    CHECK(s.drain_margin == watch::defaults::drain_margin);
    CHECK(s.drain_timeout == watch::defaults::drain_timeout);
}

}  // namespace test_options
