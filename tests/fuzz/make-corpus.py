#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpora in tests/fuzz/corpus/ from the protocol documents' examples
(tests/unit/data/azure/, taken verbatim from the Azure documentation) and the GCE values and times
the seeds show. Run it again after changing the seeds; the output is deterministic."""
import hashlib
import pathlib
import shutil

here = pathlib.Path(__file__).resolve().parent
data = here.parent / "unit" / "data" / "azure"
out = here / "corpus"

# FuzzedDataProvider reads strings from the front, ending each at a backslash followed by any
# other byte, and integers (ConsumeBool, ranges) from the back.
def fdp_string(s: bytes) -> bytes:
    return s.replace(b"\\", b"\\\\") + b"\\ "


def write(target: str, items):
    d = out / target
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    for item in items:
        (d / hashlib.sha1(item).hexdigest()[:16]).write_bytes(item)


docs = [p.read_bytes() for p in sorted(data.glob("linux_incarnation_*.json"))]
approvals = [p.read_bytes() for p in sorted(data.glob("*_approval.json"))]
schemas = [p.read_bytes() for p in sorted(data.glob("*_schema.txt"))]

write("azure_parse", docs + approvals + schemas + [
    b'{"DocumentIncarnation":0,"Events":[]}',
    b'{"DocumentIncarnation":1,"Events":[{"EventId":"_e","EventType":"Reboot","EventStatus":"Started",'
    b'"Resources":["_vm0"],"NotBefore":""}]}',
    b'{"DocumentIncarnation":2,"Events":[{"EventId":"e\\u0000\\"x","EventType":"Preempt","EventStatus":"Scheduled",'
    b'"NotBefore":"2016-09-19T18:29:47.123+02:00","DurationInSeconds":-1,"EventSource":"User"}]}',
])

write("time", [
    b"Mon, 11 Apr 2022 22:26:58 GMT", b"Mon, 19 Sep 2016 18:29:47 GMT", b"Wed, 13 Feb 2013 22:43:45 GMT",
    b"2016-09-19T18:29:47Z", b"2016-09-19T18:29:47.0000000Z", b"2022-04-11T22:26:58+02:00",
    b"2022-04-11T22:26:58-0130", b"Thu, 29 Feb 2024 23:59:60 GMT", b"",
])

gce_values = [b"NONE", b"MIGRATE_ON_HOST_MAINTENANCE", b"TERMINATE_ON_HOST_MAINTENANCE", b"TRUE", b"FALSE",
              b"instance/maintenance-event", b"http://metadata.google.internal./computeMetadata/v1/",
              b"169.254.169.254:80", b"[::1]:8080"]
write("gce", [fdp_string(v) + fdp_string(b"0123abcd/%2F") + bytes(range(0, 64, 3)) for v in gce_values])

write("diff", [fdp_string(a) + fdp_string(b) + b"\x01" for a, b in zip(docs, docs[1:] + docs[:1])]
      + [bytes(range(256)), bytes(range(255, -1, -1))])

ids = [b"f020ba2e-3bc0-4c40-a10b-86575a9eabd5", b"C7061BAC-AFDC-4513-B24B-AA5F13A16123",
       b'id "quoted" \\ back\\slash \t\x01\x1f', "\u00e9v\u00e9nement \u2603".encode(), b"\xff\xfe bad utf-8",
       b"\xed\xa0\x80 surrogate"]
write("approval", [b"\x00" + b"".join(fdp_string(i) for i in ids[:k]) + bytes([k, 0]) for k in range(1, len(ids) + 1)]
      + [fdp_string(b"5") + fdp_string(ids[0]) + b"\x01\x01"])
print("corpus written to", out)
