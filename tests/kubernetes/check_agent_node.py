#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""forewarn-watch --kubeconfig against a real kube-apiserver: what an Azure event does to the Node.

Run under tests/kubernetes/control_plane.py (it gives the server, CA, tokens and kubeconfigs in
FOREWARN_TEST_KUBE_* variables). forewarn-emulator plays Azure; the agent uses the agent's token,
bound to examples/kubernetes/forewarn-watch.yaml's own ClusterRole, so the manifest's RBAC is what
is tested. Each case waits on the node itself, with a bound:
- a Reboot 10 minutes ahead: Event, condition, label, taint and cordon (recorded as forewarn's);
  over: all of it gone, and an Event says so;
- a node an administrator cordoned: the taint comes and goes, the cordon stays;
- a Freeze: Event, condition and label, no taint, no cordon;
- a Reboot two hours ahead under --drain-lead 900: condition and label, no taint or cordon yet
  (checked once a later event's announcement is done: the agent's writes are in order);
- --approve own: that Reboot is not approved while a Freeze after it is; one 10 minutes ahead is,
  once the node is tainted and cordoned;
- check: without a role each missing permission is named with the fix; with it, every step passes;
- --kubernetes-rules: a Freeze tainted PreferNoSchedule and not cordoned, as a file says; a file
  with a mistake stops the agent at start (exit 2), naming it;
- the token file (kubeconfig tokenFile) replaced while the agent runs: refused (401) before, the
  node written after the swap;
- an API server that cannot be reached: /healthz names the failure and stays 200.

usage: check_agent_node.py FOREWARN_WATCH FOREWARN_EMULATOR
"""
import json
import os
import subprocess
import sys
import time

try:
    import yaml
except ImportError:
    print("SKIPPED: python3-yaml is missing (./quickstart deps installs it)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kube  # noqa: E402
from kube import api, condition, node, ours  # noqa: E402

WATCH, EMULATOR = sys.argv[1], sys.argv[2]
MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "kubernetes", "forewarn-watch.yaml")
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what, flush=True)
    if not cond:
        failures.append(what)


def emulator(method, path, body=None):
    return api(method, "/emulator/v1/" + path, body, base=EMU)


def events(name):
    return [reason for reason, _, _ in kube.events(name)]


def wait_for(what, test, seconds=30):
    end = time.time() + seconds
    while time.time() < end:
        if test():
            return True
        if agent.poll() is not None:
            break
        time.sleep(0.2)
    check(False, what + " (waited %d s)" % seconds)
    return False


def start_agent(node_name, *extra):
    return subprocess.Popen([WATCH, "--cloud", "azure", "--endpoint", EMU, "--self", "vm-1", "--interval", "200",
                             "--kubeconfig", os.environ["FOREWARN_TEST_KUBECONFIG"], "--node-name", node_name] + list(extra),
                            stdout=subprocess.DEVNULL, stderr=sys.stderr, env=dict(os.environ, NODE_NAME=""))


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        check(False, "the agent stops within 15 s of SIGTERM")


def check_run(node_name):
    """forewarn-watch check's Kubernetes steps, by name: (result, saw, fix)."""
    p = subprocess.run([WATCH, "check", "--cloud", "azure", "--endpoint", EMU, "--self", "vm-1", "--json",
                        "--kubeconfig", os.environ["FOREWARN_TEST_KUBECONFIG"], "--node-name", node_name],
                       stdout=subprocess.PIPE, stderr=sys.stderr, text=True, timeout=60)
    report = json.loads(p.stdout)
    return {s["step"]: (s["result"], s["saw"], s.get("fix", "")) for s in report["steps"] if s["step"].startswith("kubernetes")}


emu = subprocess.Popen([EMULATOR, "--listen", "127.0.0.1:0", "--quiet", "--exit-with-parent", "--rate-limit", "0"],
                       stdout=subprocess.PIPE, text=True)
EMU = emu.stdout.readline().split()[-1]
agent = None

# --- check, before the agent's account has any role ------------------------------------------------
assert api("POST", "/api/v1/nodes", {"metadata": {"name": "n-check"}})[0] == 201
steps = check_run("n-check")
check(steps.get("kubernetes", ("",))[0] == "ok", "check without a role: the API server reached, TLS verified, the token accepted")
check(steps.get("kubernetes node", ("",))[0] == "fail" and "ClusterRole" in steps["kubernetes node"][2],
      "check without a role: the node cannot be read, and the fix names the ClusterRole")
access = steps.get("kubernetes access", ("", "", ""))
check(access[0] == "fail" and "get nodes" in access[1] and "create events in namespace default" in access[1],
      "check without a role: each missing permission named")
steps = check_run("no-such-node")
check(steps.get("kubernetes node", ("", "", ""))[0] == "fail", "check: a node name that does not exist fails")

# --- the manifest's own ClusterRole and binding, and the nodes ----------------------------------------
# (the fixture's agent token is the user system:serviceaccount:forewarn:forewarn-watch, which the
# binding's ServiceAccount subject names)
with open(MANIFEST) as f:
    manifest = {d["kind"]: d for d in yaml.safe_load_all(f) if d}
# First the role without its pods/eviction rule: check names that one permission and the fix.
partial = dict(manifest["ClusterRole"])
partial["rules"] = [r for r in manifest["ClusterRole"]["rules"] if "pods/eviction" not in r["resources"]]
assert len(partial["rules"]) == len(manifest["ClusterRole"]["rules"]) - 1
for kind, path, body in (("ClusterRole", "clusterroles", partial),
                         ("ClusterRoleBinding", "clusterrolebindings", manifest["ClusterRoleBinding"])):
    status, answer = api("POST", "/apis/rbac.authorization.k8s.io/v1/" + path, body)
    assert status == 201, (kind, status, answer)


def access_when(test, seconds=10):
    """check's access step, asked again until `test` holds (RBAC's authorizer reads roles from its own watch)."""
    end = time.time() + seconds
    while True:
        step = check_run("n-check").get("kubernetes access", ("", "", ""))
        if test(step) or time.time() > end:
            return step
        time.sleep(0.2)


access = access_when(lambda a: "create pods/eviction" in a[1] and "get nodes" not in a[1])
check(access[0] == "fail" and "create pods/eviction" in access[1] and "get nodes" not in access[1] and "ClusterRole" in access[2],
      "check with a role without pods/eviction: that permission named, with the fix (%s)" % (access,))
status, answer = api("PUT", "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + manifest["ClusterRole"]["metadata"]["name"],
                     manifest["ClusterRole"])
assert status == 200, (status, answer)
access_when(lambda a: a[0] == "ok")
for name in ("n-reboot", "n-admin", "n-freeze", "n-ahead", "n-approve", "n-rules", "n-token"):
    assert api("POST", "/api/v1/nodes", {"metadata": {"name": name}})[0] == 201
assert api("PATCH", "/api/v1/nodes/n-admin", {"spec": {"unschedulable": True}}, "application/merge-patch+json")[0] == 200

steps = check_run("n-check")
check(all(steps.get(k, ("",))[0] == "ok" for k in ("kubernetes", "kubernetes node", "kubernetes access")),
      "check with the role: every Kubernetes step passes (%s)" % steps)
try:
    # --- a Reboot ten minutes ahead: everything, then nothing --------------------------------------
    agent = start_agent("n-reboot")
    status, created = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-1"], "notice": "10m"})
    assert status == 200, (status, created)
    rid = created["EventId"]
    wait_for("Reboot: tainted and cordoned", lambda: ours(node("n-reboot")) and node("n-reboot")["spec"].get("unschedulable"))
    n = node("n-reboot")
    check("MaintenanceScheduled" in events("n-reboot"), "Reboot: an Event MaintenanceScheduled")
    c = condition(n, "MaintenancePlanned")
    check(c is not None and c["status"] == "True" and c["reason"] == "Reboot", "Reboot: MaintenancePlanned True, reason Reboot")
    check(c is not None and rid in c["message"], "Reboot: the condition's message names the event")
    label = n["metadata"].get("labels", {}).get("forewarn/scheduled-maintenance-time", "")
    check(label.isdigit() and abs(int(label) - (time.time() + 600)) < 30, "Reboot: the label is NotBefore in Unix seconds")
    check([(t["value"], t["effect"]) for t in ours(n)] == [("reboot", "NoSchedule")], "Reboot: one taint forewarn/maintenance=reboot:NoSchedule")
    check(n["metadata"].get("annotations", {}).get("forewarn/cordoned-for") == rid, "Reboot: the cordon recorded as forewarn's")

    assert emulator("POST", "azure/events/%s/complete" % rid)[0] == 200
    wait_for("Reboot over: MaintenanceOver", lambda: "MaintenanceOver" in events("n-reboot"))
    n = node("n-reboot")
    check(not ours(n), "over: the taint removed")
    check(not n["spec"].get("unschedulable"), "over: uncordoned")
    check("forewarn/cordoned-for" not in n["metadata"].get("annotations", {}), "over: the record removed")
    check("forewarn/scheduled-maintenance-time" not in n["metadata"].get("labels", {}), "over: the label removed")
    c = condition(n, "MaintenancePlanned")
    check(c is not None and c["status"] == "False" and c["reason"] == "MaintenanceOver", "over: MaintenancePlanned False, MaintenanceOver")
    stop(agent)

    # --- an administrator's cordon stays ------------------------------------------------------------
    agent = start_agent("n-admin")
    status, created = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-1"], "notice": "10m"})
    wait_for("admin's node: tainted", lambda: ours(node("n-admin")))
    check("forewarn/cordoned-for" not in node("n-admin")["metadata"].get("annotations", {}), "admin's node: the cordon is not recorded as forewarn's")
    assert emulator("POST", "azure/events/%s/complete" % created["EventId"])[0] == 200
    wait_for("admin's node: over", lambda: "MaintenanceOver" in events("n-admin"))
    n = node("n-admin")
    check(not ours(n), "admin's node: the taint removed")
    check(n["spec"].get("unschedulable") is True, "admin's node: still cordoned after the event")
    stop(agent)

    # --- a Freeze: no taint, no cordon ----------------------------------------------------------------
    agent = start_agent("n-freeze")
    status, created = emulator("POST", "azure/events", {"EventType": "Freeze", "Resources": ["vm-1"], "notice": "10m"})
    fid = created["EventId"]
    wait_for("Freeze: labelled", lambda: "forewarn/scheduled-maintenance-time" in node("n-freeze")["metadata"].get("labels", {}))
    # A Reboot after it: once its taint is there, everything the Freeze queued is done.
    status, created = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-1"], "notice": "10m"})
    wait_for("Freeze, then a Reboot: tainted", lambda: ours(node("n-freeze")))
    n = node("n-freeze")
    check([t["value"] for t in ours(n)] == ["reboot"], "Freeze: no taint of its own (the Reboot's only)")
    check(events("n-freeze").count("MaintenanceScheduled") == 2, "Freeze: its own Event")
    for eid in (created["EventId"], fid):
        emulator("POST", "azure/events/%s/complete" % eid)
    wait_for("Freeze and Reboot over: untainted", lambda: events("n-freeze").count("MaintenanceOver") == 2)
    stop(agent)

    # --- two hours ahead: no taint before --drain-lead ------------------------------------------------
    agent = start_agent("n-ahead", "--drain-lead", "900")
    emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-1"], "notice": "2h"})
    wait_for("2 h ahead: labelled", lambda: "forewarn/scheduled-maintenance-time" in node("n-ahead")["metadata"].get("labels", {}))
    emulator("POST", "azure/events", {"EventType": "Freeze", "Resources": ["vm-1"], "notice": "10m"})
    wait_for("2 h ahead, then a Freeze: its Event", lambda: events("n-ahead").count("MaintenanceScheduled") == 2)
    n = node("n-ahead")
    check(condition(n, "MaintenancePlanned") is not None, "2 h ahead: MaintenancePlanned at once")
    check(not ours(n), "2 h ahead: no taint yet")
    check(not n["spec"].get("unschedulable"), "2 h ahead: not cordoned yet")
    stop(agent)

    # --- --approve own: an event is approved only once the node is ready for it -----------------
    def emu_state(eid):
        for e in emulator("GET", "state")[1]["events"]:
            if e["EventId"] == eid:
                return e["state"]
        return "gone"

    agent = start_agent("n-approve", "--approve", "own", "--drain-lead", "900")
    status, ahead = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-1"], "notice": "2h"})
    wait_for("approve own, 2 h ahead: labelled", lambda: "forewarn/scheduled-maintenance-time" in node("n-approve")["metadata"].get("labels", {}))
    status, freeze = emulator("POST", "azure/events", {"EventType": "Freeze", "Resources": ["vm-1"], "notice": "10m"})
    wait_for("approve own: the Freeze (nothing to take out) approved", lambda: emu_state(freeze["EventId"]) != "Scheduled")
    check(emu_state(ahead["EventId"]) == "Scheduled", "approve own: a Reboot 2 h ahead is not approved before its taint and cordon")
    check(not ours(node("n-approve")), "approve own: and not tainted yet")
    emulator("POST", "azure/events/%s/complete" % ahead["EventId"])
    status, soon = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-1"], "notice": "10m"})
    wait_for("approve own: a Reboot 10 min ahead approved", lambda: emu_state(soon["EventId"]) != "Scheduled")
    n = node("n-approve")
    check(bool(ours(n)) and n["spec"].get("unschedulable") is True, "approve own: tainted and cordoned once approved")
    stop(agent)

    # --- --kubernetes-rules: a Freeze tainted PreferNoSchedule, not cordoned; a bad file refused ----
    rules = os.path.join(os.environ["FOREWARN_TEST_KUBE_DIR"], "rules.json")
    with open(rules, "w") as f:
        json.dump({"freeze": {"taint": True, "effect": "PreferNoSchedule"}}, f)
    agent = start_agent("n-rules", "--kubernetes-rules", rules, "--self", "vm-rules")  # vm-1's events are other cases'
    status, created = emulator("POST", "azure/events", {"EventType": "Freeze", "Resources": ["vm-rules"], "notice": "10m"})
    wait_for("rules: the Freeze tainted", lambda: ours(node("n-rules")))
    n = node("n-rules")
    check([(t["value"], t["effect"]) for t in ours(n)] == [("freeze", "PreferNoSchedule")], "rules: freeze:PreferNoSchedule as the file says")
    check(not n["spec"].get("unschedulable"), "rules: not cordoned (the file's freeze leaves cordon at its default, off)")
    emulator("POST", "azure/events/%s/complete" % created["EventId"])
    wait_for("rules: the Freeze over, untainted", lambda: not ours(node("n-rules")))
    stop(agent)
    with open(rules, "w") as f:
        f.write('{"freeze": {"drain": "yes"}}')
    bad = subprocess.run([WATCH, "--cloud", "azure", "--endpoint", EMU, "--self", "vm-1", "--kubernetes-rules", rules,
                          "--kubeconfig", os.environ["FOREWARN_TEST_KUBECONFIG"], "--node-name", "n-rules"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=30)
    check(bad.returncode == 2 and "freeze.drain is not true or false" in bad.stderr,
          "rules: a bad file stops the agent at start, naming the mistake (%d: %s)" % (bad.returncode, bad.stderr.strip()))

    # --- the token file replaced while the agent runs: the next call carries the new token -----------
    # (a projected token rotates so: the kubelet swaps the file; here a wrong token is swapped for
    # the right one, and the node is written only after the swap)
    with open(os.environ["FOREWARN_TEST_KUBECONFIG"]) as f:
        config = yaml.safe_load(f)
    token_file = os.path.join(os.environ["FOREWARN_TEST_KUBE_DIR"], "rotating-token")
    with open(token_file, "w") as f:
        f.write("not-the-agents-token")
    user = config["users"][0]["user"]
    right_token = user.pop("token")
    user["tokenFile"] = token_file
    rotating = os.path.join(os.environ["FOREWARN_TEST_KUBE_DIR"], "rotating.kubeconfig")
    with open(rotating, "w") as f:
        yaml.safe_dump(config, f)
    agent, token_metrics = kube.started_with_metrics([WATCH, "--cloud", "azure", "--endpoint", EMU, "--self", "vm-token",
                                                      "--interval", "200", "--kubeconfig", rotating, "--node-name", "n-token",
                                                      "--metrics-listen", "127.0.0.1:0"])
    emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-token"], "notice": "10m"})

    def token_healthz():
        return kube.http_text(token_metrics + "/healthz")[1] if token_metrics else ""
    wait_for("token file: the wrong token's 401 named on /healthz", lambda: "401" in token_healthz())
    check(not ours(node("n-token")), "token file: nothing written with the wrong token")
    with open(token_file + ".new", "w") as f:
        f.write(right_token)
    os.replace(token_file + ".new", token_file)  # the swap, as the kubelet's atomic writer does it
    wait_for("token file: after the swap the node is tainted (the new token used)", lambda: ours(node("n-token")))
    stop(agent)

    # --- an API server that cannot be reached: named on /healthz, which stays 200 ------------------
    with open(os.environ["FOREWARN_TEST_KUBECONFIG"]) as f:
        config = yaml.safe_load(f)
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"  # nothing listens there
    broken = os.path.join(os.environ["FOREWARN_TEST_KUBE_DIR"], "unreachable.kubeconfig")
    with open(broken, "w") as f:
        yaml.safe_dump(config, f)
    agent, metrics = kube.started_with_metrics([WATCH, "--cloud", "azure", "--endpoint", EMU, "--self", "vm-1", "--interval", "200",
                                                "--kubeconfig", broken, "--node-name", "n-reboot", "--metrics-listen", "127.0.0.1:0"])
    check(metrics is not None, "unreachable API server: the agent starts and serves /healthz")
    if metrics:
        emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-1"], "notice": "10m"})

        def healthz():
            return kube.http_text(metrics + "/healthz")
        wait_for("unreachable API server: /healthz names the failure", lambda: "failing kubernetes" in healthz()[1])
        status, body = healthz()
        check(status == 200, "unreachable API server: /healthz stays 200 (%d)" % status)
        check("127.0.0.1:1" in body or "refused" in body or "connect" in body.lower(), "unreachable API server: the failure says why: " + body.strip())
        check(agent.poll() is None, "unreachable API server: the agent is still running")
        polled = emulator("GET", "state")[1]["requests"]
        wait_for("unreachable API server: the agent keeps polling the metadata service while its node writes fail",
                 lambda: emulator("GET", "state")[1]["requests"] >= polled + 10)
    stop(agent)
    agent = None
finally:
    if agent and agent.poll() is None:
        agent.kill()
        agent.wait()
    emu.terminate()
    emu.wait(timeout=10)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all checks passed")
