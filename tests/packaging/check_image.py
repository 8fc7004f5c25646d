#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The container image as the DaemonSet of examples/kubernetes runs it (docs/kubernetes.md), against a
real control plane.

Run under `tests/kubernetes/control_plane.py --controller-manager` (a kube-apiserver, etcd and
kube-controller-manager on loopback). Applies the manifest's ServiceAccount, ClusterRole and
binding to that server, then runs with podman on the host's network what a kubelet would: the init
containers with their commands, users and capabilities on a root-owned state folder (a hostPath as
Kubernetes creates it), twice (a pod's first and a later start), then the agent container with the
manifest's exact arguments (`--kubernetes`), environment (NODE_NAME from spec.nodeName), user,
read-only root, capabilities and volumes, and what the kubelet adds to every container: the service
account's token, CA and namespace at /var/run/secrets/kubernetes.io/serviceaccount and
KUBERNETES_SERVICE_HOST/PORT (here the loopback server). Only the metadata service differs:
FOREWARN_CLOUD and FOREWARN_ENDPOINT point the agent at forewarn-emulator on loopback.
tests/kubernetes/kubelet_stand_in.py plays the node's kubelet for its one pod. Then, through the
agent as a node lives it: /healthz answers 200 (the probes' path); the init container's check passes
every step, the Kubernetes ones included; an event naming this node is prepared, the node tainted,
cordoned and drained through the Eviction API, the event approved only after that and started,
/readyz answers 503 until it is over; then the node is put back and /readyz answers 200; the state
file belongs to the agent's user.

usage: control_plane.py --controller-manager -- check_image.py SOURCE_DIR EMULATOR_PROGRAM IMAGE
IMAGE stands in for the one the manifest names (forewarn-watch:<version>). The port the manifest
names (9464) must be free. Prints one line per check and "N passed, N failed".
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

SOURCE = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(SOURCE, "tests", "clients"))
sys.path.insert(0, os.path.join(SOURCE, "tests", "kubernetes"))
from emulator import Emulator  # noqa: E402
import kube  # noqa: E402
from kubelet_stand_in import KubeletStandIn  # noqa: E402

results = {"passed": 0, "failed": 0}
NODE = "aks-nodepool1-0"
CONTAINER = "forewarn-image-check"


def check(cond, what, detail=""):
    if cond:
        results["passed"] += 1
        print("ok     " + what)
    else:
        results["failed"] += 1
        print("FAILED " + what + (": " + detail if detail else ""))
    return cond


def eventually(fn, seconds):
    deadline = time.monotonic() + seconds
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def podman(*args, check_rc=True, timeout=120):
    r = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check_rc and r.returncode != 0:
        raise RuntimeError("podman %s: %s" % (" ".join(args), r.stderr.strip()))
    return r


def security_flags(ctx):
    """podman flags for a container's securityContext, as the kubelet applies it."""
    flags = []
    if ctx.get("runAsUser") is not None:
        flags += ["--user", "%d:%d" % (ctx["runAsUser"], ctx.get("runAsGroup", ctx["runAsUser"]))]
    if ctx.get("readOnlyRootFilesystem"):
        flags.append("--read-only")
    if ctx.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt", "no-new-privileges"]
    caps = ctx.get("capabilities", {})
    for c in caps.get("drop", []):
        flags += ["--cap-drop", c.lower()]
    for c in caps.get("add", []):
        flags += ["--cap-add", c.lower()]
    return flags


def main():
    version = re.search(r'#define FOREWARN_VERSION_STRING "(.*)"',
                        open(os.path.join(SOURCE, "include", "forewarn", "config.hpp")).read()).group(1)
    with open(os.path.join(SOURCE, "examples", "kubernetes", "forewarn-watch.yaml")) as f:
        docs = {d["kind"]: d for d in yaml.safe_load_all(f)}
    pod = docs["DaemonSet"]["spec"]["template"]["spec"]
    agent = pod["containers"][0]
    named = "forewarn-watch:%s" % version
    image = sys.argv[3]
    check(agent["image"] == named, "the DaemonSet names the image ./quickstart image builds (%s)" % named, agent["image"])
    inits = pod.get("initContainers", [])
    check(len(inits) > 0 and all(c["image"] == named for c in inits), "an init container, of the same image")
    check("--kubernetes" in agent.get("args", []) and not any(a.startswith("--on-") for a in agent.get("args", [])),
          "the agent acts on its node itself (--kubernetes), with no hook")
    check(not any("configMap" in v for v in pod["volumes"]), "no ConfigMap to fill by hand")
    if not kube.under_control_plane():
        print("FAILED no control plane: run under tests/kubernetes/control_plane.py --controller-manager "
              "(./quickstart kubernetes builds it)")
        return 1
    for needed in (image, "forewarn-watch:" + version):
        if podman("image", "exists", needed, check_rc=False).returncode != 0:
            print("FAILED no image %s (tests/packaging/run.sh builds it)" % needed)
            return 1
    # The agent's image: its OCI labels (version, source, licence).
    labels = json.loads(podman("image", "inspect", "forewarn-watch:" + version, "--format", "{{json .Labels}}").stdout)
    check(labels.get("org.opencontainers.image.version") == version, "the image's version label is " + version, repr(labels))
    check(labels.get("org.opencontainers.image.licenses") == "MIT" and
          labels.get("org.opencontainers.image.source", "").startswith("https://"), "the image's licence and source labels",
          repr(labels))
    for probe in ("livenessProbe", "readinessProbe"):
        check(agent.get(probe, {}).get("httpGet", {}).get("path") == "/healthz",
              "the %s asks /healthz (not /readyz, the node's traffic signal)" % probe)
    check(agent["securityContext"].get("runAsNonRoot") is True and agent["securityContext"].get("runAsUser") == 65532,
          "the agent runs as the image's own user, not root")
    port = agent["livenessProbe"]["httpGet"]["port"]
    if kube.http_text("http://127.0.0.1:%d/healthz" % port)[0] is not None:
        print("FAILED port %d is taken: the manifest's --metrics-listen needs it" % port)
        return 1

    work = tempfile.mkdtemp(prefix="forewarn-image-check.")
    os.chmod(work, 0o755)
    emu = None
    stand_in = None
    try:
        # The volumes, as the kubelet lays them out.
        mounts = {}
        for v in pod["volumes"]:
            path = os.path.join(work, v["name"])
            if "hostPath" in v:  # DirectoryOrCreate: made by root, 0755
                os.makedirs(path, mode=0o755)
                mounts[v["name"]] = ["-v", "%s:%s" % (path, "{}")]
            elif "emptyDir" in v:
                mounts[v["name"]] = ["--tmpfs", "{}:rw,mode=1777"]
        state_dir = os.path.join(work, "state")
        # What the kubelet mounts into every container of a pod with a service account: its token
        # (readable by the pod's user), the cluster's CA and the namespace.
        account = os.path.join(work, "serviceaccount")
        os.makedirs(account, mode=0o755)
        for name, text in (("token", os.environ["FOREWARN_TEST_KUBE_AGENT_TOKEN"]),
                           ("ca.crt", open(os.environ["FOREWARN_TEST_KUBE_CA"]).read()), ("namespace", "forewarn")):
            with open(os.path.join(account, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(account, name), 0o644)
        account_flags = ["-v", account + ":/var/run/secrets/kubernetes.io/serviceaccount:ro"]
        host, port_text = kube.SERVER[len("https://"):].rsplit(":", 1)
        account_flags += ["-e", "KUBERNETES_SERVICE_HOST=" + host, "-e", "KUBERNETES_SERVICE_PORT=" + port_text]

        # The cluster: the manifest's account and role, this node, one pod on it, its kubelet.
        with open(os.path.join(SOURCE, "examples", "kubernetes", "forewarn-watch.yaml")) as f:
            kube.apply_manifest_rbac({d["kind"]: d for d in yaml.safe_load_all(f) if d})
        kube.must(kube.api("POST", "/api/v1/nodes", {"metadata": {"name": NODE}}), "the node")
        kube.must(kube.api("POST", "/api/v1/namespaces/default/pods", {
            "metadata": {"name": "app-0"},
            "spec": {"nodeName": NODE, "terminationGracePeriodSeconds": 2, "containers": [{"name": "c", "image": "example/app"}]}}),
            "a pod on the node")
        stand_in = KubeletStandIn(kube.api, NODE).start()

        def volume_flags(container):
            flags = []
            for m in container.get("volumeMounts", []):
                flags += [x.replace("{}", m["mountPath"]) for x in mounts[m["name"]]]
            return flags

        # The emulator: this node as the VM, no event yet.
        scenario = os.path.join(work, "scenario.json")
        with open(scenario, "w") as f:
            json.dump({"name": "image-check", "vms": [{"name": NODE}], "steps": []}, f)
        emu = Emulator(sys.argv[2], "--scenario", scenario)

        env = []
        for e in agent.get("env", []):
            if "value" in e:
                env += ["-e", "%s=%s" % (e["name"], e["value"])]
            elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
                env += ["-e", "%s=%s" % (e["name"], NODE)]
            else:
                raise RuntimeError("the test does not know how to fill %s" % e)
        env += ["-e", "FOREWARN_CLOUD=azure", "-e", "FOREWARN_ENDPOINT=" + emu.url]  # the emulator, not 169.254.169.254
        # The init containers, in order, twice: the pod's first start, then a later one (a restart,
        # a rollout, the node's reboot) that finds the hostPath as the first left it. Each gets
        # the pod's environment as the kubelet gives it (the check reads the agent's settings).
        for start in ("first", "second"):
            for init in inits:
                podman("rm", "-f", "--ignore", CONTAINER + "-init", check_rc=False)
                r = podman("run", "--rm", "--name", CONTAINER + "-init", "--network", "host", *security_flags(init["securityContext"]), *volume_flags(init),
                           *account_flags, *(env if init.get("env") else []),
                           "--entrypoint", init["command"][0], image, *init["command"][1:], *init.get("args", []),
                           check_rc=False)
                check(r.returncode == 0, "init container %s exits 0 at the pod's %s start" % (init["name"], start),
                      (r.stdout + r.stderr).strip())
                if init["command"][1:2] == ["check"]:
                    report = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
                    check(report.get("ok") is True and report.get("failed") == 0,
                          "the check init container finds the chain whole, as the agent's user (%s start)" % start, r.stdout)
                    steps = {x["step"]: x["result"] for x in report.get("steps", [])}
                    check(all(steps.get(k) == "ok" for k in ("kubernetes", "kubernetes node", "kubernetes access")),
                          "its Kubernetes steps pass: the in-cluster server, token, node and the role's permissions", repr(steps))
                    check(init.get("args") == agent.get("args") and init.get("env") == agent.get("env") and
                          init.get("securityContext") == agent.get("securityContext"),
                          "the check runs with the agent's settings, environment and user")
        st = os.stat(state_dir)
        check(st.st_uid == 65532 and (st.st_mode & 0o777) == 0o700,
              "the state folder is the agent's after the init container (uid %d, mode %o)" % (st.st_uid, st.st_mode & 0o777))

        podman("rm", "-f", "--ignore", CONTAINER, check_rc=False)
        podman("run", "-d", "--name", CONTAINER, "--network", "host", *security_flags(agent["securityContext"]),
               *volume_flags(agent), *account_flags, *env, image, *agent["args"])

        def logs():
            r = podman("logs", CONTAINER, check_rc=False)
            return r.stdout, r.stderr

        healthz = "http://127.0.0.1:%d/healthz" % port
        readyz = "http://127.0.0.1:%d/readyz" % port
        check(eventually(lambda: kube.http_text(healthz)[0] == 200, 30), "/healthz answers 200 (the probes)", repr(logs()))
        check(kube.http_text(readyz)[0] == 200, "/readyz answers 200 before any event")

        emu.control("azure/events", {"EventId": "IMG-REBOOT-1", "EventType": "Reboot", "Resources": [NODE],
                                     "notice": "15m", "impact": "6s"})

        def has_out(pattern):
            return re.search(pattern, logs()[0]) is not None

        def has_err(pattern):
            return re.search(pattern, logs()[1]) is not None

        check(eventually(lambda: has_out(r'"change":"prepare".*"id":"IMG-REBOOT-1"'), 30), "the agent prints the prepare",
              repr(logs()))
        check(eventually(lambda: kube.http_text(readyz)[0] == 503, 10), "/readyz answers 503 during this node's event")
        drained_at = []

        def drained():
            n = kube.node(NODE)
            if kube.status_of(n, "Drained") == "True" and not drained_at:
                drained_at.append((time.monotonic(), n))
            return drained_at

        check(eventually(drained, 30), "the node is drained (the condition Drained)", repr(logs()))
        if drained_at:
            n = drained_at[0][1]
            check(bool(kube.ours(n)) and n["spec"].get("unschedulable") is True, "the node tainted and cordoned")
        check("default/app-0" not in kube.pods(NODE) and "default/app-0" in stand_in.gone_at, "its pod evicted and gone")
        check(eventually(lambda: has_err(r"approved IMG-REBOOT-1"), 30), "the event is approved once the node is drained",
              repr(logs()))
        check(eventually(lambda: has_out(r'"change":"started".*"id":"IMG-REBOOT-1"'), 20), "the event starts")
        check(kube.http_text(readyz)[0] == 503, "/readyz still answers 503 while it runs")
        check(eventually(lambda: has_out(r'"change":"recover".*"id":"IMG-REBOOT-1"'), 30), "the event is over: the recover")
        check(eventually(lambda: any(r == "MaintenanceOver" for r, _, _ in kube.events(NODE)), 20), "the node is put back")
        n = kube.node(NODE)
        check(not kube.ours(n) and not n["spec"].get("unschedulable"), "untainted and uncordoned")
        check(not stand_in.errors, "the kubelet stand-in worked", repr(stand_in.errors[:3]))
        check(eventually(lambda: kube.http_text(readyz)[0] == 200, 10), "/readyz answers 200 again")
        state = os.path.join(state_dir, "state.json")
        check(os.path.exists(state) and os.stat(state).st_uid == 65532, "the state file is written by the agent's user")
        check(eventually(lambda: kube.http_text(healthz)[0] == 200, 5), "/healthz still answers 200")
        if results["failed"]:
            out, err = logs()
            print("--- agent stdout\n" + out + "--- agent stderr\n" + err)
    finally:
        if stand_in:
            stand_in.stop()
        for name in (CONTAINER, CONTAINER + "-init"):  # one by one: a missing one fails the whole call
            podman("rm", "-f", "--ignore", name, check_rc=False)
        if emu:
            emu.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("check_image: %d passed, %d failed" % (results["passed"], results["failed"]))
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
