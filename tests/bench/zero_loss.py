#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Zero-loss maintenance behind haproxy: what a maintenance notice costs the requests a load
balancer sends to the VM it names, with and without forewarn-watch's /readyz in the balancer's path.

Each scenario runs once per arm, every process started afresh on 127.0.0.1 as this script's own
children (each in its own process group, all stopped at the end, on Ctrl-C and on an error too):

- forewarn-emulator: one for Azure (its VMs vm0, vm1, ... see the same Scheduled Events, as an
  availability set's do; each VM's endpoint is the emulator's URL and /emulator/vm/vmN, so the
  emulator knows which VM approved); for GCE and AWS one per VM, each VM's own metadata server
  (the emulator's GCE keys and AWS notices are shared by all of its VMs);
- one backend per VM: a small HTTP server answering 200 "vmN" on /;
- one forewarn-watch per VM: --cloud C --endpoint E --self vmN --metrics-listen 127.0.0.1:P
  --interval 200 (AWS: 1000, its least) --approve own, and the arm's flags; the same agents run in
  every arm but the library's, only what haproxy checks differs;
- the library arm (Azure scenarios): no forewarn-watch; each backend is
  examples/balanced_service's program (--service), the library inside the service: it answers
  its own /readyz from ready_for_traffic() and approves 3 s after it turned 503
  (approval_options::unready_for) once no request is in flight;
- haproxy -f CONF -db (never the system service) from a config written to a temporary folder:
  balance roundrobin, default-server inter 500ms fall 2 rise 2; "without forewarn" checks each
  backend itself (option httpchk GET /), the forewarn arms check the agent's /readyz (option
  httpchk GET /readyz, check port <agent's metrics port>); its state is read from its stats
  socket (show stat);
- a steady load through haproxy (--rate requests/s, each on a new connection with a 2 s timeout):
  a request that does not get a 200 within 2 s counts as failed.

The script plays the host's side: when the emulator shows the event Started (Azure), or when the
notice's time is up (AWS Spot: the time in the notice; GCE: the notice given), it kills the VM's
backend (SIGKILL; a Freeze: SIGSTOP) and brings it back after the event's duration (SIGCONT),
then ends the event (Azure: complete; AWS: the notice withdrawn; GCE: maintenance-event NONE).

Prints one markdown table and the command line. Numbers are printed, never asserted; exit 1 when
a process it started died unexpectedly or a scenario could not run, 2 for a usage error or a
missing haproxy or binary.

usage: tests/bench/zero_loss.py [--quick] [--agent PATH] [--emulator PATH] [--service PATH] [--json FILE]
                                [--rate N] [--vms N] [--only SCENARIO,...] [--logs DIR]
       (./quickstart bench zero-loss ...)
"""
import argparse
import asyncio
import collections
import ctypes
import datetime
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUEST_TIMEOUT = 2.0  # a request that has no 200 within this long failed
TICK = 0.05            # how often haproxy's state and the emulator are read while an event plays
BACK_TIMEOUT = 30.0    # how long the VM may take to be back in haproxy's pool after the event
SETTLE = 2.0           # load before the first notice and after each event

# The backend: SIGKILL'ed with its parent (prctl PR_SET_PDEATHSIG), so nothing outlives the script.
BACKEND = r"""
import ctypes, http.server, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
if os.getppid() != int(sys.argv[3]):
    sys.exit(1)
body = sys.argv[2].encode()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
class Server(http.server.ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 256
Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def log(*a):
    print("[zero-loss]", *a, file=sys.stderr, flush=True)


class Failure(Exception):
    """The scenario could not run (a process died, a state never came)."""


def _pdeathsig():
    # runs in the child between fork and exec; only used while this script has no other thread
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def free_ports(n):
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def http(method, url, body=None, headers=None, timeout=2.0):
    """(status, text); status 0 when nothing answered."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (OSError, ValueError):
        return 0, ""


class Processes:
    """Every child: its own process group, its log in the run's folder, watched for dying."""

    def __init__(self, folder):
        self.folder = folder
        self.items = collections.OrderedDict()  # name -> [Popen, expected alive]

    def start(self, name, argv, threads_running=False):
        out = open(os.path.join(self.folder, name + ".log"), "ab")
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, preexec_fn=None if threads_running else _pdeathsig)
        finally:
            out.close()
        self.items[name] = [p, True]
        return p

    def log_tail(self, name, lines=5):
        try:
            with open(os.path.join(self.folder, name + ".log"), errors="replace") as f:
                return " | ".join(f.read().splitlines()[-lines:])
        except OSError:
            return ""

    def check(self):
        for name, (p, expected) in self.items.items():
            if expected and p.poll() is not None:
                raise Failure(f"{name} died unexpectedly (exit {p.returncode}): {self.log_tail(name)}")

    def signal(self, name, sig):
        p = self.items[name][0]
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass

    def kill(self, name):
        self.items[name][1] = False
        self.signal(name, signal.SIGKILL)
        try:
            self.items[name][0].wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def stop_all(self):
        live = [(n, p) for n, (p, _) in self.items.items() if p.poll() is None]
        for n, p in reversed(live):
            self.items[n][1] = False
            for sig in (signal.SIGCONT, signal.SIGTERM):  # SIGCONT: a frozen backend stops too
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 5
        for n, p in live:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for n, p in live:  # the group too: nothing a child started is left
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log(f"{n} (pid {p.pid}) did not stop")


class Load:
    """A steady load through haproxy on a thread of its own (asyncio): one new connection per
    request, GET /, failed unless a 200 comes within REQUEST_TIMEOUT."""

    def __init__(self, port, rate):
        self.port, self.rate = port, rate
        self.sent = self.failed = 0
        self.reasons = collections.Counter()
        self.fail_times = []
        self._stop = False
        self._thread = None

    async def _get(self):
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        try:
            writer.write(b"GET / HTTP/1.1\r\nHost: zero-loss\r\nConnection: close\r\n\r\n")
            await writer.drain()
            status_line = await reader.readline()
            rest = await reader.read()
        finally:
            writer.close()
        parts = status_line.split()
        status = parts[1].decode(errors="replace") if len(parts) >= 2 else "none"
        if status != "200":
            return "status " + status
        if not rest.split(b"\r\n\r\n", 1)[-1].startswith(b"vm"):
            return "not a backend's answer"
        return None

    async def _one(self):
        t = time.monotonic()
        try:
            reason = await asyncio.wait_for(self._get(), REQUEST_TIMEOUT)
        except asyncio.TimeoutError:
            reason = "timeout"
        except OSError as e:
            reason = type(e).__name__
        if reason is not None:
            self.failed += 1
            self.reasons[reason] += 1
            self.fail_times.append(t)

    async def _main(self):
        loop = asyncio.get_running_loop()
        tasks = set()
        step = 1.0 / self.rate
        next_at = loop.time()
        while not self._stop:
            task = asyncio.ensure_future(self._one())
            self.sent += 1
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            next_at += step
            delay = next_at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            elif delay < -1.0:  # fell behind by a second: do not burst to catch up
                next_at = loop.time()
        if tasks:
            await asyncio.wait(list(tasks), timeout=REQUEST_TIMEOUT + 1)

    def _run(self):
        try:
            asyncio.run(self._main())
        except Exception as e:  # the run reports it (Run.tick)
            self.error = f"{type(e).__name__}: {e}"

    def start(self):
        self.error = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self):
        if self._thread is not None:
            self._stop = True
            self._thread.join(timeout=REQUEST_TIMEOUT + 5)
            self._thread = None


