#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What forewarn-watch itself costs while nothing happens: one or more forewarn-watch binaries, each
# watching forewarn-emulator (Azure, 1 Hz) for SECONDS, and beside them a raw libcurl loop making
# the same request once a second (forewarn-bench-raw-libcurl every=1000, when the build has the
# benchmarks); prints CPU time (utime + stime from /proc/PID/stat, in 10 ms ticks), voluntary
# context switches of all threads (wake-ups) and private memory (RssAnon). Give two binaries (an
# older build and this one) to compare them in the same run. Each is measured at rest, at rest with
# every optional feature on, and while a Freeze of its VM is under way (the pause meter's looks).
# Each binary's code size comes first (`size -A`: .text, and the code and read-only data that a
# running agent maps from its file), and each run also prints its anonymous memory
# (`Anonymous` in /proc/PID/smaps_rollup: the heap, stacks and data no file backs, which unlike
# USS does not move with whatever else maps the same libraries).
#
#   tests/bench/watch_cost.sh BUILD_DIR SECONDS [WATCH_BINARY...]
#   tests/bench/watch_cost.sh build/release 60                 # the build's own forewarn-watch
set -euo pipefail
build="${1:?usage: watch_cost.sh BUILD_DIR SECONDS [WATCH_BINARY...]}"
seconds="${2:?usage: watch_cost.sh BUILD_DIR SECONDS [WATCH_BINARY...]}"
shift 2
binaries=("$@")
((${#binaries[@]} > 0)) || binaries=("$build/tools/watch/forewarn-watch")
emulator="$build/tools/emulator/forewarn-emulator"
raw="$build/tests/bench/forewarn-bench-raw-libcurl"

measure() {  # measure LABEL PROGRAM [ARGS...]: the program is started with the emulator's URL for {}
    local label="$1" line url w a b switches
    shift
    coproc EMU { exec "$emulator" --quiet --exit-with-parent "${emulator_args[@]}"; }
    read -r line <&"${EMU[0]}"
    url="${line#listening on }"
    local args=()
    for x in "$@"; do args+=("${x//\{\}/$url}"); done
    "${args[@]}" >/dev/null 2>&1 &
    w=$!
    sleep 2  # past the start-up
    a=$(awk '{print $14 + $15}' "/proc/$w/stat")
    local s0
    s0=$(cat /proc/"$w"/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}')
    sleep "$seconds"
    b=$(awk '{print $14 + $15}' "/proc/$w/stat")
    switches=$(( $(cat /proc/"$w"/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}') - s0 ))
    local anon anonymous
    anon=$(awk '/^RssAnon/ {print $2}' "/proc/$w/status")
    anonymous=$(awk '/^Anonymous:/ {print $2}' "/proc/$w/smaps_rollup" 2>/dev/null || echo '?')
    kill "$w"
    wait "$w" 2>/dev/null || true
    kill "$EMU_PID"
    wait "$EMU_PID" 2>/dev/null || true
    printf '%-44s %4d ticks of CPU (10 ms each) in %s s, %6d wake-ups (%.1f per second), %6d kB private (RssAnon), %6s kB Anonymous\n' \
        "$label" $((b - a)) "$seconds" "$switches" "$(awk -v s="$switches" -v t="$seconds" 'BEGIN {print s / t}')" "$anon" "$anonymous"
}

emulator_args=()
features_dir="$(mktemp -d)"
trap 'rm -rf "$features_dir"' EXIT
# A Freeze of this VM under way for the whole run: the pause meter looks at the clocks every 100 ms.
cat >"$features_dir/started.json" <<'JSON'
{"name": "freeze-under-way", "vms": [{"name": "vm0"}],
 "steps": [{"at": "0s", "azure_event": {"EventId": "F1", "EventType": "Freeze", "Resources": ["vm0"],
                                         "started": true, "DurationInSeconds": 5, "impact": "1h"}}]}
JSON
for bin in "${binaries[@]}"; do
    size -A "$bin" | awk -v b="$bin" '$1 == ".text" {t = $2} $1 ~ /^\.(text|rodata|eh_frame|eh_frame_hdr|gcc_except_table|init|fini|plt|plt.got)$/ {c += $2}
        END {printf "%-44s .text %d bytes (%.2f MiB); code and read-only data %d bytes (%.2f MiB)\n", b, t, t / 1048576, c, c / 1048576}'
done
for bin in "${binaries[@]}"; do
    measure "$bin" "$bin" --cloud azure --endpoint "{}" --interval 1000 --self vm0
    # The same at rest with every optional feature on: metrics and /readyz, the ready file, a
    # webhook, the approval rules, a window, a type filter, a state file.
    measure "$bin (every feature on)" "$bin" --cloud azure --endpoint "{}" --interval 1000 --self vm0 \
        --approve own --metrics-listen 127.0.0.1:0 --ready-file "$features_dir/ready" --unready-before 60 \
        --webhook http://127.0.0.1:9/hook --approve-window 00:00-00:00 --approve-freeze-under 9 --approve-user-events \
        --only freeze,reboot,redeploy --state-file "$features_dir/state.json"
    emulator_args=(--scenario "$features_dir/started.json")
    measure "$bin (a Freeze of this VM under way)" "$bin" --cloud azure --endpoint "{}" --interval 1000 --self vm0
    emulator_args=()
done
if [[ -x "$raw" ]]; then
    measure "raw libcurl loop, 1 Hz (the floor)" "$raw" "{}/metadata/scheduledevents?api-version=2020-07-01" \
        $((seconds + 10)) every=1000
else
    echo "watch_cost: $raw not built (benchmarks off): no raw libcurl comparison" >&2
fi
