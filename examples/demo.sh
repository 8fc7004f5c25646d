#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The forewarn demo (./quickstart demo): forewarn-emulator plays examples/scenarios/demo.json
# (a platform Freeze, a user Reboot, a cancelled Redeploy, a GCE live migration) and three
# forewarn-watch processes show every callback as it fires:
#   WestNO_0  Azure, --approve leader: first in Resources, so the elected leader; it approves
#   WestNO_1  Azure, --approve leader: a follower; it sees everything and approves nothing here
#   gce       GCE, hanging GETs on instance/maintenance-event and instance/preempted
# Exits 0 once the three watchers have seen every change (about 15 s), non-zero on
# any failure or after 50 s; every process it started is stopped on every way out.
#
# usage: examples/demo.sh [BUILD_DIR]     (or FOREWARN_BUILD_DIR=...; default: the first build
#        directory under build/ that holds both programs, else a new build/demo)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
scenario="$root/examples/scenarios/demo.json"
build="${1:-${FOREWARN_BUILD_DIR:-}}"

find_programs() {  # find_programs DIR: sets emulator and watch when DIR holds both
    local dir="$1"
    [[ -x "$dir/tools/emulator/forewarn-emulator" && -x "$dir/tools/watch/forewarn-watch" ]] || return 1
    emulator="$dir/tools/emulator/forewarn-emulator"
    watch="$dir/tools/watch/forewarn-watch"
}

emulator="" watch=""
if [[ -n "$build" ]]; then
    find_programs "$build" || { echo "demo: no forewarn-emulator and forewarn-watch under $build" >&2; exit 1; }
else
    for dir in "$root"/build/demo "$root"/build/*/; do
        find_programs "${dir%/}" && break
    done
    if [[ -z "$emulator" ]]; then
        echo "demo: building forewarn-emulator and forewarn-watch in build/demo" >&2
        cmake -S "$root" -B "$root/build/demo" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DFOREWARN_BUILD_TESTS=OFF -DFOREWARN_BUILD_BENCHMARKS=OFF >/dev/null
        cmake --build "$root/build/demo" --target forewarn-emulator forewarn-watch -j "${FOREWARN_JOBS:-2}" >/dev/null
        find_programs "$root/build/demo"
    fi
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/forewarn-demo.XXXXXX")"
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A colour per speaker when stdout is a terminal.
if [[ -t 1 ]]; then c_emu=$'\e[2m' c_leader=$'\e[1;32m' c_follower=$'\e[36m' c_gce=$'\e[1;34m' c_off=$'\e[0m'
else c_emu="" c_leader="" c_follower="" c_gce="" c_off=""; fi

label() {  # label PREFIX COLOUR: prefixes each line, unbuffered
    local prefix="$1" colour="$2" line
    while IFS= read -r line; do printf '%s%-18s%s %s\n' "$colour" "$prefix" "$c_off" "$line"; done
}

echo "forewarn demo: $(basename "$scenario") on forewarn-emulator, watched by forewarn-watch"
echo

# The log exists before the emulator starts: the background job opens its redirection only once
# it runs, and a first read before that failed the demo (seen under load).
: >"$work/emulator.log"
"$emulator" --listen 127.0.0.1:0 --scenario "$scenario" >>"$work/emulator.log" 2>&1 &
pids+=($!)
port=""
for _ in $(seq 1 100); do
    port="$(sed -n 's|^listening on http://127.0.0.1:\([0-9][0-9]*\).*|\1|p' "$work/emulator.log" | head -n 1)"
    [[ -n "$port" ]] && break
    kill -0 "${pids[0]}" 2>/dev/null || break
    sleep 0.1
done
[[ -n "$port" ]] || { echo "demo: forewarn-emulator did not start:" >&2; cat "$work/emulator.log" >&2; exit 1; }
url="http://127.0.0.1:$port"
echo "emulator listening on $url"
echo

# The emulator's own account of each state change, beside the callbacks.
# GNU tail's --pid ends it with the emulator (killing the grep alone would leave tail behind).
follow=(tail -n +1 -f)
tail --version 2>/dev/null | grep -q GNU && follow+=(--pid="${pids[0]}")
"${follow[@]}" "$work/emulator.log" 2>/dev/null | grep --line-buffered -E '\] (azure|gce): ' \
    > >(label "[emulator]" "$c_emu") &
pids+=($!)

# The follower approves nothing. How many lines it prints depends on its polls (an event the
# leader approved between two of them is first seen Started: no prepare line), so it runs until
# it has printed the scenario's last change, the Redeploy's end, and is then told to stop.
"$watch" --cloud azure --endpoint "$url" --self WestNO_1 --approve leader --interval 500 \
    > >(tee "$work/follower.out" | label "[WestNO_1 follower]" "$c_follower") 2>&1 &
follower_pid=$!
pids+=($follower_pid)
"$watch" --cloud gce --endpoint "$url" --exit-after 2 > >(label "[gce]" "$c_gce") 2>&1 &
gce_pid=$!
pids+=($gce_pid)
"$watch" --cloud azure --endpoint "$url" --self WestNO_0 --approve leader --interval 500 --exit-after 8 \
    > >(label "[WestNO_0 leader]" "$c_leader") 2>&1 &
leader_pid=$!
pids+=($leader_pid)

# Wait for the three to see all their changes, at most 50 s.
status=0
follower_done() { grep -q "redeploy .*(cancelled)" "$work/follower.out" 2>/dev/null; }
for _ in $(seq 1 500); do
    running=0
    for pid in "$leader_pid" "$gce_pid"; do kill -0 "$pid" 2>/dev/null && running=1; done
    follower_done || running=1
    ((running)) || break
    sleep 0.1
done
follower_done || { echo "demo: the follower did not see the Redeploy end within 50 s" >&2; status=1; }
# The follower runs until told: SIGTERM, which it handles by stopping cleanly (exit 0).
kill -TERM "$follower_pid" 2>/dev/null || true
wait "$follower_pid" 2>/dev/null || { echo "demo: the follower did not exit cleanly on SIGTERM" >&2; status=1; }
for pid in "$leader_pid" "$gce_pid"; do
    if kill -0 "$pid" 2>/dev/null; then
        echo "demo: a watcher did not see every change within 50 s" >&2
        status=1
    elif ! wait "$pid"; then
        echo "demo: a watcher failed" >&2
        status=1
    fi
done
sleep 0.3  # let the labelled output drain before the summary
echo
if ((status == 0)); then
    echo "demo: done. The leader approved the Freeze and the user Reboot; the follower approved nothing;"
    echo "      the Redeploy of WestNO_2 was cancelled before it started; GCE migrated the VM live."
fi
exit "$status"
