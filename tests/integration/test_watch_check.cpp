// SPDX-License-Identifier: MIT
// `forewarn-watch check` as an operator runs it: against forewarn-emulator, healthy and with each
// fault between the VM and its notices (a token PUT whose answer never comes, refused, a connect
// that times out, a reset, a proxy that adds X-Forwarded-For, a clock 10 minutes off, a 503
// storm), and its surroundings (the state directory, hooks, the metrics port, the webhook).
// Each failure must be named with its fix, each exit code right. The cases tagged [agent] also
// run the Windows agent under Wine (tests/windows).
#include <forewarn/time.hpp>

#include "catch.hpp"
#include "emulator_process.hpp"
#include "loopback.hpp"
#include "watch_agent.hpp"

#include <rapidjson/document.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace test_watch_check {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn_test::emulator_process;
using namespace std::chrono_literals;
using namespace forewarn_test::agent;

namespace {

/// What one run of `check` printed, and its exit code.
struct check_run {
    int exit_code = -2;
    std::chrono::milliseconds took{0};  ///< from the start to the exit (Wine's own start included)
    strings out;
    std::string err;

    std::string text() const {
        std::string t;
        for (const auto& l : out) t += l + "\n";
        return t;
    }
    /// The line of `step` that starts with `mark` ("✔", "!", "✘", "-"), or "" when none.
    std::string line(const std::string& mark, const std::string& step) const {
        for (const auto& l : out)
            if (l.rfind(mark + " " + step + " ", 0) == 0) return l;
        return {};
    }
    bool has(const std::string& text) const { return this->text().find(text) != std::string::npos; }
};

/// `forewarn-watch check ARGS` to its end (the agent under test: this build's or the Windows one).
check_run run_check(strings args, std::chrono::seconds bound = 60s) {
    strings cmd = agent_command();
    cmd.push_back("check");
    cmd.insert(cmd.end(), args.begin(), args.end());
    const auto started = std::chrono::steady_clock::now();
    child_process p(cmd);
    check_run r;
    auto code = p.wait_exit(windows_agent() ? bound + 90s : bound);
    r.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    REQUIRE(code.has_value());  // within its bound, whatever the network did
    r.exit_code = *code;
    r.out = p.out();
    for (auto& l : r.out)  // the Windows agent ends its lines with \r\n
        if (!l.empty() && l.back() == '\r') l.pop_back();
    r.err = p.err();
    INFO(r.text() << r.err);
    return r;
}

void fault(const emulator_process& emu, const std::string& json) { post(emu, "faults", json); }

}  // namespace

TEST_CASE("check: a healthy emulator - every step is a tick and the exit is 0, for each cloud", "[check][agent]") {
    emulator_process emu;
    temp_dir dir("check-healthy");
    struct row {
        const char* cloud;
        std::string endpoint;
        strings keys;
    };
    const std::vector<row> rows = {
        {"azure", emu.base_url(), {"/metadata/scheduledevents?api-version="}},
        {"gce", emu.base_url(), {"instance/maintenance-event", "instance/preempted", "instance/upcoming-maintenance"}},
        {"aws", emu.base_url(),
         {"events/maintenance/scheduled", "spot/instance-action", "events/recommendations/rebalance",
          "autoscaling/target-lifecycle-state"}},
        {"alibaba", emu.base_url() + "/alibaba", {"instance/spot/termination-time"}},
        {"tencent", emu.base_url() + "/tencent", {"spot/termination-time"}},
    };
    for (const auto& r : rows) {
        INFO(r.cloud);
        auto c = run_check({"--cloud", r.cloud, "--endpoint", r.endpoint, "--state-file", agent_path(dir.file("state.json"))});
        INFO(c.text() << c.err);
        INFO(c.text() << c.err);
        CHECK(c.exit_code == 0);
        for (const char* step : {"cloud", "endpoint", "connect", "handshake", "identity", "notices", "state"})
            CHECK_FALSE(c.line("\u2714", step).empty());
        for (const auto& key : r.keys) CHECK(c.has(key));
        CHECK_FALSE(c.has("\u2718"));
        CHECK(c.line("\u2714", "notices").find("no maintenance announced now") != std::string::npos);
        CHECK(c.out.back() == "check: 0 failed, 0 warnings (exit 0)");
    }
    // The state file itself is never written by check.
    CHECK_FALSE(std::filesystem::exists(dir.file("state.json")));
    CHECK(std::filesystem::is_empty(dir.path));
}

