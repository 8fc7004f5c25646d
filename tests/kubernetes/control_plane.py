#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A real Kubernetes control plane on loopback for the tests: etcd, kube-apiserver and, when asked,
kube-controller-manager, each on a free 127.0.0.1 port, in a private temporary folder.

usage: control_plane.py [--controller-manager] -- COMMAND ARGS...

Starts the control plane, creates the namespace `forewarn` and a Node `node-1` (no kubelet behind
it), runs COMMAND with these variables added, stops every process it started and exits with
COMMAND's exit code:

  FOREWARN_TEST_KUBE_SERVER            https://127.0.0.1:PORT
  FOREWARN_TEST_KUBE_CA                the CA that signed the server's certificate (PEM file)
  FOREWARN_TEST_KUBE_ADMIN_TOKEN       a bearer token of user `admin`, group system:masters
  FOREWARN_TEST_KUBE_AGENT_TOKEN       a bearer token of system:serviceaccount:forewarn:forewarn-watch
                                       (its groups are a service account's; no RBAC is granted to it)
  FOREWARN_TEST_KUBECONFIG             a kubeconfig with the agent's token
  FOREWARN_TEST_KUBE_ADMIN_KUBECONFIG  a kubeconfig with the admin's token
  FOREWARN_TEST_KUBE_NODE              node-1
  FOREWARN_TEST_KUBE_DIR               the temporary folder (logs, certificates, kubeconfigs)

--controller-manager also runs kube-controller-manager (all default controllers but
nodelifecycle and daemonset), so service accounts, their token secrets, namespace deletion,
garbage collection and the workload controllers work.

Binaries: kube-apiserver and kube-controller-manager from $FOREWARN_KUBE_BIN_DIR, else
$FOREWARN_KUBE_CACHE (where `./quickstart kubernetes` put them when it was set), else the newest
/var/cache/forewarn/kubernetes-*/ (`./quickstart kubernetes` builds them); etcd from /usr/bin
(Debian's etcd-server). Without them it says why on stderr and exits 77, ctest's skip code.
A start that fails prints the end of the failing process's log and exits 1. With
FOREWARN_KUBE_KEEP_LOGS=DIR the processes' logs are copied there before the folder is removed.
Neither token is ever printed; the processes' logs hold none.

As a library:

    from control_plane import ControlPlane
    with ControlPlane(controller_manager=False) as cp:
        status, node = cp.api("GET", "/api/v1/nodes/" + cp.node)
        status, _ = cp.api("GET", "/api/v1/nodes", token=cp.agent_token)   # 403

ControlPlane raises NotBuilt (the binaries are missing) or StartupError (a process failed or a
wait ran out; .log names its log file, .log_tail holds its end). Its processes get SIGKILL if the
thread that started them ends (PR_SET_PDEATHSIG): start it from the thread that runs the tests.

The kube-apiserver of `./quickstart kubernetes` (1.20.2 built with Go 1.19, vendored
modern-go/reflect2 v1.0.1) crashes ("fatal error: fault" in reflect2's UnsafeIterate) when it
pretty-prints JSON: a User-Agent starting with curl/, Wget or Mozilla, or ?pretty=true. Give curl
`-A forewarn-test`. A process that died while COMMAND ran is reported on stderr.
"""
import argparse
import ctypes
import functools
import glob
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

__all__ = ["ControlPlane", "NotBuilt", "StartupError", "SKIP_EXIT"]

SKIP_EXIT = 77
ETCD = "/usr/bin/etcd"
CACHE_GLOB = "/var/cache/forewarn/kubernetes-*/kube-apiserver"
SA_ISSUER = "https://kubernetes.default.svc"
AGENT_USER = "system:serviceaccount:forewarn:forewarn-watch"
AGENT_UID = "forewarn-watch"
AGENT_GROUPS = "system:serviceaccounts,system:serviceaccounts:forewarn,system:authenticated"
NODE = "node-1"
STOP_GRACE = 10.0  # seconds between SIGTERM and SIGKILL
LOG_TAIL = 40


class NotBuilt(Exception):
    """A binary the control plane needs is not there: the caller should skip (exit 77)."""


class StartupError(Exception):
    """The control plane did not come up; .log is the log of the process at fault, if any."""

    def __init__(self, message, log=None):
        super().__init__(message)
        self.log = log
        self.log_tail = None  # its last LOG_TAIL lines, read before the folder is removed


def find_binaries(controller_manager):
    """The folder holding kube-apiserver (and kube-controller-manager); raises NotBuilt."""
    if not os.access(ETCD, os.X_OK):
        raise NotBuilt("etcd not installed (%s): apt-get install etcd-server" % ETCD)
    wanted = ["kube-apiserver"] + (["kube-controller-manager"] if controller_manager else [])
    override = os.environ.get("FOREWARN_KUBE_BIN_DIR") or os.environ.get("FOREWARN_KUBE_CACHE")
    if override:
        candidates = [override]
    else:
        found = glob.glob(CACHE_GLOB)
        found.sort(key=lambda p: os.stat(p).st_mtime, reverse=True)
        candidates = [os.path.dirname(p) for p in found]
    for d in candidates:
        if all(os.access(os.path.join(d, b), os.X_OK) for b in wanted):
            return d
    raise NotBuilt("control plane not built: run ./quickstart kubernetes")


def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (held together while chosen, so all differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def tail(path, n=LOG_TAIL):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError as e:
        return "(no log: %s)" % e
    return "\n".join(lines[-n:])


def crash_report(path, n=18):
    """The first lines of a Go panic or fatal error in the log at path ("" if none)."""
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for i, line in enumerate(lines):
        if re.match(r"(panic: |fatal error: |unexpected fault address|F\d{4} )", line):
            return "\n".join(lines[max(i - 1, 0):i + n])
    return ""


def _yaml_scalar(s):
    """s as kubectl would write it: plain when safe, else double-quoted (JSON is valid YAML)."""
    return s if re.fullmatch(r"[A-Za-z0-9_./+-][A-Za-z0-9_./:+-]*", s) and not s.endswith(":") \
        else json.dumps(s)


def _child_setup():
    """In each child before exec: die with this process (SIGKILL), and take the default signal
    mask (the parent blocks SIGINT and SIGTERM while it spawns)."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    if _libc is not None:
        _libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG


try:
    _libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
except OSError:
    _libc = None


class ControlPlane:
    """etcd + kube-apiserver (+ kube-controller-manager) on loopback; a context manager.

    Attributes once started: server, ca, admin_token, agent_token, dir, node, kubeconfig (the
    agent's), admin_kubeconfig, startup_seconds.
    """

    def __init__(self, controller_manager=False, bin_dir=None, api_timeout=90.0,
                 ready_timeout=60.0, etcd_timeout=30.0, controller_timeout=60.0):
        self.controller_manager = controller_manager
        self.bin_dir = bin_dir
        self.api_timeout = api_timeout
        self.ready_timeout = ready_timeout
        self.etcd_timeout = etcd_timeout
        self.controller_timeout = controller_timeout
        self.dir = None
        self.server = None
        self.ca = None
        self.admin_token = None
        self.agent_token = None
        self.kubeconfig = None
        self.admin_kubeconfig = None
        self.node = NODE
        self.startup_seconds = None
        self._procs = []  # (name, Popen, log path), in start order
        self._ssl = None
        self._opener = None

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        t0 = time.monotonic()
        if self.bin_dir is None:
            self.bin_dir = find_binaries(self.controller_manager)
        self.dir = tempfile.mkdtemp(prefix="forewarn-kube.")
        try:
            self._start()
        except BaseException as e:
            if isinstance(e, StartupError) and e.log:
                e.log_tail = tail(e.log)
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _start(self):
        d = self.dir
        self._child_env = dict(os.environ)
        for k in ("NO_PROXY", "no_proxy"):  # loopback only, whatever proxy the caller has
            v = self._child_env.get(k, "")
            self._child_env[k] = ",".join(x for x in (v, "127.0.0.1,localhost") if x)

        # etcd
        client_port, peer_port = free_ports(2)
        etcd_url = "http://127.0.0.1:%d" % client_port
        peer_url = "http://127.0.0.1:%d" % peer_port
        etcd = self._spawn("etcd", [
            ETCD, "--name", "default", "--data-dir", os.path.join(d, "etcd-data"),
            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
            "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", "default=" + peer_url, "--initial-cluster-state", "new",
            "--listen-metrics-urls", "", "--enable-pprof=false"])
        plain = urllib.request.build_opener(urllib.request.ProxyHandler({}))

        def etcd_healthy():
            try:
                with plain.open(etcd_url + "/health", timeout=5) as r:
                    return r.status == 200 and json.load(r).get("health") == "true"
            except (OSError, ValueError):
                return False
        self._wait("etcd's /health", etcd, self.etcd_timeout, etcd_healthy)

        # certificates and keys
        self.ca = os.path.join(d, "ca.crt")
        self._pki()
        self.admin_token = secrets.token_hex(32)
        self.agent_token = secrets.token_hex(32)
        tokens = os.path.join(d, "tokens.csv")
        self._write(tokens, '%s,admin,admin,"system:masters"\n%s,%s,%s,"%s"\n' % (
            self.admin_token, self.agent_token, AGENT_USER, AGENT_UID, AGENT_GROUPS))

        # kube-apiserver
        (api_port,) = free_ports(1)
        self.server = "https://127.0.0.1:%d" % api_port
        self._ssl = ssl.create_default_context(cafile=self.ca)
        self._opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=self._ssl))
        os.mkdir(os.path.join(d, "apiserver-certs"), 0o700)
        apiserver = self._spawn("kube-apiserver", [
            os.path.join(self.bin_dir, "kube-apiserver"),
            "--etcd-servers=" + etcd_url,
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            "--secure-port=%d" % api_port, "--insecure-port=0",
            "--tls-cert-file=" + os.path.join(d, "apiserver.crt"),
            "--tls-private-key-file=" + os.path.join(d, "apiserver.key"),
            "--client-ca-file=" + self.ca,
            "--token-auth-file=" + tokens,
            "--authorization-mode=RBAC",
            "--service-account-key-file=" + os.path.join(d, "sa.pub"),
            "--service-account-signing-key-file=" + os.path.join(d, "sa.key"),
            "--service-account-issuer=" + SA_ISSUER,
            "--api-audiences=" + SA_ISSUER,
            "--service-cluster-ip-range=10.0.0.0/24",
            "--cert-dir=" + os.path.join(d, "apiserver-certs"),
            "--allow-privileged=true",
            # The Service `kubernetes` gets no Endpoints: 127.0.0.1 is refused there (loopback),
            # and no pod runs here to use them; without this an error every 10 s in the log.
            "--endpoint-reconciler-type=none"])

        def healthz():
            status, body = self.api("GET", "/healthz", timeout=5)
            return status == 200 and isinstance(body, str) and body.strip() == "ok"
        self._wait("kube-apiserver's /healthz", apiserver, self.api_timeout, healthz)

        def usable():
            if self.api("GET", "/api/v1/namespaces/default", timeout=5)[0] != 200:
                return False
            status, roles = self.api("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                                     timeout=10)
            return status == 200 and isinstance(roles, dict) and any(
                r.get("metadata", {}).get("name") == "cluster-admin" for r in roles.get("items", []))
        self._wait("the API (namespace default, the bootstrap cluster roles)", apiserver,
                   self.ready_timeout, usable)

        # kubeconfigs
        self.admin_kubeconfig = os.path.join(d, "admin.kubeconfig")
        self.kubeconfig = os.path.join(d, "agent.kubeconfig")
        self._write(self.admin_kubeconfig, self._kubeconfig_text("admin", self.admin_token))
        self._write(self.kubeconfig, self._kubeconfig_text("forewarn-watch", self.agent_token))

        # kube-controller-manager
        if self.controller_manager:
            cm = self._spawn("kube-controller-manager", [
                os.path.join(self.bin_dir, "kube-controller-manager"),
                "--kubeconfig=" + self.admin_kubeconfig,
                "--controllers=*,-nodelifecycle,-daemonset",
                "--leader-elect=false",
                "--service-account-private-key-file=" + os.path.join(d, "sa.key"),
                "--root-ca-file=" + self.ca,
                "--use-service-account-credentials=false",
                "--secure-port=0", "--port=0"])

            def default_sa():
                return self.api("GET", "/api/v1/namespaces/default/serviceaccounts/default",
                                timeout=5)[0] == 200
            self._wait("kube-controller-manager (the service account default/default)", cm,
                       self.controller_timeout, default_sa)

        # the objects every test expects
        self._must("POST", "/api/v1/namespaces",
                   {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "forewarn"}})
        self._must("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}})

    def stop(self):
        """Stops every process started (reverse order; SIGTERM to its group, SIGKILL after
        STOP_GRACE seconds), copies the logs to $FOREWARN_KUBE_KEEP_LOGS if set, removes the
        folder. Safe to call more than once."""
        while self._procs:
            name, p, _ = self._procs[-1]
            _stop_group(p)
            self._procs.pop()
        if self.dir and os.path.isdir(self.dir):
            keep = os.environ.get("FOREWARN_KUBE_KEEP_LOGS")
            if keep:
                try:
                    os.makedirs(keep, exist_ok=True)
                    for log in glob.glob(os.path.join(self.dir, "*.log")):
                        shutil.copy(log, keep)
                except OSError as e:
                    print("control_plane: could not keep the logs in %s: %s" % (keep, e),
                          file=sys.stderr)
            shutil.rmtree(self.dir, ignore_errors=True)

    def exited(self):
        """[(name, exit status, the start of its crash report)] of the processes that died."""
        dead = []
        for name, p, log in self._procs:
            if p.poll() is not None:
                dead.append((name, p.returncode, crash_report(log)))
        return dead

    @property
    def pids(self):
        return {name: p.pid for name, p, _ in self._procs}

    def env(self):
        """The FOREWARN_TEST_KUBE_* variables for a test command."""
        return {
            "FOREWARN_TEST_KUBE_SERVER": self.server,
            "FOREWARN_TEST_KUBE_CA": self.ca,
            "FOREWARN_TEST_KUBE_ADMIN_TOKEN": self.admin_token,
            "FOREWARN_TEST_KUBE_AGENT_TOKEN": self.agent_token,
            "FOREWARN_TEST_KUBECONFIG": self.kubeconfig,
            "FOREWARN_TEST_KUBE_ADMIN_KUBECONFIG": self.admin_kubeconfig,
            "FOREWARN_TEST_KUBE_NODE": self.node,
            "FOREWARN_TEST_KUBE_DIR": self.dir,
        }

    # -- the API ---------------------------------------------------------------------------
    def api(self, method, path, body=None, token=None, content_type="application/json",
            timeout=30):
        """One request to the API server as the admin (or `token`): (status, parsed JSON or
        text). A connection that fails gives (0, the error's text)."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        req = urllib.request.Request(self.server + path, data=body, method=method)
        req.add_header("Authorization", "Bearer " + (token or self.admin_token))
        req.add_header("Accept", "application/json, */*")
        if body is not None:
            req.add_header("Content-Type", content_type)
        try:
            with self._opener.open(req, timeout=timeout) as r:
                status, data, ctype = r.status, r.read(), r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            status, data, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
        except (OSError, ssl.SSLError) as e:  # URLError is an OSError
            return 0, str(getattr(e, "reason", e))
        text = data.decode("utf-8", "replace")
        if "json" in ctype:
            try:
                return status, json.loads(text)
            except ValueError:
                pass
        return status, text

    def _must(self, method, path, body):
        status, answer = self.api(method, path, body)
        if status not in (200, 201):
            raise StartupError("%s %s answered %s: %s" % (method, path, status,
                                                          _short(answer)))
        return answer

    # -- helpers ---------------------------------------------------------------------------
    def _spawn(self, name, argv):
        log_path = os.path.join(self.dir, name + ".log")
        log = open(log_path, "wb")
        # No SIGINT/SIGTERM between the fork and the bookkeeping: every child is stopped.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            try:
                p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, cwd=self.dir, env=self._child_env,
                                     start_new_session=True, preexec_fn=_child_setup)
            except OSError as e:
                raise StartupError("%s did not start: %s" % (name, e), log_path)
            finally:
                log.close()
            self._procs.append((name, p, log_path))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return p

    def _wait(self, what, proc_record, timeout, ready):
        """Polls ready() until true; fails when the process exits or after timeout seconds."""
        name, p, log = next(r for r in self._procs if r[1] is proc_record)
        deadline = time.monotonic() + timeout
        delay = 0.1
        while True:
            if p.poll() is not None:
                raise StartupError("%s exited (status %s) before %s was ready"
                                   % (name, p.returncode, what), log)
            if ready():
                return
            if time.monotonic() >= deadline:
                raise StartupError("%s: %s not ready after %.0f s" % (name, what, timeout), log)
            time.sleep(delay)
            delay = min(delay * 1.5, 1.0)

    def _openssl(self, *args):
        r = subprocess.run(["openssl"] + list(args), cwd=self.dir, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise StartupError("openssl %s failed:\n%s" % (args[0], r.stdout.decode(errors="replace")))

    def _pki(self):
        """ca.crt/ca.key (a CA), apiserver.crt/.key (signed by it, for 127.0.0.1 and
        localhost), sa.key/sa.pub (the service accounts' RSA pair)."""
        o = self._openssl
        o("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
          "-days", "2", "-subj", "/CN=forewarn-test-ca",
          "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        self._write(os.path.join(self.dir, "apiserver.ext"), "\n".join([
            "basicConstraints=critical,CA:FALSE",
            "keyUsage=critical,digitalSignature,keyEncipherment",
            "extendedKeyUsage=serverAuth",
            "subjectKeyIdentifier=hash",
            "authorityKeyIdentifier=keyid,issuer",
            "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,"
            "DNS:kubernetes.default,DNS:kubernetes.default.svc", ""]))
        o("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "apiserver.key",
          "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver")
        o("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
          "-CAcreateserial", "-out", "apiserver.crt", "-days", "2", "-extfile", "apiserver.ext")
        o("genrsa", "-out", "sa.key", "2048")
        o("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub")

    def _kubeconfig_text(self, user, token):
        cluster, context = "forewarn-test", "forewarn-test-" + user
        return "\n".join([
            "apiVersion: v1",
            "clusters:",
            "- cluster:",
            "    certificate-authority: " + _yaml_scalar(self.ca),
            "    server: " + _yaml_scalar(self.server),
            "  name: " + cluster,
            "contexts:",
            "- context:",
            "    cluster: " + cluster,
            "    user: " + _yaml_scalar(user),
            "  name: " + _yaml_scalar(context),
            "current-context: " + _yaml_scalar(context),
            "kind: Config",
            "preferences: {}",
            "users:",
            "- name: " + _yaml_scalar(user),
            "  user:",
            "    token: " + token,
            ""])

    @staticmethod
    def _write(path, text):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)


