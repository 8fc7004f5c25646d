#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How long `forewarn-watch --cloud auto` takes to find its cloud: from the start of the process to
its "watching CLOUD" line, with the found cloud's endpoint on forewarn-emulator and every other
cloud's where it is on this machine (Azure's, GCE's and AWS's refused on 127.0.0.1:9; Alibaba's
and Tencent's at their real addresses, 100.100.100.200 and metadata.tencentyun.com, which do
not answer off those clouds). Prints numbers; asserts nothing.

usage: detect_time.py FOREWARN_WATCH FOREWARN_EMULATOR [RUNS]
"""
import os
import statistics
import subprocess
import sys
import time

REFUSED = "http://127.0.0.1:9"
VARS = {"azure": "FOREWARN_AZURE_ENDPOINT", "gce": "FOREWARN_GCE_ENDPOINT", "aws": "AWS_EC2_METADATA_SERVICE_ENDPOINT",
        "alibaba": "FOREWARN_ALIBABA_ENDPOINT", "tencent": "FOREWARN_TENCENT_ENDPOINT"}
PREFIX = {"alibaba": "/alibaba", "tencent": "/tencent"}


def once(watch, base, cloud):
    env = {k: v for k, v in os.environ.items() if k not in VARS.values() and not k.startswith("FOREWARN_")}
    for c, var in VARS.items():
        if c in ("alibaba", "tencent") and c != cloud:
            continue  # their real addresses
        env[var] = base + PREFIX.get(c, "") if c == cloud else REFUSED
    start = time.monotonic()
    p = subprocess.Popen([watch, "--cloud", "auto", "--self", "vm0"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    took = None
    try:
        for line in p.stderr:
            if "watching " in line:
                took = time.monotonic() - start
                if ("watching " + cloud) not in line:
                    took = None
                break
    finally:
        p.terminate()
        p.wait(timeout=20)
    return took


def main():
    watch, emulator = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    emu = subprocess.Popen([emulator, "--listen", "127.0.0.1:0", "--quiet", "--rate-limit", "0"], stdout=subprocess.PIPE, text=True)
    try:
        base = emu.stdout.readline().strip().split("listening on ", 1)[1]
        for cloud in ("azure", "gce", "aws", "alibaba", "tencent"):
            times = [once(watch, base, cloud) for _ in range(runs)]
            found = [t for t in times if t is not None]
            if not found:
                print(f"{cloud:8} not found (this agent does not know it)")
                continue
            print(f"{cloud:8} found in median {statistics.median(found) * 1000:6.0f} ms, max {max(found) * 1000:6.0f} ms"
                  f" ({len(found)} of {runs} runs)")
    finally:
        emu.terminate()
        emu.wait(timeout=20)


if __name__ == "__main__":
    main()
