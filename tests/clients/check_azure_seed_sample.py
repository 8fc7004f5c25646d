# SPDX-License-Identifier: MIT
"""The Azure Linux seed's Python sample reads and approves an event on forewarn-emulator.

usage: /usr/bin/python3 check_azure_seed_sample.py FOREWARN_EMULATOR
Exit 0: passed; 1: failed; 77: skipped (python3-requests is missing).
"""
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulator import SKIP, Emulator, headers_of, no_proxy_env  # noqa: E402

try:
    import requests  # noqa: F401
except ImportError:
    print("SKIP: python3-requests is not installed (Debian: apt-get install python3-requests)")
    sys.exit(SKIP)


def check(cond, what):
    if not cond:
        print("FAILED: " + what)
        sys.exit(1)
    print("ok: " + what)


def main():
    os.environ.update(no_proxy_env())
    with Emulator(sys.argv[1]) as emu:
        os.environ["FOREWARN_EMULATOR_URL"] = emu.url
        sample = importlib.import_module("azure_seed_sample")

        doc = sample.get_scheduled_events()
        check(doc == {"DocumentIncarnation": 1, "Events": []}, "nothing scheduled at first: %s" % doc)

        # A Reboot that the sample's advanced logic leaves alone, and a short Freeze it approves.
        reboot = emu.control("azure/events", {"EventType": "Reboot", "Resources": ["vm0"]})["EventId"]
        freeze = emu.control("azure/events", {"EventType": "Freeze", "Resources": ["vm0", "vm1"],
                                              "DurationInSeconds": 5})["EventId"]
        doc = sample.get_scheduled_events()
        by_id = {e["EventId"]: e for e in doc["Events"]}
        check(set(by_id) == {reboot, freeze}, "get_scheduled_events() sees both events")
        check(all(e["EventStatus"] == "Scheduled" for e in by_id.values()), "both are Scheduled")
        check(by_id[freeze]["NotBefore"].endswith(" GMT"), "NotBefore is RFC 1123: " + by_id[freeze]["NotBefore"])

        # confirm_scheduled_event() approves the Reboot directly
        check(sample.confirm_scheduled_event(reboot) == 200, "confirm_scheduled_event() answers 200")
        doc = sample.get_scheduled_events()
        by_id = {e["EventId"]: e for e in doc["Events"]}
        check(by_id[reboot]["EventStatus"] == "Started" and by_id[reboot]["NotBefore"] == "",
              "the approved Reboot is Started with NotBefore \"\"")
        check(by_id[freeze]["EventStatus"] == "Scheduled", "the Freeze still waits")

        # advanced_sample() polls once a second until the incarnation moves, then approves the
        # Freeze (DurationInSeconds < 9) on its own
        found = sample.advanced_sample("-1")
        check(found == doc["DocumentIncarnation"], "advanced_sample() processed incarnation %s" % found)
        state = emu.control("state")
        freeze_state = [e for e in state["events"] if e["EventId"] == freeze][0]
        check(freeze_state["state"] == "Started" and freeze_state["approved_by"] == "vm0",
              "advanced_sample() approved the short Freeze")

        logged = emu.requests("azure")
        check(len(logged) >= 5, "%d Azure requests logged" % len(logged))
        check(all(headers_of(r).get("metadata") == "true" for r in logged), "every request carried Metadata: true")
        check(all("x-forwarded-for" not in headers_of(r) for r in logged), "no request carried X-Forwarded-For")
        check(all(r["status"] == 200 for r in logged), "every request was answered 200")
    print("PASSED")


if __name__ == "__main__":
    main()
