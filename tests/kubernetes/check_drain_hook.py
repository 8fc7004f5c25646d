#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""examples/kubernetes: the drain hook against a recording kubectl stub, and the DaemonSet manifest.

No Kubernetes API server runs here. The stub keeps one node's state (cordoned or not, its
annotations) in a JSON file, records every call, and answers as kubectl does for the calls the
hook makes. The hook is run as forewarn-watch runs it: FOREWARN_* variables, the change on stdin.

usage: check_drain_hook.py SOURCE_DIR
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

STUB = r'''#!/usr/bin/env python3
import json, os, sys
state_path = os.environ["STUB_STATE"]
with open(state_path) as f:
    node = json.load(f)
with open(os.environ["STUB_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
args = sys.argv[1:]
def save():
    with open(state_path, "w") as f:
        json.dump(node, f)
if args[:2] == ["get", "node"] and args[3] == "-o":
    if args[4] == "jsonpath={.spec.unschedulable}":
        print("true" if node["unschedulable"] else "", end="")
    elif args[4] == "jsonpath={.metadata.annotations.forewarn/cordoned-for}":
        print(node["annotations"].get("forewarn/cordoned-for", ""), end="")
    else:
        sys.exit("stub: unknown jsonpath " + args[4])
elif args[0] == "cordon":
    node["unschedulable"] = True; save()
elif args[0] == "uncordon":
    node["unschedulable"] = False; save()
elif args[:2] == ["annotate", "node"]:
    for a in args[3:]:
        if a == "--overwrite": continue
        if a.endswith("-"): node["annotations"].pop(a[:-1], None)
        else:
            k, v = a.split("=", 1); node["annotations"][k] = v
    save()
elif args[0] == "drain":
    sys.exit(int(os.environ.get("STUB_DRAIN_EXIT", "0")))
else:
    sys.exit("stub: unexpected call " + json.dumps(args))
'''

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)


class Node:
    def __init__(self, tmp, unschedulable=False, annotations=None):
        self.tmp = tmp
        self.state = os.path.join(tmp, "node.json")
        self.log = os.path.join(tmp, "calls.log")
        with open(self.state, "w") as f:
            json.dump({"unschedulable": unschedulable, "annotations": annotations or {}}, f)
        open(self.log, "w").close()
        self.kubectl = os.path.join(tmp, "kubectl")
        with open(self.kubectl, "w") as f:
            f.write(STUB)
        os.chmod(self.kubectl, 0o755)

    def read(self):
        with open(self.state) as f:
            return json.load(f)

    def calls(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f if line.strip()]

    def clear(self):
        open(self.log, "w").close()

    def run(self, hook_path, hook, event_id, not_before="", reason="", drain_exit=0):
        env = dict(os.environ)
        env.update({"NODE_NAME": "node-1", "KUBECTL": self.kubectl, "STUB_STATE": self.state, "STUB_LOG": self.log,
                    "STUB_DRAIN_EXIT": str(drain_exit), "FOREWARN_HOOK": hook, "FOREWARN_EVENT_ID": event_id,
                    "FOREWARN_NOT_BEFORE": not_before, "FOREWARN_REASON": reason, "FOREWARN_CHANGE": hook})
        line = json.dumps({"change": hook, "id": event_id}) + "\n"
        return subprocess.run(["/bin/sh", hook_path], input=line, env=env, cwd=self.tmp, capture_output=True, text=True,
                              timeout=60)


