# SPDX-License-Identifier: MIT
"""The test scripts' side of a control plane started by tests/kubernetes/control_plane.py: its API as
the administrator (or another token), and what the tests read of a node.

    import kube
    status, body = kube.api("GET", "/api/v1/nodes/node-1")
    n = kube.node("node-1"); kube.status_of(n, "Drained"); kube.ours(n); kube.pods("node-1")
"""
import json
import os
import ssl
import urllib.error
import urllib.request

SERVER = os.environ.get("FOREWARN_TEST_KUBE_SERVER", "")
ADMIN = os.environ.get("FOREWARN_TEST_KUBE_ADMIN_TOKEN", "")
CA = os.environ.get("FOREWARN_TEST_KUBE_CA", "")
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(
    context=ssl.create_default_context(cafile=CA) if CA else ssl.create_default_context()))


def under_control_plane():
    """Whether control_plane.py gave this process its server (the variables are set)."""
    return bool(SERVER and ADMIN and CA)


def api(method, path, body=None, content_type="application/json", base=None, token=None):
    """(status, parsed JSON or text). `base` defaults to the API server, `token` to the admin's
    (None with another base: no Authorization). The User-Agent is the tests' own (kube-apiserver
    1.20 pretty-prints for curl's, docs/kubernetes.md)."""
    if base is None:
        base, token = SERVER, token or ADMIN
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("User-Agent", "forewarn-test")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", content_type)
    try:
        with _OPENER.open(req, timeout=10) as r:
            text = r.read().decode()
            return r.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def must(answer, what):
    assert answer[0] in (200, 201), (what, answer)
    return answer[1]


def node(name):
    return must(api("GET", "/api/v1/nodes/" + name), "get node " + name)


def events(name):
    """Events about the node: (reason, type, message) in the server's order."""
    items = must(api("GET", "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D" + name), "events")["items"]
    return [(e["reason"], e["type"], e["message"]) for e in items]


def condition(n, kind):
    for c in n.get("status", {}).get("conditions", []):
        if c["type"] == kind:
            return c
    return None


def status_of(n, kind):
    c = condition(n, kind)
    return c["status"] if c else None


def ours(n):
    """forewarn's taints on the node."""
    return [t for t in n.get("spec", {}).get("taints", []) if t["key"] == "forewarn/maintenance"]


def pods(node_name):
    """namespace/name of every pod bound to the node."""
    items = must(api("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D" + node_name), "pods")["items"]
    return {p["metadata"]["namespace"] + "/" + p["metadata"]["name"] for p in items}


def apply_manifest_rbac(manifest):
    """The manifest's ServiceAccount, ClusterRole and binding, created as they are (the fixture's
    agent token is the user system:serviceaccount:forewarn:forewarn-watch, which the binding names)."""
    for kind, path in (("ServiceAccount", "/api/v1/namespaces/forewarn/serviceaccounts"),
                       ("ClusterRole", "/apis/rbac.authorization.k8s.io/v1/clusterroles"),
                       ("ClusterRoleBinding", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings")):
        status, answer = api("POST", path, manifest[kind])
        assert status == 201 or (status == 409 and kind == "ServiceAccount"), (kind, status, answer)


def started_with_metrics(argv):
    """forewarn-watch started with `--metrics-listen 127.0.0.1:0` among `argv`: (process, its base URL
    or None). Its start lines are read (bounded) for the port, and the rest of its log is passed on
    to this process's stderr by a thread, never left to fill the pipe."""
    import subprocess
    import sys
    import threading
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = None
    for _ in range(50):
        line = p.stderr.readline()
        sys.stderr.write(line)
        if "metrics on " in line:
            url = line.split("metrics on ")[1].split("/metrics")[0]
            break
    threading.Thread(target=lambda: [sys.stderr.write(l) for l in p.stderr], daemon=True).start()
    return p, url


def http_text(url):
    """(status, body) of a plain-HTTP GET on loopback, (None, "") when nothing answers."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return None, ""


def requests_so_far(resources=("nodes", "events")):
    """The API server's own count of requests on these resources (apiserver_request_total)."""
    text = _OPENER.open(_metrics_request(), timeout=10).read().decode()
    total = 0
    for line in text.splitlines():
        if line.startswith("apiserver_request_total{") and any('resource="%s"' % r in line for r in resources):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def _metrics_request():
    req = urllib.request.Request(SERVER + "/metrics")
    req.add_header("Authorization", "Bearer " + ADMIN)
    req.add_header("User-Agent", "forewarn-test")
    return req
