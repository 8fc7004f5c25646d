#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Alternative (b): the Azure Linux seed's Python sample (requests, one GET per poll, no session),
# copied from Azure's Scheduled Events for Linux documentation with only the address changed, polled N times.
#
#   /usr/bin/python3 seed_loop.py URL N      URL: base address, e.g. http://127.0.0.1:8080
import json
import sys
import time

import requests

metadata_url = sys.argv[1].rstrip("/") + "/metadata/scheduledevents"  # the seed: http://169.254.169.254/...
header = {'Metadata' : 'true'}
query_params = {'api-version':'2020-07-01'}

def get_scheduled_events():
    resp = requests.get(metadata_url, headers = header, params = query_params)
    data = resp.json()
    return data

n = int(sys.argv[2])
events = 0
cpu0, t0 = time.process_time(), time.monotonic()
for _ in range(n):
    events += len(get_scheduled_events()["Events"])
cpu, wall = time.process_time() - cpu0, time.monotonic() - t0
peak_kb = -1
with open("/proc/self/status") as status:  # this process's own peak RSS (VmHWM)
    for line in status:
        if line.startswith("VmHWM:"):
            peak_kb = int(line.split()[1])
print(json.dumps({"polls": n, "events_seen": events, "loop_cpu_s": cpu, "loop_wall_s": wall, "peak_rss_kb": peak_kb}))
