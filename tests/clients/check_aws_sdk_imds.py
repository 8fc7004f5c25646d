# SPDX-License-Identifier: MIT
"""The AWS SDK for JavaScript's @aws-sdk/ec2-metadata-service (npm) reads forewarn-emulator's AWS
instance metadata: a session token, the Spot instance-action and the scheduled events.

usage: /usr/bin/python3 check_aws_sdk_imds.py FOREWARN_EMULATOR NPM_PREFIX_DIR
Installs the package with `npm install --prefix NPM_PREFIX_DIR` (the npm registry is the only
network it needs). Exit 0: passed; 1: failed; 77: skipped (node, npm or the package cannot be had).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulator import SKIP, Emulator, headers_of, no_proxy_env  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "@aws-sdk/ec2-metadata-service"


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
    if os.path.isfile(os.path.join(prefix, "node_modules", "@aws-sdk", "ec2-metadata-service", "package.json")):
        return node
    os.makedirs(prefix, exist_ok=True)
    try:
        r = subprocess.run([npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", PACKAGE],
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        print("SKIP: npm install %s timed out" % PACKAGE)
        sys.exit(SKIP)
    if r.returncode != 0:
        print("SKIP: npm could not install %s:\n%s" % (PACKAGE, r.stderr[-2000:]))
        sys.exit(SKIP)
    return node


def main():
    program, prefix = sys.argv[1], os.path.abspath(sys.argv[2])
    node = install(prefix)
    with Emulator(program) as emu:
        emu.control("aws/spot", {"action": "terminate", "in": "2m"})
        emu.control("aws/events", {"Code": "system-reboot", "in": "1h", "EventId": "instance-event-0123456789abcdef0"})
        env = no_proxy_env()
        env["NODE_PATH"] = os.path.join(prefix, "node_modules")
        for var in ("AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_V1_DISABLED"):
            env.pop(var, None)
        r = subprocess.run([node, os.path.join(HERE, "aws_sdk_imds_check.js"), "http://" + emu.host],
                           capture_output=True, text=True, timeout=120, env=env)
        print(r.stdout.strip())
        if r.stderr.strip():
            print(r.stderr.strip())
        if r.returncode != 0:
            print("\n".join("%s %s -> %s" % (q["method"], q["target"], q["status"]) for q in emu.control("requests")["requests"]))
        check(r.returncode == 0, "the AWS SDK got a token and read three paths")
        out = json.loads(r.stdout.strip().splitlines()[-1])
        check(out["token_length"] > 0, "a session token")
        check(out["instance_id"] == "vm0", "instance-id is the emulated VM's")
        check(out["spot"]["action"] == "terminate", "spot/instance-action says terminate")
        check(out["scheduled"][0]["Code"] == "system-reboot" and out["scheduled"][0]["State"] == "active",
              "the scheduled reboot is listed, active")

        logged = emu.requests("aws")
        check(len(logged) >= 4, "%d AWS requests logged" % len(logged))
        check(logged[0]["method"] == "PUT" and logged[0]["target"] == "/latest/api/token", "the token first")
        check(all(r["status"] == 200 for r in logged), "every request answered 200 (none without a token)")
        check(all("x-aws-ec2-metadata-token" in headers_of(r) for r in logged if r["method"] == "GET"),
              "every GET carried the token")
        check(all("x-forwarded-for" not in headers_of(r) for r in logged), "no request carried X-Forwarded-For")
    print("PASSED")


if __name__ == "__main__":
    main()