TEST_CASE("check (AWS Auto Scaling): the hook, group, region and role's credentials - tags off is a "
          "failure with its fix, approvals without a hook a warning",
          "[check][agent][autoscaling]") {
    emulator_process emu;
    const strings hooked = {"--cloud", "aws", "--endpoint", emu.base_url(), "--aws-lifecycle-hook", "drain-hook"};
    post(emu, "aws/autoscaling", R"({"group":"web-asg","hook":"drain-hook","tags":true})");
    auto ok = run_check(hooked);
    CHECK(ok.exit_code == 0);
    const auto line = ok.line("\u2714", "auto scaling");
    CHECK(line.find("hook drain-hook of group web-asg (from the instance's tag) in us-east-1; role forewarn-emulator-role: "
                    "credentials readable (key ASIAFOREWARN00000001, expire ") != std::string::npos);
    CHECK(line.find("emulator-secret") == std::string::npos);  // never the secret

    post(emu, "aws/autoscaling", R"({"group":"web-asg","hook":"drain-hook","tags":false})");  // tags off
    auto no_tag = run_check(hooked);
    CHECK(no_tag.exit_code == 1);
    CHECK(no_tag.line("\u2718", "auto scaling").find("the group is not known") != std::string::npos);
    CHECK(no_tag.has("give the group with --aws-autoscaling-group NAME"));
    strings named = hooked;
    named.insert(named.end(), {"--aws-autoscaling-group", "web-asg"});
    CHECK(run_check(named).line("\u2714", "auto scaling").find("group web-asg (--aws-autoscaling-group)") != std::string::npos);

    auto unhooked = run_check({"--cloud", "aws", "--endpoint", emu.base_url(), "--approve", "own"});
    CHECK(unhooked.line("!", "approvals").find("no --aws-lifecycle-hook, so nothing can be approved") != std::string::npos);
    CHECK_FALSE(unhooked.line("-", "auto scaling").empty());
}