def main():
    source = sys.argv[1]
    hook = os.path.join(source, "examples", "kubernetes", "forewarn-drain.sh")
    get_owner = ["get", "node", "node-1", "-o", "jsonpath={.metadata.annotations.forewarn/cordoned-for}"]
    get_cordon = ["get", "node", "node-1", "-o", "jsonpath={.spec.unschedulable}"]
    not_before = int(time.time()) + 300  # whole seconds, as the notices write them
    in_300 = datetime.datetime.fromtimestamp(not_before, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    # 1. Prepare: cordon, mark, drain with a timeout that ends 20 s before NotBefore; recover undoes it.
    with tempfile.TemporaryDirectory() as tmp:
        n = Node(tmp)
        started = time.time()
        r = n.run(hook, "prepare", "C7061BAC-AB8D-4DD1-AEA7-2B9E7C5A1A47", in_300)
        ended = time.time()
        check(r.returncode == 0, "prepare exits 0 once drained: " + r.stderr)
        calls = n.calls()
        check(calls[:4] == [get_owner, get_cordon, ["cordon", "node-1"],
                            ["annotate", "node", "node-1", "--overwrite", "forewarn/cordoned-for=eC7061BAC-AB8D-4DD1-AEA7-2B9E7C5A1A470"]],
              "prepare: looks, cordons, marks the cordon as its own: " + json.dumps(calls))
        drain = calls[-1]
        check(drain[:4] == ["drain", "node-1", "--ignore-daemonsets", "--delete-emptydir-data"] and len(drain) == 5,
              "prepare: drains with --ignore-daemonsets --delete-emptydir-data: " + json.dumps(drain))
        timeout = int(drain[4].removeprefix("--timeout=").removesuffix("s"))
        # NotBefore - 20 s - the moment the hook drained, which is between started and ended (a
        # loaded machine may take seconds to get there), give or take the second rounded off.
        low, high = not_before - 20 - int(ended) - 1, not_before - 20 - int(started) + 1
        check(low <= timeout <= high and timeout <= 281,
              "the drain's timeout ends 20 s before NotBefore (300 s away): %d, not in %d..%d" % (timeout, low, high))
        check(n.read()["unschedulable"], "cordoned after prepare")
        n.clear()
        r = n.run(hook, "recover", "C7061BAC-AB8D-4DD1-AEA7-2B9E7C5A1A47", reason="completed")
        check(r.returncode == 0, "recover exits 0")
        check(n.calls() == [get_owner, ["uncordon", "node-1"], ["annotate", "node", "node-1", "forewarn/cordoned-for-"]],
              "recover: uncordons and removes its mark: " + json.dumps(n.calls()))
        check(n.read() == {"unschedulable": False, "annotations": {}}, "the node as it was: " + json.dumps(n.read()))

    # 2. A cancelled event is undone the same way; another event's recover leaves the cordon alone.
    with tempfile.TemporaryDirectory() as tmp:
        n = Node(tmp)
        check(n.run(hook, "prepare", "E1", in_300).returncode == 0, "prepare E1")
        r = n.run(hook, "recover", "E2", reason="completed")
        check(r.returncode == 0 and n.read()["unschedulable"], "another event's recover leaves E1's cordon")
        r = n.run(hook, "recover", "E1", reason="cancelled")
        check(r.returncode == 0 and not n.read()["unschedulable"], "a cancelled event's recover uncordons")

    # 3. A node someone else cordoned: drained, never uncordoned by forewarn.
    with tempfile.TemporaryDirectory() as tmp:
        n = Node(tmp, unschedulable=True, annotations={"owner": "ops"})
        r = n.run(hook, "prepare", "E3", in_300)
        check(r.returncode == 0, "prepare on a node cordoned by someone else")
        calls = n.calls()
        check(["cordon", "node-1"] not in calls and not any(c[0] == "annotate" for c in calls),
              "no cordon and no mark of its own: " + json.dumps(calls))
        check(any(c[0] == "drain" for c in calls), "drained all the same")
        n.run(hook, "recover", "E3", reason="completed")
        check(n.read() == {"unschedulable": True, "annotations": {"owner": "ops"}}, "still cordoned: " + json.dumps(n.read()))

    # 4. A failed drain fails the hook (forewarn-watch then does not approve); no NotBefore: the default timeout.
    with tempfile.TemporaryDirectory() as tmp:
        n = Node(tmp)
        check(n.run(hook, "prepare", "E4", "", drain_exit=1).returncode != 0, "a failed drain fails the hook")
        check(n.calls()[-1][-1] == "--timeout=120s", "no NotBefore (GCE, AWS): 120 s: " + json.dumps(n.calls()[-1]))

    # 5. An event id that would run commands if it were ever spliced into one.
    with tempfile.TemporaryDirectory() as tmp:
        n = Node(tmp)
        pwned = os.path.join(tmp, "pwned")
        evil = "x$(touch %s)`touch %s`;touch %s" % (pwned, pwned, pwned)
        r = n.run(hook, "prepare", evil, in_300)
        check(r.returncode == 0, "prepare with a hostile id")
        check(not os.path.exists(pwned), "the id ran nothing")
        mark = n.read()["annotations"]["forewarn/cordoned-for"]
        check(len(mark) <= 63 and all(c.isalnum() or c in "_.-" for c in mark), "the mark is a valid annotation value: " + mark)
        n.run(hook, "recover", evil, reason="completed")
        check(not n.read()["unschedulable"] and not os.path.exists(pwned), "recover with a hostile id")

    # 6. The manifest: what the docs promise of it.
    try:
        import yaml
    except ImportError:
        print("SKIPPED: python3-yaml is missing (./quickstart deps installs it)")
        return 77
    with open(os.path.join(source, "examples", "kubernetes", "forewarn-watch.yaml")) as f:
        docs = {d["kind"]: d for d in yaml.safe_load_all(f)}
    ds = docs["DaemonSet"]["spec"]["template"]["spec"]
    check(ds.get("hostNetwork") is True, "the DaemonSet uses the host's network")
    c = ds["containers"][0]
    env = {e["name"]: e for e in c["env"]}
    check(env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName", "NODE_NAME from spec.nodeName")
    args = c["args"]
    check("--on-prepare=/hooks/forewarn-drain.sh" in args and "--on-recover=/hooks/forewarn-drain.sh" in args,
          "the hook is the prepare and recover hook")
    deadline = int(next(a for a in args if a.startswith("--hook-deadline=")).split("=")[1])
    check(int(env["FOREWARN_DRAIN_MARGIN"]["value"]) > deadline, "the drain ends before forewarn-watch stops the hook")
    check(any(a.startswith("--state-file=/var/lib/forewarn/") for a in args), "a state file")
    vols = {v["name"]: v for v in ds["volumes"]}
    check(vols["state"]["hostPath"]["path"] == "/var/lib/forewarn", "the state file on a hostPath")
    rules = docs["ClusterRole"]["rules"]
    def allowed(resource, verb):
        return any(resource in r["resources"] and verb in r["verbs"] for r in rules)
    for resource, verb in [("nodes", "patch"), ("nodes", "get"), ("pods", "list"), ("pods/eviction", "create"),
                           ("daemonsets", "get")]:
        check(allowed(resource, verb), "RBAC allows %s %s" % (verb, resource))
    check(not allowed("nodes", "delete") and not allowed("pods", "delete"), "RBAC allows no deletion")

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("drain hook and manifest: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