def _short(answer):
    if isinstance(answer, dict):
        return answer.get("message") or json.dumps(answer)[:300]
    return str(answer)[:300]


def _exited(p):
    """Whether p has exited, leaving it unreaped (a zombie keeps its process group's id)."""
    try:
        return os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _stop_group(p, grace=STOP_GRACE, first=signal.SIGTERM):
    """`first` (SIGTERM) to p's process group, up to `grace` seconds for p to exit, then SIGKILL
    to the group (whatever is left in it); reaps p."""
    if p.returncode is not None:  # reaped already (it died during the start): nothing to signal
        return
    try:
        os.killpg(p.pid, first)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and not _exited(p):
        time.sleep(0.05)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    p.wait()


def _command_setup(mask, own_group):
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if own_group:
        os.setpgrp()


class _Interrupted(BaseException):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum, _frame):
    raise _Interrupted(signum)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Run COMMAND against a Kubernetes control plane on loopback.",
        usage="%(prog)s [--controller-manager] -- COMMAND ARGS...")
    parser.add_argument("--controller-manager", action="store_true",
                        help="also run kube-controller-manager")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no COMMAND given (after --)")

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    cp = ControlPlane(controller_manager=args.controller_manager)
    child = None
    own_group = False
    try:
        try:
            cp.start()
        except NotBuilt as e:
            print(str(e), file=sys.stderr)
            return SKIP_EXIT
        except StartupError as e:
            print("control_plane: %s" % e, file=sys.stderr)
            if e.log_tail is not None:
                print("--- last %d lines of %s ---\n%s\n---" % (
                    LOG_TAIL, os.path.basename(e.log), e.log_tail), file=sys.stderr)
            return 1
        print("control_plane: up in %.1f s at %s (%s)" % (
            cp.startup_seconds, cp.server, ", ".join("%s %d" % kv for kv in cp.pids.items())),
            file=sys.stderr, flush=True)
        env = dict(os.environ)
        env.update(cp.env())
        # COMMAND in a process group of its own, so that a signal or the cleanup reaches what it
        # started too; not when run from a terminal, where it must stay in the foreground.
        own_group = not (sys.stdin is not None and sys.stdin.isatty())
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:  # no signal between the fork and `child` set: COMMAND is always stopped
            child = subprocess.Popen(command, env=env, preexec_fn=functools.partial(
                _command_setup, old_mask, own_group))
        except OSError as e:
            print("control_plane: %s: %s" % (command[0], e), file=sys.stderr)
            return 127
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        if own_group:  # what COMMAND left running in its group
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        status = child.wait()
        for name, code, report in cp.exited():
            print("control_plane: %s exited while the command ran (status %s)%s" % (
                name, code, (":\n" + report) if report else ""), file=sys.stderr)
        return status if status >= 0 else 128 - status
    except _Interrupted as e:
        print("control_plane: signal %d: stopping" % e.signum, file=sys.stderr)
        if child is not None and child.returncode is None:
            if own_group:
                _stop_group(child, first=e.signum)
            else:
                try:
                    child.send_signal(e.signum)
                except ProcessLookupError:
                    pass
        return 128 + e.signum
    finally:
        # A second signal does not cut the cleanup short; every wait in it is bounded.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if child is not None and child.poll() is None:
            try:
                child.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        cp.stop()


if __name__ == "__main__":
    sys.exit(main())