TEST_CASE("check (GCE performMaintenance): with --approve, the token and its scopes - no compute scope is a warning",
          "[check][agent][approve]") {
    emulator_process emu;
    const strings approving = {"--cloud", "gce", "--endpoint", emu.base_url(), "--approve", "own"};
    auto ok = run_check(approving);
    CHECK(ok.exit_code == 0);
    CHECK(ok.line("\u2714", "compute access").find("the service account's token is obtainable, scopes cloud-platform") !=
          std::string::npos);
    CHECK_FALSE(ok.has("ya29."));  // never the token
    post(emu, "gce", R"({"instance/service-accounts/default/scopes":"https://www.googleapis.com/auth/devstorage.read_only\n"})");
    auto narrow = run_check(approving);
    CHECK(narrow.line("!", "compute access").find("has no compute scope (devstorage.read_only)") != std::string::npos);
    CHECK(narrow.has("give the instance the cloud-platform (or compute) scope"));
    // Without --approve nothing is asked.
    CHECK_FALSE(run_check({"--cloud", "gce", "--endpoint", emu.base_url()}).has("compute access"));
}

TEST_CASE("check --json: one object with every step, and an announced event is listed", "[check][agent]") {
    emulator_process emu;
    post(emu, "azure/events", R"({"EventId":"E1","EventType":"Freeze","Resources":["vm0"],"notice":"10m"})");
    auto c = run_check({"--cloud", "azure", "--endpoint", emu.base_url(), "--json", "--self", "vm0", "--approve", "own"});
    INFO(c.text() << c.err);
    CHECK(c.exit_code == 0);
    REQUIRE(c.out.size() == 1);  // nothing but the object
    rapidjson::Document d;
    d.Parse(c.out[0].c_str());
    REQUIRE_FALSE(d.HasParseError());
    REQUIRE(d.IsObject());
    for (const char* k : {"check", "version", "bound_ms", "ok", "exit", "failed", "warnings", "steps"}) {
        INFO(k);
        REQUIRE(d.HasMember(k));  // the schema of docs/operators.md
    }
    REQUIRE(d["steps"].IsArray());
    for (const auto& s : d["steps"].GetArray())
        REQUIRE((s.IsObject() && s.HasMember("step") && s.HasMember("result") && s.HasMember("saw")));
    CHECK(std::string(d["check"].GetString()) == "forewarn-watch");
    CHECK(d["ok"].GetBool());
    CHECK(d["exit"].GetInt() == 0);
    CHECK(d["bound_ms"].GetInt() == 15000);
    std::map<std::string, std::string> result;
    std::string notices;
    for (const auto& s : d["steps"].GetArray()) {
        result[s["step"].GetString()] = s["result"].GetString();
        if (std::string(s["step"].GetString()) == "notices") notices = s["saw"].GetString();
    }
    CHECK(result["identity"] == "ok");
    CHECK(result["approvals"] == "ok");
    CHECK(result["clock"] == "ok");
    CHECK(notices.find("E1 (freeze, scheduled, not before ") != std::string::npos);
}

TEST_CASE("check: a token PUT whose answer never comes while a GET gets 401 - the hop-limit signature and its fix",
          "[check][agent]") {
    emulator_process emu;
    fault(emu, R"({"kind":"stall","service":"aws","method":"PUT","path":"/latest/api/token","count":-1})");
    auto c = run_check({"--cloud", "aws", "--endpoint", emu.base_url(), "--timeout", "10"});
    INFO(c.text() << c.err);
    CHECK(c.exit_code == 1);
    if (!windows_agent()) CHECK(c.took < 10s + 5s);  // its bound, with room for a loaded machine
    const auto line = c.line("\u2718", "handshake");
    CHECK(line.find("the token PUT got no answer") != std::string::npos);
    CHECK(line.find("a GET without a token got HTTP 401 at once") != std::string::npos);
    CHECK(c.has("likely cause: the hop-limit signature"));
    CHECK(c.has("fix: set the instance's HttpPutResponseHopLimit to 2 or more"));
    CHECK_FALSE(c.line("-", "notices").empty());  // not asked: the handshake failed
}

TEST_CASE("check: a token PUT whose answer never comes while a GET without a token gets 200 is no hop limit - the "
          "PUT's own failure is said",
          "[check][agent]") {
    // The hop-limit signature is the 401 of a service that wants tokens; a 200 is something else.
    emulator_process emu;
    fault(emu, R"({"kind":"stall","service":"aws","method":"PUT","path":"/latest/api/token","count":-1})");
    fault(emu, R"({"kind":"body","service":"aws","method":"GET","path":"/latest/meta-data/","count":-1,"body":"ami-id\n"})");
    auto c = run_check({"--cloud", "aws", "--endpoint", emu.base_url(), "--timeout", "10"});
    INFO(c.text() << c.err);
    CHECK(c.exit_code == 1);
    const auto line = c.line("\u2718", "handshake");
    CHECK(line.find("the token PUT failed") != std::string::npos);
    CHECK_FALSE(c.has("hop-limit"));
    CHECK_FALSE(c.has("HttpPutResponseHopLimit"));
    // check did ask the GET, and it was answered 200: the case above is the one under test.
    const auto log = control_get(emu, "requests");
    bool answered = false;
    for (const auto& r : log["requests"].GetArray())
        answered = answered || (std::string(r["method"].GetString()) == "GET" &&
                                std::string(r["target"].GetString()) == "/latest/meta-data/" && r["status"].GetInt() == 200);
    CHECK(answered);
}

TEST_CASE("check: refused, a connect that times out, a reset - each with its cause", "[check][agent]") {
    SECTION("refused") {
        const auto url = "http://127.0.0.1:" + std::to_string(forewarn_test::closed_port());
        auto c = run_check({"--cloud", "azure", "--endpoint", url});
        INFO(c.text() << c.err);
        CHECK(c.exit_code == 1);
        CHECK_FALSE(c.line("\u2718", "connect").empty());
        CHECK(c.has("likely cause: nothing listens at " + url + ": this is not an Azure VM"));
    }
    SECTION("a connect that times out (a firewall that drops)") {
        forewarn_test::full_backlog dropped;
        REQUIRE(dropped.ok());
        auto c = run_check({"--cloud", "gce", "--endpoint", dropped.url(""), "--timeout", "5"}, 40s);
        INFO(c.text() << c.err);
        CHECK(c.exit_code == 1);
        if (!windows_agent()) CHECK(c.took < 5s + 5s);  // the bound holds whatever the network does
        CHECK(c.line("\u2718", "connect").find("timed out") != std::string::npos);
        CHECK(c.has("likely cause: packets to " + dropped.url("") + " are dropped on the way"));
        std::string port = dropped.url("").substr(dropped.url("").rfind(':') + 1);
        port = port.substr(0, port.find('/'));
        CHECK(c.has("allow egress to the metadata address (127.0.0.1 port " + port + ")"));  // the rule's host and port
        CHECK(c.has("hostNetwork: true"));
    }
    SECTION("reset") {
        forewarn_test::resetting_listener resetting;
        REQUIRE(resetting.ok());
        auto c = run_check({"--cloud", "aws", "--endpoint", resetting.url("")});
        INFO(c.text() << c.err);
        CHECK(c.exit_code == 1);
        CHECK_FALSE(c.line("\u2718", "connect").empty());
        CHECK(c.has("was reset or closed before an answer"));
        CHECK(resetting.resets.get() >= 1);
    }
}

TEST_CASE("check: a proxy in the path that adds X-Forwarded-For is what the service refuses, and check says so",
          "[check][agent]") {
    emulator_process emu;
    forewarn_test::forwarding_proxy proxy(emu.port());
    for (const char* cloud : {"azure", "gce", "aws"}) {
        INFO(cloud);
        auto c = run_check({"--cloud", cloud, "--endpoint", proxy.url("")});
        INFO(c.text() << c.err);
        CHECK(c.exit_code == 1);
        CHECK_FALSE(c.line("\u2718", "handshake").empty());
        CHECK(c.has("likely cause: a proxy in the path adds X-Forwarded-For"));
    }
    CHECK(proxy.forwarded.get() >= 3);  // the refusals came from the service behind the proxy
}

TEST_CASE("check: the service's clock 10 minutes off is a failure - a 503 storm says throttling and what the agent does",
          "[check][agent]") {
    SECTION("clock") {
        temp_dir dir("check-clock");
        const auto ahead = std::chrono::system_clock::now() + 10min;
        {
            std::ofstream f(dir.file("ahead.json"));
            f << R"({"wall_epoch":")" << forewarn::format_iso8601(ahead) << R"("})";
        }
        emulator_process emu({"--scenario", dir.file("ahead.json")});
        auto c = run_check({"--cloud", "azure", "--endpoint", emu.base_url()});
        INFO(c.text() << c.err);
        CHECK(c.exit_code == 1);
        const auto line = c.line("\u2718", "clock");
        CHECK(line.find("ahead of this VM's clock") != std::string::npos);
        CHECK(c.has("fix: sync the clock"));
        CHECK(c.has("the cloud's own time source: the host's PTP clock"));  // azure::facts' time_source
    }
    SECTION("503 storm") {
        emulator_process emu;
        fault(emu, R"({"kind":"status","status":503,"service":"gce","count":-1})");
        auto c = run_check({"--cloud", "gce", "--endpoint", emu.base_url()});
        INFO(c.text() << c.err);
        CHECK(c.exit_code == 1);
        CHECK_FALSE(c.line("\u2718", "handshake").empty());
        CHECK(c.has("likely cause: the service keeps answering 503: it is throttling"));
        CHECK(c.has("forewarn-watch itself retries with a growing pause"));
    }
}

TEST_CASE("check: the service's clock more than 30 s off is a warning, more than 300 s a failure - on each side of "
          "each limit",
          "[check][agent]") {
    // The emulator's wall clock runs ahead by what it is advanced. It starts at a whole second and
    // its Date has whole seconds, so check sees the advance or up to 2 s less: an advance of L s
    // is at most L s off (below the limit L), one of L + 3 s more than L s (above it). Between
    // them every skew check reports must be judged by the limits, whatever its exact second.
    // Azure's limit of 5 requests a second is off: the runs follow each other closely.
    temp_dir dir("check-clock-limits");
    {
        std::ofstream f(dir.file("unlimited.json"));
        f << R"({"rate_limit":0})";
    }
    emulator_process emu({"--scenario", dir.file("unlimited.json")});
    long long advanced = 0;
    std::vector<long long> seen;
    auto run_at = [&](long long total) {
        post(emu, "advance", R"({"by":")" + std::to_string(total - advanced) + R"(s"})");
        advanced = total;
        auto c = run_check({"--cloud", "azure", "--endpoint", emu.base_url(), "--json"});
        INFO(c.text() << c.err);
        REQUIRE(c.out.size() == 1);
        rapidjson::Document d;
        d.Parse(c.out[0].c_str());
        REQUIRE_FALSE(d.HasParseError());
        std::string result, saw;
        for (const auto& step : d["steps"].GetArray())
            if (std::string(step["step"].GetString()) == "clock") {
                result = step["result"].GetString();
                saw = step["saw"].GetString();
            }
        INFO("advanced " << total << " s: " << saw);
        const auto at = saw.find(" s ahead of this VM's clock");
        REQUIRE(at != std::string::npos);
        const auto from = saw.rfind(' ', at - 1) + 1;
        const long long off = std::stoll(saw.substr(from, at - from));
        REQUIRE(off <= total);
        REQUIRE(off >= total - 5);  // 2 s, and room for a slow answer
        seen.push_back(off);
        CHECK(result == (off > 300 ? "fail" : off > 30 ? "warn" : "ok"));
        return off;
    };
    CHECK(run_at(30) <= 30);   // at most 30 s off: ok
    run_at(31);
    run_at(32);
    CHECK(run_at(33) > 30);    // more than 30 s: a warning
    CHECK(run_at(300) <= 300);  // at most 300 s off: still a warning
    run_at(301);
    run_at(302);
    CHECK(run_at(303) > 300);  // more than 300 s: a failure
}

TEST_CASE("check: the surroundings - a missing hook, a busy metrics port, an unreachable webhook - usage errors exit 2",
          "[check][agent]") {
    emulator_process emu;
    temp_dir dir("check-around");
    forewarn_test::loopback_server busy([](httplib::Server&, forewarn_test::loopback_server&) {});
    const auto webhook = "http://127.0.0.1:" + std::to_string(forewarn_test::closed_port()) + "/hook";
    auto c = run_check({"--cloud", "azure", "--endpoint", emu.base_url(), "--on-prepare", agent_path(dir.file("nope.sh")) + " --drain",
                        "--metrics-listen", "127.0.0.1:" + std::to_string(busy.port()), "--webhook", webhook});
    INFO(c.text() << c.err);
    CHECK(c.exit_code == 1);
    CHECK(c.line("\u2718", "hook").find("nope.sh does not exist") != std::string::npos);
    CHECK(c.line("!", "metrics").find("127.0.0.1:" + std::to_string(busy.port())) != std::string::npos);
    CHECK_FALSE(c.line("\u2718", "webhook").empty());
    CHECK(c.line("\u2714", "notices").find("no maintenance") != std::string::npos);  // the chain itself is fine

    auto help = run_check({"--help"});
    CHECK(help.exit_code == 0);
    CHECK(help.has("forewarn-watch check [options] [--timeout SECONDS]"));
    CHECK(run_check({"--cloud", "azure", "--timeout", "0"}).exit_code == 2);
    CHECK(run_check({"--cloud", "nowhere"}).exit_code == 2);
    CHECK(run_check({"--cloud", "azure", "--endpoint", "ftp://x"}).exit_code == 2);
    auto auto_usage = run_check({"--endpoint", "ftp://x", "--json"});  // --cloud auto: the probes refuse it
    CHECK(auto_usage.exit_code == 2);
    REQUIRE(auto_usage.out.size() == 1);
    CHECK(auto_usage.out[0].find("\"exit\":2") != std::string::npos);  // the report says the exit code it ends with
}

TEST_CASE("check: --approve with /readyz or --ready-file and no --lb-drain is a warning, and --lb-drain is reported",
          "[check][agent][readiness]") {
    emulator_process emu;
    temp_dir dir("check-lb");
    const strings base{"--cloud", "azure", "--endpoint", emu.base_url(), "--self", "WestNO_0", "--approve", "own"};
    auto with = [&](strings more) {
        strings args = base;
        args.insert(args.end(), more.begin(), more.end());
        return run_check(args);
    };
    auto readyz = with({"--metrics-listen", "127.0.0.1:0"});
    CHECK(readyz.line("!", "load balancer").find("/readyz (--metrics-listen) and --lb-drain 0") != std::string::npos);
    CHECK(readyz.exit_code == 0);  // a warning: the exit says only failures
    auto file = with({"--ready-file", agent_path(dir.file("ready"))});
    CHECK(file.line("!", "load balancer").find("--ready-file and --lb-drain 0") != std::string::npos);
    auto drained = with({"--metrics-listen", "127.0.0.1:0", "--lb-drain", "3"});
    CHECK(drained.line("\u2714", "load balancer").find("--lb-drain 3 s") != std::string::npos);
    CHECK(with({}).line("!", "load balancer").empty());  // nothing tells a load balancer: nothing to say
    CHECK(run_check({"--cloud", "azure", "--lb-drain", "soon"}).exit_code == 2);
}

TEST_CASE("check: a state directory the service's user cannot write is a failure there, though root passes",
          "[check]") {
    emulator_process emu;
    temp_dir dir("check-sandbox");
    const auto state_dir = dir.path / "state";
    std::filesystem::create_directories(state_dir);
    std::filesystem::permissions(state_dir, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                                std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                                std::filesystem::perms::others_exec);
    std::filesystem::permissions(dir.path, std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add);
    const strings flags = {"--cloud", "azure", "--endpoint", emu.base_url(), "--state-file", (state_dir / "state.json").string()};
    if (::geteuid() == 0) {
        auto as_root = run_check(flags);
        INFO(as_root.text() << as_root.err);
        CHECK(as_root.exit_code == 0);
        CHECK_FALSE(as_root.line("\u2714", "state").empty());
        // The same, as the service's user would run it (nobody: what the unit's User= gives).
        strings sandboxed = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", FOREWARN_WATCH_PATH, "check"};
        sandboxed.insert(sandboxed.end(), flags.begin(), flags.end());
        child_process p(sandboxed);
        auto code = p.wait_exit(60s);
        REQUIRE(code.has_value());
        std::string out;
        for (const auto& l : p.out()) out += l + "\n";
        INFO(out << p.err());
        CHECK(*code == 1);
        CHECK(out.find("\u2718 state") != std::string::npos);
        CHECK(out.find("cannot write in " + state_dir.string()) != std::string::npos);
        CHECK(out.find("\u2714 notices") != std::string::npos);  // the rest of the chain passes as that user
    } else {
        std::filesystem::permissions(state_dir, std::filesystem::perms::owner_write, std::filesystem::perm_options::remove);
        auto c = run_check(flags);
        INFO(c.text() << c.err);
        CHECK(c.exit_code == 1);
        CHECK_FALSE(c.line("\u2718", "state").empty());
    }
}

}  // namespace test_watch_check
