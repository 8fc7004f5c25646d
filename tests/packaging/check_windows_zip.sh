#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Windows zip as a Windows operator meets it (docs/windows.md), under Wine: unzipped, it holds
# forewarn-watch.exe, README.txt (with the `service install` line), windows.md and LICENSE.txt;
# `forewarn-watch.exe --version` prints the version; the program watches forewarn-emulator
# (running natively on loopback) and prints the prepare of its VM's event, approves it, and sees it
# start.
#
# usage: tests/packaging/check_windows_zip.sh ZIP EMULATOR_PROGRAM
# Prints one line per check and "N passed, N failed"; exits 1 when a check failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"

[[ $# -eq 2 && -f "$1" && -x "$2" ]] || { echo "usage: $0 ZIP EMULATOR_PROGRAM" >&2; exit 2; }
zip="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
emulator="$2"
version="$(project_version)"

work="$(mktemp -d /tmp/forewarn-windows-zip.XXXXXX)"
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wineserver -k 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export WINEDEBUG=-all

check "the zip unpacks" python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$zip" "$work/unzipped"
top="$work/unzipped/forewarn-watch-$version-win64"
check_eq "its files" "LICENSE.txt README.txt forewarn-watch.exe windows.md" \
    "$(cd "$top" 2>/dev/null && ls | sort | tr '\n' ' ' | sed 's/ $//')"
check "README.txt gives the service install line" grep -q 'forewarn-watch.exe service install' "$top/README.txt"
check "README.txt has Windows line ends" grep -q $'\r$' "$top/README.txt"

# One Wine session for the run, its output on /dev/null (see tests/windows/run.sh); the first start
# on a new machine makes the prefix (~/.wine, about 20 s).
if [[ ! -d "${WINEPREFIX:-$HOME/.wine}" ]]; then
    wine cmd /c exit </dev/null >/dev/null 2>&1 || true
    wineserver -w
fi
wineserver -p 2>/dev/null || true  # (exit 2 when a server runs already: it then serves this run)
wine cmd /c exit </dev/null >/dev/null 2>&1 || true
check_eq "forewarn-watch.exe --version" "forewarn-watch $version" \
    "$(timeout 60 wine "$top/forewarn-watch.exe" --version </dev/null 2>/dev/null | tr -d '\r' || true)"

cat >"$work/scenario.json" <<'EOF'
{
  "name": "windows-zip-check",
  "vms": [{"name": "win-vm-0"}],
  "steps": [
    {"at": "1s", "azure_event": {"EventId": "ZIP-REBOOT-0", "EventType": "Reboot", "Resources": ["win-vm-0"],
                                 "notice": "15m", "impact": "1h"}}
  ]
}
EOF
"$emulator" --listen 127.0.0.1:0 --scenario "$work/scenario.json" --exit-with-parent >"$work/emulator.out" 2>&1 &
pids+=($!)
endpoint="$(wait_for_listening "$work/emulator.out" 20 || true)"
if [[ -z "$endpoint" ]]; then
    check "the emulator listens" false
    sed 's/^/  emulator: /' "$work/emulator.out"
    summary
    exit 1
fi
rc=0
timeout 120 wine "$top/forewarn-watch.exe" --cloud=azure --endpoint="$endpoint" --approve=own --json --exit-after=2 \
    </dev/null >"$work/agent.out" 2>"$work/agent.err" || rc=$?
tr -d '\r' <"$work/agent.out" | sed 's/^/  agent: /'
tr -d '\r' <"$work/agent.err" | sed 's/^/  agent: /'
check_eq "forewarn-watch.exe exits 0 after its two lines" 0 "$rc"
check "it prints the prepare of its VM's event" grep -q '"change":"prepare".*"id":"ZIP-REBOOT-0"' "$work/agent.out"
check "it approves it" grep -q 'approved ZIP-REBOOT-0' "$work/agent.err"
check "the event starts" grep -q '"change":"started".*"id":"ZIP-REBOOT-0"' "$work/agent.out"

summary
