# SPDX-License-Identifier: MIT
"""The kubelet's part for one node, and nothing more, for tests against a control plane with no
kubelet (tests/kubernetes/control_plane.py):

- a pod bound to the node that is not Running is marked Running and Ready (so that a
  PodDisruptionBudget counts it healthy);
- a pod whose graceful deletion began (deletionTimestamp set) is deleted for good once its grace
  period has passed, or sooner when its annotation `stand-in/stops-after` gives fewer seconds (a
  container that exits on SIGTERM);
- the grace period each deletion was given (deletionGracePeriodSeconds) is recorded.

It never touches evictions or budgets: the API server decides those.

    stand_in = KubeletStandIn(api, "node-1")   # api(method, path, body=None, content_type=...) -> (status, body)
    stand_in.start()
    ...
    stand_in.grace["default/web-1"]            # the grace period its deletion was given
    stand_in.gone_at["default/web-1"]          # time.time() when it was deleted for good
    stand_in.stop()
"""
import threading
import time

STOPS_AFTER = "stand-in/stops-after"


class KubeletStandIn:
    def __init__(self, api, node, period=0.2):
        self.api = api
        self.node = node
        self.period = period
        self.grace = {}      # namespace/name -> deletionGracePeriodSeconds when its deletion was seen
        self.gone_at = {}    # namespace/name -> when it was deleted for good
        self.deleting_at = {}  # namespace/name -> when its deletion (an eviction) was first seen
        self.errors = []     # what went wrong in the thread (the test reads it: a failure reaches it)
        self._deleting = {}  # namespace/name -> (uid, when to delete for good)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kubelet-stand-in", daemon=True)
        self._lock = threading.Lock()

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self):
        while not self._stop.is_set():
            try:
                self._round()
            except Exception as e:  # noqa: BLE001 - kept for the test thread to see
                self.errors.append(repr(e))
            self._stop.wait(self.period)

    def _round(self):
        status, pods = self.api("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D" + self.node)
        if status != 200:
            self.errors.append("list pods: %s %s" % (status, pods))
            return
        now = time.time()
        for p in pods["items"]:
            meta = p["metadata"]
            key = meta["namespace"] + "/" + meta["name"]
            base = "/api/v1/namespaces/%s/pods/%s" % (meta["namespace"], meta["name"])
            if meta.get("deletionTimestamp"):
                with self._lock:
                    if key not in self._deleting or self._deleting[key][0] != meta["uid"]:
                        grace = int(meta.get("deletionGracePeriodSeconds", 0))
                        self.grace[key] = grace
                        self.deleting_at.setdefault(key, now)
                        stops = meta.get("annotations", {}).get(STOPS_AFTER)
                        after = min(grace, float(stops)) if stops is not None else grace
                        self._deleting[key] = (meta["uid"], now + after)
                    uid, due = self._deleting[key]
                if now >= due:
                    status, answer = self.api("DELETE", base, {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                                                               "preconditions": {"uid": uid}})
                    if status in (200, 404, 409):  # 409: the UID is another pod's now
                        with self._lock:
                            self.gone_at.setdefault(key, time.time())
                            self._deleting.pop(key, None)
                    else:
                        self.errors.append("delete %s: %s %s" % (key, status, answer))
                continue
            if p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                continue
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in p.get("status", {}).get("conditions", []))
            if p.get("status", {}).get("phase") != "Running" or not ready:
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                body = {"status": {"phase": "Running", "conditions": [
                    {"type": t, "status": "True", "lastTransitionTime": stamp}
                    for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]}}
                status, answer = self.api("PATCH", base + "/status", body, "application/merge-patch+json")
                if status not in (200, 404, 409):
                    self.errors.append("mark %s running: %s %s" % (key, status, answer))
