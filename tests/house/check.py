#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The house rules a reader cannot see broken at a glance, checked on every run.

  check.py timeouts BUILD_DIR [CTEST]   every ctest test of that build has a TIMEOUT (a hang fails in
                                minutes, not at ctest's 1,500 s)
  check.py agent SOURCE_DIR     forewarn-watch (tools/watch) and forewarn-emulator (tools/emulator)
                                use the public API only: no forewarn::detail, no <forewarn/detail/...>
  check.py names SOURCE_DIR     no Catch test case's name holds ';' (ctest's discovery splits it into
                                two tests that each run nothing)
  check.py top SOURCE_DIR       the top of include/forewarn holds what a program includes: the
                                headers listed below (and their -inl.hpp), and the forwarding
                                headers of files that moved into a folder
"""
import json
import pathlib
import re
import subprocess
import sys

# What a program includes, at the top of include/forewarn (docs/architecture.md, "Headers").
TOP = {
    "forewarn.hpp", "fwd.hpp", "config.hpp", "event.hpp", "result.hpp", "time.hpp", "clock.hpp",
    "log.hpp", "json.hpp", "diff.hpp", "detect.hpp", "poller.hpp", "readiness.hpp",
    "state_file.hpp", "transport.hpp", "fleet.hpp", "client_options.hpp",
}


def timeouts(build, ctest="ctest"):
    out = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, check=True, capture_output=True, text=True)
    tests = json.loads(out.stdout)["tests"]
    missing = []
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if "TIMEOUT" not in props or not float(props["TIMEOUT"]) > 0:
            missing.append(t["name"])
    for name in missing:
        print(f"no TIMEOUT: {name}")
    print(f"{len(tests) - len(missing)} of {len(tests)} tests have a TIMEOUT")
    return not missing and len(tests) > 0


def agent(source):
    bad = []
    files = sorted(p for tool in ("watch", "emulator") for p in (pathlib.Path(source) / "tools" / tool).rglob("*")
                   if p.suffix in (".hpp", ".cpp"))
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"forewarn::detail\b|<forewarn/detail/", line):
                bad.append(f"{path.relative_to(source)}:{n}: {line.strip()}")
    for b in bad:
        print(b)
    print(f"{len(files)} files of tools/watch and tools/emulator read, {len(bad)} use forewarn's detail")
    return not bad and len(files) > 0


def names(source):
    bad = []
    files = sorted((pathlib.Path(source) / "tests").rglob("*.cpp"))
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text):
            name = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
            if ";" in name:
                bad.append(f"{path.relative_to(source)}: {name}")
    for b in bad:
        print(f"';' in a test name: {b}")
    print(f"{len(files)} test files read, {len(bad)} names with ';'")
    return not bad and len(files) > 0


def top(source):
    root = pathlib.Path(source) / "include" / "forewarn"
    bad = []
    seen = 0
    for path in sorted(root.glob("*.hpp")):
        seen += 1
        name = path.name
        if name in TOP or name.replace("-inl.hpp", ".hpp") in TOP:
            continue
        text = path.read_text(encoding="utf-8")
        forwards = re.findall(r"#include <forewarn/([a-z_]+/[a-z_]+\.hpp)>", text)
        code = [l for l in text.splitlines() if l.strip() and not l.startswith(("//", "#"))]
        if len(forwards) == 1 and not code and (root / forwards[0]).exists():
            continue  # a forwarding header
        bad.append(name)
    for b in bad:
        print(f"include/forewarn/{b}: neither what a program includes (TOP) nor a forwarding header")
    print(f"{seen} files at the top of include/forewarn, {len(bad)} out of place")
    return not bad and seen > 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("timeouts", "agent", "names", "top"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    ok = {"timeouts": timeouts, "agent": agent, "names": names, "top": top}[sys.argv[1]](*sys.argv[2:])
    sys.exit(0 if ok else 1)
