#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""forewarn-watch --kubeconfig drains its node through the Eviction API of a real kube-apiserver, with
kube-controller-manager computing the PodDisruptionBudgets' status.

Run under `tests/kubernetes/control_plane.py --controller-manager`. forewarn-emulator plays Azure;
the agent's token is bound to examples/kubernetes/forewarn-watch.yaml's own ClusterRole;
tests/kubernetes/kubelet_stand_in.py plays each node's kubelet (Running and Ready, a graceful
deletion completed after its grace period, the grace period recorded). Cases:
- a Reboot, --approve own: a budget refuses an eviction until more of its pods are Ready
  elsewhere; forewarn asks again, the drain ends, and the event is approved only after the last
  evicted pod is gone. The DaemonSet's pod and the mirror pod stay; a pod with an emptyDir and
  no owner is evicted and named; a system-cluster-critical pod is evicted only once the others
  are gone. The node shows, in order, the Event, MaintenancePlanned, the label, the taint and the
  cordon, node.kubernetes.io/exclude-from-external-load-balancers (--lb-drain 2 s before the first
  eviction),
  DrainInProgress, then Drained; a taint another client adds during the drain survives the
  recover, after which the rest is gone (the load-balancer label too, which forewarn added; on
  n-kill an administrator's stays);
- a budget that never allows: at the deadline (NotBefore less --hook-deadline and --drain-margin)
  a Warning DrainTimedOut names the pod and the budget, and the event is not approved (it starts
  at NotBefore);
- grace capped: a pod with terminationGracePeriodSeconds 600 under a notice 75 s ahead is asked
  for at most the time left to the drain's deadline (NotBefore less 15 s and 10 s).
- other clouds: an AWS scheduled reboot two days out gets the condition and the label at once and
  no taint, cordon or eviction (--drain-lead); a GCE live migration gets the condition and the
  Event only; an AWS Spot notice drains within its two minutes, a 600 s grace period capped;
- kill -9 during the drain (a budget refusing), then a restart with the same state file: the
  drain resumes from what the node records (the annotation forewarn/events) and ends, the event
  is approved; one taint, one cordon record, one MaintenanceScheduled Event across both runs.

usage: check_agent_drain.py FOREWARN_WATCH FOREWARN_EMULATOR
"""
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
from kube import api, condition, events, must, node, ours, pods, status_of  # noqa: E402
from kubelet_stand_in import KubeletStandIn  # noqa: E402

WATCH, EMULATOR = sys.argv[1], sys.argv[2]
LB_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers"
MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "kubernetes", "forewarn-watch.yaml")
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAILED: ") + what, flush=True)
    if not cond:
        failures.append(what)


def emulator(method, path, body=None):
    return api(method, "/emulator/v1/" + path, body, base=EMU)


def emu_event(eid):
    for e in emulator("GET", "state")[1]["events"]:
        if e["EventId"] == eid:
            return e
    return None


def pod(name, node_name, labels=None, grace=3, owner=None, annotations=None, volumes=None, stops_after=None, priority_class=None):
    meta = {"name": name, "labels": labels or {}, "annotations": dict(annotations or {})}
    if stops_after is not None:
        meta["annotations"]["stand-in/stops-after"] = str(stops_after)
    if owner:
        meta["ownerReferences"] = [owner]
    spec = {"nodeName": node_name, "terminationGracePeriodSeconds": grace, "containers": [{"name": "c", "image": "example/app"}]}
    if volumes:
        spec["volumes"] = volumes
    if priority_class:
        spec["priorityClassName"] = priority_class
    must(api("POST", "/api/v1/namespaces/default/pods", {"metadata": meta, "spec": spec}), "create pod " + name)


def budget(name, app, min_available):
    must(api("POST", "/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets",
             {"metadata": {"name": name}, "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": app}}}}),
         "create budget " + name)


def budget_allows(name):
    s = must(api("GET", "/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets/" + name), "budget").get("status", {})
    return s.get("disruptionsAllowed", 0), s.get("currentHealthy", 0)


def wait_for(what, test, seconds=30, agents=()):
    end = time.time() + seconds
    while time.time() < end:
        if test():
            return True
        if any(a.poll() is not None for a in agents):
            break
        time.sleep(0.2)
    check(False, what + " (waited %d s)" % seconds)
    return False


def start_agent(node_name, self_name, *extra, cloud="azure"):
    """The agent, serving /metrics on a free port: (process, its base URL)."""
    p, url = kube.started_with_metrics([WATCH, "--cloud", cloud, "--endpoint", EMU, "--self", self_name, "--interval", "200",
                                        "--kubeconfig", os.environ["FOREWARN_TEST_KUBECONFIG"], "--node-name", node_name,
                                        "--metrics-listen", "127.0.0.1:0"] + list(extra))
    assert url, "the agent did not say where /metrics is"
    return p, url


def metrics(url):
    """/metrics' samples: {'name{labels}': value}."""
    text = kube.http_text(url + "/metrics")[1]
    return {l.rsplit(" ", 1)[0]: float(l.rsplit(" ", 1)[1]) for l in text.splitlines() if l and not l.startswith("#")}


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        check(False, "the agent stops within 15 s of SIGTERM")


emu = subprocess.Popen([EMULATOR, "--listen", "127.0.0.1:0", "--quiet", "--exit-with-parent", "--rate-limit", "0"],
                       stdout=subprocess.PIPE, text=True)
EMU = emu.stdout.readline().split()[-1]
agents = []
stand_ins = []

with open(MANIFEST) as f:
    kube.apply_manifest_rbac({d["kind"]: d for d in yaml.safe_load_all(f) if d})
for name in ("n-drain", "n-other", "n-stuck", "n-grace", "n-kill", "n-gce", "n-spot"):
    must(api("POST", "/api/v1/nodes", {"metadata": {"name": name}}), "node " + name)
    stand_ins.append(KubeletStandIn(api, name).start())

try:
    # --- the workloads -------------------------------------------------------------------------------
    ds = must(api("POST", "/apis/apps/v1/namespaces/default/daemonsets", {
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "c", "image": "example/agent"}]}}}}),
        "daemonset")
    pod("agent-n-drain", "n-drain", {"app": "agent"},
        owner={"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": ds["metadata"]["uid"], "controller": True})
    pod("static-n-drain", "n-drain", annotations={"kubernetes.io/config.mirror": "0123456789abcdef"})
    pod("scratch", "n-drain", volumes=[{"name": "tmp", "emptyDir": {}}], grace=2)
    pod("web-0", "n-drain", {"app": "web"}, grace=3)
    pod("web-1", "n-drain", {"app": "web"}, grace=3)
    pod("dns-n-drain", "n-drain", {"app": "dns"}, grace=3, priority_class="system-cluster-critical")
    budget("web", "web", 2)
    pod("db-0", "n-stuck", {"app": "db"}, grace=3)
    budget("db", "db", 1)
    pod("slow-0", "n-grace", grace=600, stops_after=1)
    pod("kill-0", "n-kill", {"app": "kill"}, grace=2)
    pod("gce-0", "n-gce")
    pod("spot-0", "n-spot", grace=600, stops_after=1)
    budget("kill", "kill", 1)
    wait_for("the budgets counted (web 2 healthy, db 1, kill 1)",
             lambda: budget_allows("web") == (0, 2) and budget_allows("db") == (0, 1) and budget_allows("kill") == (0, 1), 60)

    # --- a Reboot, --approve own: a budget that refuses, then allows --------------------------------
    a, a_url = start_agent("n-drain", "vm-drain", "--approve", "own", "--lb-drain", "2")
    agents.append(a)
    status, created = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-drain"], "notice": "10m"})
    assert status == 200, (status, created)
    rid = created["EventId"]
    first = {}  # what the node showed, by when it was first seen

    def observe():
        n = node("n-drain")
        seen = {
            "event": any(r == "MaintenanceScheduled" for r, _, _ in events("n-drain")),
            "planned": status_of(n, "MaintenancePlanned") == "True",
            "label": "forewarn/scheduled-maintenance-time" in n["metadata"].get("labels", {}),
            "taint": bool(ours(n)),
            "cordon": n["spec"].get("unschedulable") is True,
            "lb_label": LB_LABEL in n["metadata"].get("labels", {}),
            "draining": status_of(n, "DrainInProgress") == "True",
            "drained": status_of(n, "Drained") == "True",
        }
        for k, v in seen.items():
            if v and k not in first:
                first[k] = time.time()
        return n

    wait_for("Reboot: DrainInProgress", lambda: observe() and "draining" in first, 30, agents)
    # The budget refuses: the web pods stay while the drain goes on.
    wait_for("Reboot: the pod with an emptyDir and no owner evicted and gone", lambda: "default/scratch" not in pods("n-drain"), 30, agents)
    time.sleep(3)  # a few of forewarn's rounds, each refused
    observe()
    check({"default/web-0", "default/web-1"} <= pods("n-drain"), "Reboot: the budget's pods stay while it refuses")
    check(emu_event(rid)["state"] == "Scheduled", "Reboot: not approved while pods wait on a budget")
    # Another client's taint, written during the drain.
    must(api("PATCH", "/api/v1/nodes/n-drain", [
        {"op": "add", "path": "/spec/taints/-", "value": {"key": "example.com/other", "effect": "NoSchedule"}}],
        "application/json-patch+json"), "another client's taint")
    # Two more of the budget's pods Ready elsewhere: it allows two disruptions.
    pod("web-2", "n-other", {"app": "web"})
    pod("web-3", "n-other", {"app": "web"})
    approved_at = None
    end = time.time() + 60
    while time.time() < end and a.poll() is None:
        observe()
        e = emu_event(rid)
        if e["state"] != "Scheduled" and approved_at is None:
            approved_at = time.time()
        if approved_at and "drained" in first:
            break
        time.sleep(0.2)
    check(approved_at is not None, "Reboot: approved once the drain ended")
    stand_in = stand_ins[0]
    gone = [stand_in.gone_at.get(k) for k in ("default/web-0", "default/web-1", "default/scratch", "default/dns-n-drain")]
    check(all(gone), "Reboot: every evicted pod deleted for good by the stand-in (%s)" % gone)
    dns_at = stand_in.deleting_at.get("default/dns-n-drain")
    others_gone = [g for g in gone[:3] if g]
    check(dns_at is not None and len(others_gone) == 3 and dns_at >= max(others_gone),
          "Reboot: the system-cluster-critical pod evicted only once the others were gone (%s after)"
          % (None if dns_at is None or len(others_gone) < 3 else round(dns_at - max(others_gone), 1)))
    first_eviction = min(stand_in.deleting_at.values()) if stand_in.deleting_at else None
    # --lb-drain 2: the first eviction 2 s after the label (each seen within a 0.2 s look).
    gap = first_eviction - first["lb_label"] if "lb_label" in first and first_eviction is not None else None
    check(gap is not None and gap >= 1.5,
          "Reboot: %s on the node --lb-drain 2 s before the first eviction (%s s)" % (LB_LABEL, None if gap is None else round(gap, 1)))
    if approved_at and all(gone):
        check(approved_at >= max(gone), "Reboot: approved only after the last evicted pod was gone (%.1f s after)" % (approved_at - max(gone)))
    left = pods("n-drain")
    check(left == {"default/agent-n-drain", "default/static-n-drain"}, "Reboot: the DaemonSet's pod and the mirror pod stay (%s)" % sorted(left))
    order = ["event", "planned", "label", "taint", "cordon", "lb_label", "draining", "drained"]
    times = [first.get(k) for k in order]
    check(all(times) and times == sorted(times), "Reboot: the node showed " + " → ".join(order) + " in that order (%s)" % first)
    reasons = events("n-drain")
    drained = [m for r, t, m in reasons if r == "Drained"]
    check(len(drained) == 1 and "4 pods evicted" in drained[0], "Reboot: one Event Drained with the number of pods (%s)" % drained)
    check(drained and "default/scratch" in drained[0], "Reboot: the Drained Event names the pod no controller owns")
    check(stand_in.grace.get("default/web-0") == 3, "Reboot: a pod's own grace period when the deadline is far (%s)" % stand_in.grace)

    m = metrics(a_url)
    check(m.get('forewarn_kubernetes_drains_total{cloud="azure",outcome="drained"}') == 1
          and m.get('forewarn_kubernetes_drains_total{cloud="azure",outcome="timed_out"}') == 0,
          "Reboot: /metrics counts one drain, drained")
    check(m.get('forewarn_kubernetes_evictions_refused_total{cloud="azure"}', 0) >= 2, "Reboot: /metrics counts the budget's refusals")
    check(m.get('forewarn_kubernetes_drain_duration_seconds_sum{cloud="azure"}', 0) >= 3, "Reboot: /metrics has the drain's time")

    # Over: everything forewarn did is undone, the other client's taint stays.
    assert emulator("POST", "azure/events/%s/complete" % rid)[0] == 200
    wait_for("Reboot: MaintenanceOver", lambda: any(r == "MaintenanceOver" for r, _, _ in events("n-drain")), 30, agents)
    n = node("n-drain")
    check(not ours(n), "over: forewarn's taint removed")
    # (node.kubernetes.io/not-ready is the API server's own, on every node without a kubelet)
    check([t["key"] for t in n["spec"].get("taints", []) if t["key"] != "node.kubernetes.io/not-ready"] == ["example.com/other"],
          "over: the taint another client added during the drain survives (%s)" % n["spec"].get("taints"))
    check(not n["spec"].get("unschedulable"), "over: uncordoned")
    check("forewarn/scheduled-maintenance-time" not in n["metadata"].get("labels", {}), "over: the label removed")
    check(LB_LABEL not in n["metadata"].get("labels", {}) and "forewarn/excluded-for" not in n["metadata"].get("annotations", {}),
          "over: the load-balancer label forewarn added removed, with its record")
    for kind in ("MaintenancePlanned", "DrainInProgress", "Drained"):
        c = condition(n, kind)
        check(c is not None and c["status"] == "False" and c["reason"] == "MaintenanceOver", "over: %s False, MaintenanceOver" % kind)
    stop(a)
    agents.remove(a)

    # --- a budget that never allows, and a grace period capped, side by side -----------------------
    # (a shorter --hook-deadline and --drain-margin: its deadline 10 s after the notice, NotBefore 20 s)
    stuck, stuck_url = start_agent("n-stuck", "vm-stuck", "--approve", "own", "--hook-deadline", "5", "--drain-margin", "5")
    grace, grace_url = start_agent("n-grace", "vm-grace", "--approve", "own")
    agents += [stuck, grace]
    status, s_event = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-stuck"], "notice": "20s"})
    status, g_event = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-grace"], "notice": "75s"})
    wait_for("grace: the slow pod evicted", lambda: "default/slow-0" in stand_ins[3].grace, 30, agents)
    given = stand_ins[3].grace.get("default/slow-0")
    check(given is not None and 40 <= given <= 50, "grace: 600 s capped at the time left to the drain's deadline, 50 s at most (%s)" % given)
    wait_for("grace: drained and approved", lambda: status_of(node("n-grace"), "Drained") == "True"
             and emu_event(g_event["EventId"])["state"] != "Scheduled", 30, agents)

    wait_for("stuck: DrainTimedOut at the deadline", lambda: any(r == "DrainTimedOut" for r, _, _ in events("n-stuck")), 40, agents)
    timed_out = [(t, m) for r, t, m in events("n-stuck") if r == "DrainTimedOut"]
    check(len(timed_out) == 1 and timed_out[0][0] == "Warning", "stuck: one Warning Event DrainTimedOut")
    check(timed_out and "default/db-0" in timed_out[0][1] and "disruption budget db" in timed_out[0][1],
          "stuck: it names the pod and the budget (%s)" % (timed_out[0][1] if timed_out else ""))
    n = node("n-stuck")
    check(status_of(n, "DrainInProgress") == "False" and status_of(n, "Drained") != "True", "stuck: DrainInProgress False, not Drained")
    check("default/db-0" in pods("n-stuck"), "stuck: the pod is still there")
    e = emu_event(s_event["EventId"])
    check(e["state"] == "Scheduled", "stuck: the event is not approved")
    wait_for("stuck: the event starts at NotBefore, as without forewarn", lambda: emu_event(s_event["EventId"])["state"] != "Scheduled", 30)
    e = emu_event(s_event["EventId"])
    check(e.get("started_ms", 0) - e["appeared_ms"] >= 19000, "stuck: started at NotBefore, not before (%s ms)" % (e.get("started_ms", 0) - e["appeared_ms"]))
    # --- kill -9 during the drain, then a restart with the same state file ---------------------------
    state = os.path.join(os.environ["FOREWARN_TEST_KUBE_DIR"], "kill-state.json")
    # An administrator's own load-balancer label on n-kill: forewarn finds it there and leaves it.
    must(api("PATCH", "/api/v1/nodes/n-kill", {"metadata": {"labels": {LB_LABEL: "admin"}}}, "application/merge-patch+json"),
         "an administrator's label")
    killed, killed_url = start_agent("n-kill", "vm-kill", "--approve", "own", "--state-file", state)
    agents.append(killed)
    status, k_event = emulator("POST", "azure/events", {"EventType": "Reboot", "Resources": ["vm-kill"], "notice": "10m"})
    kid = k_event["EventId"]
    wait_for("kill: the budget refused an eviction", lambda: metrics(killed_url).get(
        'forewarn_kubernetes_evictions_refused_total{cloud="azure"}', 0) >= 1, 30, agents)
    killed.kill()
    killed.wait()
    agents.remove(killed)
    check(status_of(node("n-kill"), "DrainInProgress") == "True", "kill: killed with its drain in progress")
    restarted, _ = start_agent("n-kill", "vm-kill", "--approve", "own", "--state-file", state)
    agents.append(restarted)
    pod("kill-1", "n-other", {"app": "kill"})  # the budget allows one disruption now
    wait_for("kill: after the restart, the drain resumed and ended", lambda: status_of(node("n-kill"), "Drained") == "True", 40, agents)
    wait_for("kill: and the event is approved", lambda: emu_event(kid)["state"] != "Scheduled", 20, agents)
    n = node("n-kill")
    check(len(ours(n)) == 1, "kill: one taint (%s)" % ours(n))
    check(n["metadata"]["annotations"].get("forewarn/cordoned-for") == kid, "kill: the cordon recorded once, as the event's")
    reasons = [r for r, _, _ in events("n-kill")]
    check(reasons.count("MaintenanceScheduled") == 1 and reasons.count("Drained") == 1,
          "kill: one Event MaintenanceScheduled and one Drained across both runs (%s)" % reasons)
    check("default/kill-0" not in pods("n-kill"), "kill: the pod the budget held is gone")
    assert emulator("POST", "azure/events/%s/complete" % kid)[0] == 200
    wait_for("kill: over after the restart", lambda: any(r == "MaintenanceOver" for r, _, _ in events("n-kill")), 30, agents)
    n = node("n-kill")
    check(not ours(n) and not n["spec"].get("unschedulable") and "forewarn/events" not in n["metadata"].get("annotations", {}),
          "kill: over: untainted, uncordoned, the record removed")
    check(n["metadata"].get("labels", {}).get(LB_LABEL) == "admin" and "forewarn/excluded-for" not in n["metadata"].get("annotations", {}),
          "kill: over: the administrator's load-balancer label stays (%s)" % n["metadata"].get("labels", {}).get(LB_LABEL))

    # --- other clouds: a GCE live migration, an AWS Spot notice ---------------------------------------
    gce, _ = start_agent("n-gce", "vm-gce", cloud="gce")
    aws, _ = start_agent("n-spot", "vm-spot", cloud="aws")
    agents += [gce, aws]
    # AWS first: a scheduled reboot two days out gets the condition and the label at once, and
    # nothing more until --drain-lead before it.
    status, scheduled = emulator("POST", "aws/events", {"Code": "system-reboot", "in": "48h"})
    assert status == 200, (status, scheduled)
    wait_for("AWS, 2 days ahead: labelled", lambda: "forewarn/scheduled-maintenance-time" in node("n-spot")["metadata"].get("labels", {}),
             30, agents)
    # A GCE live migration after it: once its Event is there, the AWS agent has long had its turn.
    assert emulator("POST", "gce", {"instance/maintenance-event": "MIGRATE_ON_HOST_MAINTENANCE"})[0] == 200
    wait_for("GCE live migration: MaintenancePlanned", lambda: status_of(node("n-gce"), "MaintenancePlanned") == "True", 30, agents)
    n = node("n-spot")
    label = int(n["metadata"]["labels"]["forewarn/scheduled-maintenance-time"])
    check(abs(label - (time.time() + 48 * 3600)) < 120, "AWS, 2 days ahead: the label is NotBefore")
    check(status_of(n, "MaintenancePlanned") == "True" and condition(n, "MaintenancePlanned")["reason"] == "Reboot",
          "AWS, 2 days ahead: MaintenancePlanned at once, reason Reboot")
    check(not ours(n) and not n["spec"].get("unschedulable") and condition(n, "DrainInProgress") is None
          and "default/spot-0" in pods("n-spot"), "AWS, 2 days ahead: no taint, no cordon, no eviction yet")
    assert emulator("POST", "aws/spot", {"action": "terminate", "in": "2m"})[0] == 200
    wait_for("AWS Spot: drained", lambda: status_of(node("n-spot"), "Drained") == "True", 60, agents)
    n = node("n-gce")
    check(condition(n, "MaintenancePlanned")["reason"] == "LiveMigrate", "GCE live migration: reason LiveMigrate")
    check(any(r == "MaintenanceScheduled" for r, _, _ in events("n-gce")), "GCE live migration: an Event")
    check(not ours(n) and not n["spec"].get("unschedulable") and condition(n, "DrainInProgress") is None,
          "GCE live migration: no taint, no cordon, no drain")
    check("default/gce-0" in pods("n-gce"), "GCE live migration: its pod stays")
    given = stand_ins[6].grace.get("default/spot-0")
    check(given is not None and 85 <= given <= 95,
          "AWS Spot: a 600 s grace period capped at the time left in its two minutes less 25 s (%s)" % given)
    check("default/spot-0" not in pods("n-spot"), "AWS Spot: the pod is gone within the notice")

    m = metrics(stuck_url)
    check(m.get('forewarn_kubernetes_drains_total{cloud="azure",outcome="timed_out"}') == 1
          and m.get('forewarn_kubernetes_pods_left_total{cloud="azure"}') == 1, "stuck: /metrics counts a drain timed out with 1 pod left")
    for s in stand_ins:
        check(not s.errors, "the kubelet stand-in of %s worked (%s)" % (s.node, s.errors[:3]))
finally:
    for p in agents:
        if p.poll() is None:
            stop(p)
    for s in stand_ins:
        s.stop()
    emu.terminate()
    emu.wait(timeout=10)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all checks passed")
