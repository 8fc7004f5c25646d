#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What forewarn-watch itself costs while nothing happens: one or more forewarn-watch binaries, each
# watching forewarn-emulator (Azure, 1 Hz) for SECONDS; prints CPU time (utime + stime from
# /proc/PID/stat, in 10 ms ticks) and voluntary context switches of all its threads (wake-ups).
# Give two binaries (an older build and this one) to compare them in the same run.
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

measure() {
    local watch="$1" line url w a b switches
    coproc EMU { exec "$emulator" --quiet --exit-with-parent; }
    read -r line <&"${EMU[0]}"
    url="${line#listening on }"
    "$watch" --cloud azure --endpoint "$url" --interval 1000 --self vm0 >/dev/null 2>&1 &
    w=$!
    sleep 2  # past the start-up
    a=$(awk '{print $14 + $15}' "/proc/$w/stat")
    local s0
    s0=$(cat /proc/"$w"/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}')
    sleep "$seconds"
    b=$(awk '{print $14 + $15}' "/proc/$w/stat")
    switches=$(( $(cat /proc/"$w"/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}') - s0 ))
    kill "$w"
    wait "$w" 2>/dev/null || true
    kill "$EMU_PID"
    wait "$EMU_PID" 2>/dev/null || true
    printf '%-40s %4d ticks of CPU (10 ms each) in %s s, %6d wake-ups (%.1f per second)\n' \
        "$watch" $((b - a)) "$seconds" "$switches" "$(awk -v s="$switches" -v t="$seconds" 'BEGIN {print s / t}')"
}

for bin in "${binaries[@]}"; do measure "$bin"; done
