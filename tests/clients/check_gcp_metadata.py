# SPDX-License-Identifier: MIT
"""Google's Node client gcp-metadata (npm) finds forewarn-emulator and reads maintenance-event.

usage: /usr/bin/python3 check_gcp_metadata.py FOREWARN_EMULATOR NPM_PREFIX_DIR
Installs gcp-metadata with `npm install --prefix NPM_PREFIX_DIR` (the npm registry is the only
network it needs). Exit 0: passed; 1: failed; 77: skipped (node, npm or the package cannot be had).
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulator import SKIP, Emulator, headers_of, no_proxy_env  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def check(cond, what):
    if not cond:
        print("FAILED: " + what)
        sys.exit(1)
    print("ok: " + what)


def install(prefix):
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        print("SKIP: node or npm is not installed (Debian: apt-get install nodejs npm)")
        sys.exit(SKIP)
    if os.path.isfile(os.path.join(prefix, "node_modules", "gcp-metadata", "package.json")):
        return node
    os.makedirs(prefix, exist_ok=True)
    try:
        # the registry is reached the usual way (proxy settings kept); only the emulator is not
        r = subprocess.run([npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save",
                            "gcp-metadata"], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        print("SKIP: npm install gcp-metadata timed out")
        sys.exit(SKIP)
    if r.returncode != 0:
        print("SKIP: npm could not install gcp-metadata:\n" + r.stderr[-2000:])
        sys.exit(SKIP)
    return node


def run_node(node, prefix, emu, expected):
    env = no_proxy_env()
    env["GCE_METADATA_HOST"] = emu.host
    env["NODE_PATH"] = os.path.join(prefix, "node_modules")
    env.pop("METADATA_SERVER_DETECTION", None)
    env.pop("GCE_METADATA_IP", None)
    r = subprocess.run([node, os.path.join(HERE, "gcp_metadata_check.js"), expected],
                       capture_output=True, text=True, timeout=120, env=env)
    print(r.stdout.strip())
    if r.stderr.strip():
        print(r.stderr.strip())
    return r.returncode == 0, r.stdout


def main():
    program, prefix = sys.argv[1], os.path.abspath(sys.argv[2])
    node = install(prefix)
    with Emulator(program) as emu:
        ok, out = run_node(node, prefix, emu, "NONE")
        check(ok, "gcp-metadata reports the emulator available and reads maintenance-event NONE")
        check('"name":"vm0"' in out, "instance('name') is the emulated VM's")

        emu.control("gce", {"instance/maintenance-event": "MIGRATE_ON_HOST_MAINTENANCE"})
        ok, _ = run_node(node, prefix, emu, "MIGRATE_ON_HOST_MAINTENANCE")
        check(ok, "it reads MIGRATE_ON_HOST_MAINTENANCE once the emulator announces a live migration")

        logged = emu.requests("gce")
        check(len(logged) >= 6, "%d GCE requests logged" % len(logged))
        check(all(headers_of(r).get("metadata-flavor") == "Google" for r in logged),
              "every request carried Metadata-Flavor: Google")
        check(all("x-forwarded-for" not in headers_of(r) for r in logged), "no request carried X-Forwarded-For")
    print("PASSED")


if __name__ == "__main__":
    main()