class Haproxy:
    def __init__(self, sock):
        self.sock = sock

    def show_stat(self):
        """{server: status} of backend "vms"; {} when the socket does not answer."""
        try:
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(1.0)
            s.connect(self.sock)
            s.sendall(b"show stat\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
        except OSError:
            return {}
        lines = data.decode(errors="replace").splitlines()
        if not lines or not lines[0].startswith("# "):
            return {}
        head = lines[0][2:].split(",")
        i_px, i_sv, i_st = head.index("pxname"), head.index("svname"), head.index("status")
        out = {}
        for line in lines[1:]:
            f = line.split(",")
            if len(f) > i_st and f[i_px] == "vms" and f[i_sv] not in ("BACKEND", "FRONTEND"):
                out[f[i_sv]] = f[i_st]
        return out


def in_pool(status):
    return status.startswith("UP")  # "UP 1/2" is going down but still sent traffic


def haproxy_config(checks, front_port, sock, vms):
    """checks: "backend" (GET / on the backend), "agent" (the agent's /readyz), "service" (the
    service's own /readyz: the library arm)."""
    lines = [
        "global",
        f"    stats socket {sock} mode 600 level admin",
        "    maxconn 4000",
        "    nbthread 1",
        "defaults",
        "    mode http",
        "    timeout connect 1s",
        "    timeout client 5s",
        "    timeout server 5s",
        "    timeout check 1s",
        "    default-server inter 500ms fall 2 rise 2",
        "frontend zero_loss",
        f"    bind 127.0.0.1:{front_port}",
        "    default_backend vms",
        "backend vms",
        "    balance roundrobin",
        "    option httpchk GET /" if checks == "backend" else "    option httpchk GET /readyz",
    ]
    for vm in vms:
        check = f"check port {vm['metrics_port']}" if checks == "agent" else "check"
        lines.append(f"    server {vm['name']} 127.0.0.1:{vm['port']} {check}")
    return "\n".join(lines) + "\n"


# ---- the scenarios ----

def scenarios(quick):
    if quick:
        # 25 s: NotBefore less --hook-deadline (15 s) leaves room for --lb-drain 3; a shorter
        # notice is not approved with it (it starts at NotBefore), which is not what is measured.
        return [dict(key="azure-reboot", title="Azure Reboot, 25 s notice, approved", cloud="azure",
                     type="Reboot", notice=25, duration=4, targets=[0], action="kill")]
    return [
        dict(key="azure-reboot", title="Azure Reboot, 30 s notice, approved: vm0 then vm1", cloud="azure",
             type="Reboot", notice=30, duration=10, targets=[0, 1], action="kill"),
        dict(key="azure-preempt", title="Azure Preempt, 30 s notice", cloud="azure", type="Preempt",
             notice=30, duration=10, targets=[0], action="kill"),
        dict(key="aws-spot", title="AWS Spot interruption, 2 min notice", cloud="aws", notice=120, duration=10,
             targets=[0], action="kill"),
        dict(key="gce-terminate", title="GCE TERMINATE_ON_HOST_MAINTENANCE, 60 s notice", cloud="gce",
             notice=60, duration=10, targets=[0], action="kill"),
        dict(key="azure-freeze", title="Azure Freeze (a 5 s pause), 30 s notice", cloud="azure", type="Freeze",
             notice=30, duration=5, targets=[0], action="stop"),
    ]


ARMS = [
    dict(key="without", title="without forewarn", checks="backend", flags=[]),
    dict(key="lb-drain-0", title="forewarn, --lb-drain 0", checks="agent", flags=["--lb-drain", "0"]),
    dict(key="lb-drain-3", title="forewarn, --lb-drain 3", checks="agent", flags=["--lb-drain", "3"]),
    # No agent: the backend is examples/balanced_service, the library in the service itself (its own
    # /readyz, approval_options::unready_for 3 s, ready() once no request is in flight). Azure only.
    dict(key="library", title="the library in the service (examples/balanced_service), --lb-drain 3",
         checks="service", flags=[], clouds=("azure",)),
]

# The library arm's backend starts through this, so that it dies with the benchmark even when
# restarted while the load's thread runs (no preexec_fn then): PR_SET_PDEATHSIG survives exec.
EXEC_WITH_PDEATHSIG = ("import ctypes, os, signal, sys; ctypes.CDLL(None).prctl(1, signal.SIGKILL); "
                       "os.execv(sys.argv[1], sys.argv[1:])")


class Run:
    """One scenario in one arm: every process started, the events played, everything stopped."""

    def __init__(self, args, scenario, arm, agent_flags, folder):
        self.args, self.sc, self.arm, self.flags, self.folder = args, scenario, arm, agent_flags, folder
        self.procs = Processes(folder)
        self.vms = []
        self.haproxy = None
        self.load = None
        self.emulators = {}  # vm index -> base URL (Azure: every VM the same)
        self.req_since = {}
        self.t0 = time.monotonic()
        self.history = []  # (t, server, status) whenever a server's status changed
        self.last = {}
        self.row = dict(scenario=scenario["key"], title=scenario["title"], arm=arm["key"], arm_title=arm["title"],
                        events=[], note="")

    # -- starting --
    def start_emulator(self, name, vm_names):
        scenario_file = os.path.join(self.folder, name + ".json")
        with open(scenario_file, "w") as f:
            json.dump({"name": "zero-loss", "rate_limit": 0, "vms": [{"name": n} for n in vm_names]}, f)
        # --rate-limit 0: an agent polling every 200 ms beside its approvals would meet IMDS's 5
        # requests/s per VM, which is not what this measures.
        self.procs.start(name, [self.args.emulator, "--listen", "127.0.0.1:0", "--scenario", scenario_file,
                                "--rate-limit", "0", "--exit-with-parent"])
        path = os.path.join(self.folder, name + ".log")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            self.procs.check()
            with open(path, errors="replace") as f:
                first = f.readline()
            if first.startswith("listening on ") and first.endswith("\n"):
                return first.split()[2]
            time.sleep(0.05)
        raise Failure(f"{name} printed no 'listening on' line within 10 s")

    def start_backend(self, vm):
        # no preexec_fn (the load's thread may run): the backend sets its own PR_SET_PDEATHSIG
        if self.arm["checks"] == "service":
            argv = [sys.executable, "-c", EXEC_WITH_PDEATHSIG, self.args.service, "--listen", f"127.0.0.1:{vm['port']}",
                    "--endpoint", self.emulators[vm["index"]], "--self", vm["name"], "--name", vm["name"],
                    "--lb-drain", "3", "--interval", "200"]
            vm["agent_argv"] = argv[3:]
        else:
            argv = [sys.executable, "-c", BACKEND, str(vm["port"]), vm["name"], str(os.getpid())]
        self.procs.start(vm["name"], argv, threads_running=True)
        self.procs.items[vm["name"]][1] = True
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            self.procs.check()
            status, text = http("GET", f"http://127.0.0.1:{vm['port']}/", timeout=1)
            if status == 200 and text == vm["name"]:
                return
            time.sleep(0.05)
        raise Failure(f"backend {vm['name']} does not answer on port {vm['port']}")

    def start(self):
        n = self.args.vms
        ports = free_ports(2 * n + 1)
        self.vms = [dict(name=f"vm{i}", index=i, port=ports[2 * i], metrics_port=ports[2 * i + 1]) for i in range(n)]
        front = ports[-1]
        names = [v["name"] for v in self.vms]
        if self.sc["cloud"] == "azure":
            # One emulator: every VM sees the same Scheduled Events, as in one availability set;
            # each agent's endpoint names its VM (/emulator/vm/NAME), so approved_by says who approved.
            url = self.start_emulator("emulator", names)
            self.emulators = {i: f"{url}/emulator/vm/{names[i]}" for i in range(n)}
        else:
            self.emulators = {i: self.start_emulator(f"emulator-{names[i]}", [names[i]]) for i in range(n)}
        for vm in self.vms:
            self.start_backend(vm)
        interval = "1000" if self.sc["cloud"] == "aws" else "200"
        for i, vm in enumerate(self.vms if self.arm["checks"] != "service" else []):
            argv = [self.args.agent, "--cloud", self.sc["cloud"], "--endpoint", self.emulators[i], "--self", vm["name"],
                    "--metrics-listen", f"127.0.0.1:{vm['metrics_port']}", "--interval", interval,
                    "--approve", "own"] + self.flags
            vm["agent_argv"] = argv
            self.procs.start("agent-" + vm["name"], argv)
        for vm in self.vms:
            deadline = time.monotonic() + 15
            port = vm["port"] if self.arm["checks"] == "service" else vm["metrics_port"]
            while True:
                self.procs.check()
                if http("GET", f"http://127.0.0.1:{port}/readyz", timeout=1)[0] == 200:
                    break
                if time.monotonic() > deadline:
                    raise Failure(f"agent-{vm['name']}'s /readyz is not 200 within 15 s")
                time.sleep(0.1)
        sock = os.path.join(self.folder, "haproxy.sock")
        conf = os.path.join(self.folder, "haproxy.cfg")
        with open(conf, "w") as f:
            f.write(haproxy_config(self.arm["checks"], front, sock, self.vms))
        self.procs.start("haproxy", [self.args.haproxy, "-f", conf, "-db"])
        self.haproxy = Haproxy(sock)
        self.wait(lambda: all(self.last.get(v["name"]) == "UP" for v in self.vms),
                  15, "haproxy has not every VM UP within 15 s")
        self.front = front

    # -- watching --
    def tick(self):
        self.procs.check()
        if self.load is not None and self.load.error:
            raise Failure("the load generator stopped: " + self.load.error)
        now = time.monotonic()
        for server, status in self.haproxy.show_stat().items():
            if self.last.get(server) != status:
                self.last[server] = status
                self.history.append((now, server, status))

    def wait(self, cond, timeout, what):
        deadline = time.monotonic() + timeout
        while True:
            self.tick()
            if cond():
                return
            if time.monotonic() > deadline:
                raise Failure(what)
            time.sleep(TICK)

    def sleep(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.tick()
            time.sleep(min(TICK, max(0, end - time.monotonic())))

    def out_of_pool_at(self, server, after):
        for t, s, status in self.history:
            if s == server and t >= after and not in_pool(status):
                return t
        return None

    def control(self, i, method, route, body=None):
        status, text = http(method, f"{self.emulators[i]}/emulator/v1/{route}", body)
        if status != 200:
            raise Failure(f"{method} {route}: {status} {text[:200]}")
        return json.loads(text) if text.strip() else {}

    # -- the host's side --
    def take_down(self, vm):
        if self.sc["action"] == "stop":
            self.procs.signal(vm["name"], signal.SIGSTOP)
        else:
            self.procs.kill(vm["name"])

    def bring_back(self, vm):
        if self.sc["action"] == "stop":
            self.procs.signal(vm["name"], signal.SIGCONT)
        else:
            self.start_backend(vm)

    def play(self, target):
        vm = self.vms[target]
        cloud = self.sc["cloud"]
        ev = dict(vm=vm["name"])
        if cloud == "azure":
            t0 = time.monotonic()
            answer = self.control(target, "POST", "azure/events", {
                "EventType": self.sc["type"], "Resources": [vm["name"]], "notice": f"{self.sc['notice']}s",
                "DurationInSeconds": self.sc["duration"], "impact": f"{self.sc['duration'] + 120}s"})
            t0 = (t0 + time.monotonic()) / 2
            eid = answer["EventId"]
            state = {}

            def started():
                nonlocal state
                state = next(e for e in self.control(target, "GET", "state")["events"] if e["EventId"] == eid)
                return state["state"] != "Scheduled"
            self.wait(started, self.sc["notice"] + 15, f"event {eid} did not start within its notice and 15 s")
            t_start = time.monotonic()
            self.take_down(vm)
            ev["start_s"] = (state["started_ms"] - state["appeared_ms"]) / 1000
            ev["approved_by"] = state["approved_by"]
            ev["approval_s"] = self.approval_time(target, eid, state["appeared_ms"])
            self.sleep(self.sc["duration"])
            self.bring_back(vm)
            self.control(target, "POST", f"azure/events/{eid}/complete")
        elif cloud == "aws":
            t0 = time.monotonic()
            self.control(target, "POST", "aws/spot", {"action": "terminate", "in": f"{self.sc['notice']}s"})
            t0 = (t0 + time.monotonic()) / 2
            self.sleep(self.sc["notice"])  # the host's side: the instance is interrupted at the notice's time
            t_start = time.monotonic()
            self.take_down(vm)
            ev["start_s"] = t_start - t0
            self.sleep(self.sc["duration"])
            self.bring_back(vm)
            self.control(target, "DELETE", "aws/spot")
        else:  # gce
            t0 = time.monotonic()
            self.control(target, "POST", "gce", {"instance/maintenance-event": "TERMINATE_ON_HOST_MAINTENANCE"})
            t0 = (t0 + time.monotonic()) / 2
            self.sleep(self.sc["notice"])
            t_start = time.monotonic()
            self.take_down(vm)
            ev["start_s"] = t_start - t0
            self.sleep(self.sc["duration"])
            self.bring_back(vm)
            self.control(target, "POST", "gce", {"instance/maintenance-event": "NONE"})
        t_end = time.monotonic()
        out = self.out_of_pool_at(vm["name"], t0)
        ev["out_of_pool_s"] = None if out is None else out - t0
        ev["out_before_start"] = out is not None and out <= t_start
        try:
            self.wait(lambda: self.last.get(vm["name"]) == "UP", BACK_TIMEOUT, "")
            ev["back_in_pool"] = True
            last_change = next(t for t, s, st in reversed(self.history) if s == vm["name"])
            ev["back_after_end_s"] = max(0.0, last_change - t_end)
        except Failure:
            self.tick()  # a process that died is the failure, not the VM that stayed out
            ev["back_in_pool"] = False
        return ev

    def approval_time(self, target, eid, appeared_ms):
        """When the emulator logged the first 200 to a StartRequests naming eid (None: never)."""
        since = self.req_since.get(target, 0)
        found = None
        for _ in range(100):  # bounded paging
            page = self.control(target, "GET", f"requests?since={since}")
            reqs = page.get("requests", [])
            for r in reqs:
                path = r["target"]
                if path.startswith("/emulator/vm/"):  # the VM named by the agent's endpoint: the service's path after it
                    path = "/" + path.split("/", 4)[-1]
                if (found is None and r["method"] == "POST" and path.startswith("/metadata/scheduledevents")
                        and r["status"] == 200 and eid in r.get("body", "")):
                    found = (r["time_ms"] - appeared_ms) / 1000
            if not reqs or page.get("next", since) == since:
                break
            since = page["next"]
        self.req_since[target] = since
        return found

    def execute(self):
        row = self.row
        try:
            self.start()
            self.load = Load(self.front, self.args.rate)
            self.load.start()
            self.sleep(SETTLE)
            for target in self.sc["targets"]:
                row["events"].append(self.play(target))
                self.sleep(SETTLE)
        finally:
            if self.load is not None:
                self.load.stop()
                row.update(sent=self.load.sent, failed=self.load.failed, reasons=dict(self.load.reasons))
            self.procs.stop_all()
        return row


# ---- the report ----

def fmt_s(v):
    return "—" if v is None else f"{v:.1f}"


def table(rows):
    out = ["| scenario | arm | requests sent | failed | notice → out of pool (s) | notice → approval (s) "
           "| notice → start (s) | back in pool | note |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        evs = r.get("events", [])
        def col(key):
            return " / ".join(fmt_s(e.get(key)) for e in evs) if evs else "—"
        back = " / ".join("yes" if e.get("back_in_pool") else "no" for e in evs) if evs else "—"
        sent = str(r["sent"]) if "sent" in r else "—"
        failed = f"**{r['failed']}**" if "failed" in r else "—"
        out.append(f"| {r['title']} | {r['arm_title']} | {sent} | {failed} | {col('out_of_pool_s')} | "
                   f"{col('approval_s')} | {col('start_s')} | {back} | {r.get('note', '')} |")
    return "\n".join(out)


def notes_for(sc, row):
    notes = []
    if row.get("error"):
        notes.append("could not run: " + row["error"])
    for e in row.get("events", []):
        if sc["cloud"] == "azure" and sc["type"] == "Preempt" and e.get("approved_by"):
            notes.append("the emulator started the Preempt at the agent's approval (it starts any Scheduled "
                         "event approved): not the unapprovable Preempt meant")
            break
    for e in row.get("events", []):
        if e.get("approved_by") and e["approved_by"] != e["vm"]:
            notes.append(f"{e['vm']}'s event approved by {e['approved_by']}, not by its own agent")
    if sc["cloud"] in ("aws", "gce") and row.get("events"):
        notes.append("no approval in this notice; start: the host's side at the notice's end")
    return "; ".join(notes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one Azure Reboot (25 s notice) per arm: about 1 min (CI's zero-loss stage)")
    ap.add_argument("--agent", default=os.path.join(SOURCE, "build/debug/tools/watch/forewarn-watch"))
    ap.add_argument("--emulator", default=os.path.join(SOURCE, "build/debug/tools/emulator/forewarn-emulator"))
    ap.add_argument("--service", default=os.path.join(SOURCE, "build/debug/examples/balanced_service/forewarn-balanced-service"),
                    help="examples/balanced_service's program, the library arm's backend")
    ap.add_argument("--json", metavar="FILE", help="also write the rows there")
    ap.add_argument("--rate", type=float, default=150, help="requests per second through haproxy (default 150)")
    ap.add_argument("--vms", type=int, default=2, help="VMs behind haproxy (default 2, at least 2)")
    ap.add_argument("--only", metavar="SCENARIO,...", help="only these scenarios (azure-reboot, azure-preempt, "
                    "aws-spot, gce-terminate, azure-freeze)")
    ap.add_argument("--logs", metavar="DIR", help="keep every process's log and haproxy's config there")
    ap.add_argument("--command", help=argparse.SUPPRESS)  # how it was started, for the report (./quickstart)
    args = ap.parse_args()
    if args.vms < 2 or not (1 <= args.rate <= 2000):
        ap.error("--vms is at least 2, --rate between 1 and 2000")

    args.haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.access("/usr/sbin/haproxy", os.X_OK) else None)
    if not args.haproxy:
        print("zero-loss: haproxy is missing: apt-get install haproxy", file=sys.stderr)
        return 2
    for what, path in (("forewarn-watch", args.agent), ("forewarn-emulator", args.emulator),
                       ("forewarn-balanced-service", args.service)):
        if not os.access(path, os.X_OK):
            print(f"zero-loss: no {what} at {path}: build it (./quickstart build debug) or pass its path "
                  f"(--agent, --emulator, --service)", file=sys.stderr)
            return 2

    help_text = subprocess.run([args.agent, "--help"], capture_output=True, text=True, timeout=10).stdout
    has_lb_drain = "--lb-drain" in help_text
    version = subprocess.run([args.agent, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    hv = subprocess.run([args.haproxy, "-v"], capture_output=True, text=True, timeout=10).stdout.splitlines()
    chosen = scenarios(args.quick)
    if args.only:
        keys = set(args.only.split(","))
        unknown = keys - {s["key"] for s in scenarios(False)}
        if unknown:
            ap.error("unknown scenario: " + ", ".join(sorted(unknown)))
        chosen = [s for s in chosen if s["key"] in keys]

    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)

    command = args.command or " ".join(shlex.quote(a) for a in sys.argv)
    rows, status = [], 0
    started = time.monotonic()
    top = args.logs or tempfile.mkdtemp(prefix="zero-loss-")
    os.makedirs(top, exist_ok=True)
    try:
        for sc in chosen:
            for arm in ARMS:
                flags = list(arm["flags"])
                row = dict(scenario=sc["key"], title=sc["title"], arm=arm["key"], arm_title=arm["title"], note="")
                if sc["cloud"] not in arm.get("clouds", (sc["cloud"],)):
                    continue  # the library arm's service reads Azure's Scheduled Events only
                if arm["flags"] and not has_lb_drain:
                    if arm["key"] == "lb-drain-0":
                        flags = []  # today's behaviour, which --lb-drain 0 keeps
                        row["arm_title"] = "forewarn (no --lb-drain: today's behaviour)"
                    else:
                        row["note"] = "not in this build (forewarn-watch --help has no --lb-drain)"
                        rows.append(row)
                        log(f"{sc['key']} / {arm['key']}: not in this build")
                        continue
                folder = os.path.join(top, f"{sc['key']}.{arm['key']}")
                os.makedirs(folder, exist_ok=True)
                log(f"{sc['key']} / {arm['key']} ...")
                run = Run(args, sc, arm, flags, folder)
                t = time.monotonic()
                run.row["arm_title"] = row["arm_title"]
                try:
                    run.execute()
                except Failure as e:
                    run.row["error"] = str(e)
                    status = 1
                row = run.row
                row["agent_argv"] = [v.get("agent_argv") for v in run.vms]
                row["seconds"] = round(time.monotonic() - t, 1)
                row["note"] = "; ".join(x for x in (row.get("note", ""), notes_for(sc, row)) if x)
                rows.append(row)
                log(f"{sc['key']} / {arm['key']}: sent {row.get('sent')} failed {row.get('failed')} "
                    f"in {row['seconds']} s {row['note']}")
    except KeyboardInterrupt:
        log("interrupted: every process stopped")
        status = 130
    finally:
        if not args.logs:
            shutil.rmtree(top, ignore_errors=True)

    print(f"Measured {datetime.date.today().isoformat()} with `{command}` ({os.cpu_count()} cores; "
          f"{version}; {hv[0] if hv else 'haproxy'}; {args.rate:g} requests/s through haproxy, {args.vms} VMs; "
          f"{time.monotonic() - started:.0f} s in all).")
    print()
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(command=command, date=datetime.date.today().isoformat(), cores=os.cpu_count(),
                           agent=version, haproxy=hv[0] if hv else "", rate=args.rate, vms=args.vms,
                           lb_drain_in_build=has_lb_drain, rows=rows), f, indent=2)
            f.write("\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
