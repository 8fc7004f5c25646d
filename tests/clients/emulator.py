# SPDX-License-Identifier: MIT
"""Starts forewarn-emulator for a third-party client check and talks to its control API.

Standard library only. The emulator is started on 127.0.0.1:0 and stopped (SIGTERM, then SIGKILL)
when the `with` block ends; its stdout is drained by a thread so it never blocks.
"""
import json
import os
import signal
import subprocess
import threading
import urllib.request

SKIP = 77  # ctest SKIP_RETURN_CODE


class Emulator:
    def __init__(self, program, *args):
        self.proc = subprocess.Popen([program, "--listen", "127.0.0.1:0", "--exit-with-parent", *args],
                                     stdout=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline().strip()
        prefix = "listening on "
        if not first.startswith(prefix):
            self.stop()
            raise RuntimeError("forewarn-emulator did not start: %r" % first)
        self.url = first[len(prefix):]
        self.host = self.url[len("http://"):]
        self.lines = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        # never through a proxy: the emulator is on loopback
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def _drain(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def control(self, route, body=None, method=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + "/emulator/v1/" + route, data=data,
                                     method=method or ("POST" if data is not None else "GET"),
                                     headers={"Content-Type": "application/json"})
        with self._opener.open(req, timeout=10) as resp:
            return json.loads(resp.read().decode() or "null")

    def requests(self, service):
        return [r for r in self.control("requests")["requests"] if r["service"] == service]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def no_proxy_env(env=None):
    """The environment with every proxy variable removed and loopback excluded."""
    env = dict(os.environ if env is None else env)
    for k in list(env):
        if k.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            del env[k]
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


def headers_of(logged):
    return {name.lower(): value for name, value in logged["headers"]}
