#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The instructions one idle Azure poll costs, counted by callgrind (exact, and stable on a shared
# machine where CPU time is not): forewarn-watch --interval 200 against forewarn-emulator, and
# beside it the raw libcurl loop (forewarn-bench-raw-libcurl every=200) against another emulator.
# Each program runs twice, for SHORT and LONG seconds; the difference of the two runs' instruction
# counts over the difference of their requests (the emulator's request count) is the cost of one
# poll with the start-up taken out. Prints each program's figure and their ratio.
#
#   tests/bench/poll_instructions.sh BUILD_DIR [SHORT LONG] [WATCH_BINARY]
#   tests/bench/poll_instructions.sh build/package 10 30
# The raw loop comes from the same build when it has the benchmarks, else from build/debug.
set -euo pipefail
build="${1:?usage: poll_instructions.sh BUILD_DIR [SHORT LONG] [WATCH_BINARY]}"
short="${2:-10}"
long="${3:-30}"
watch="${4:-$build/tools/watch/forewarn-watch}"
emulator="$build/tools/emulator/forewarn-emulator"
raw="$build/tests/bench/forewarn-bench-raw-libcurl"
[[ -x "$raw" ]] || raw="build/debug/tests/bench/forewarn-bench-raw-libcurl"
command -v valgrind >/dev/null || { echo "poll_instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
for p in "$watch" "$emulator" "$raw"; do [[ -x "$p" ]] || { echo "poll_instructions.sh: $p is missing" >&2; exit 2; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

requests() {  # the emulator's request count so far
    curl -s "$1/emulator/v1/state" | python3 -c 'import json, sys; print(json.load(sys.stdin)["requests"])'
}

run() {  # run WHICH SECONDS: prints "REQUESTS INSTRUCTIONS"
    local which="$1" seconds="$2" line url before after
    coproc EMU { exec "$emulator" --quiet --exit-with-parent --rate-limit 0; }
    read -r line <&"${EMU[0]}"
    url="${line#listening on }"
    before=$(requests "$url")
    if [[ "$which" == raw ]]; then
        timeout -s INT "$seconds" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
            "$raw" "$url/metadata/scheduledevents?api-version=2020-07-01" 1000000 every=200 >/dev/null 2>"$work/err" || true
    else
        timeout -s TERM "$seconds" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
            "$watch" --cloud azure --endpoint "$url" --interval 200 --self vm >/dev/null 2>"$work/err" || true
    fi
    after=$(requests "$url")
    kill "$EMU_PID" 2>/dev/null || true
    wait "$EMU_PID" 2>/dev/null || true
    local ir
    ir=$(grep -o 'Collected : [0-9]*' "$work/err" | awk '{print $3}')
    [[ -n "$ir" ]] || { echo "poll_instructions.sh: callgrind gave no count for $which" >&2; cat "$work/err" >&2; exit 1; }
    echo "$((after - before)) $ir"
}

per_poll() {  # per_poll WHICH: instructions per poll
    local a b
    read -r ra ia < <(run "$1" "$short")
    read -r rb ib < <(run "$1" "$long")
    (( rb > ra )) || { echo "poll_instructions.sh: $1 made no more requests in $long s than in $short s" >&2; exit 1; }
    echo $(( (ib - ia) / (rb - ra) ))
}

w=$(per_poll watch)
r=$(per_poll raw)
echo "forewarn-watch: $w instructions per poll"
echo "raw libcurl:    $r instructions per poll"
python3 -c "print(f'ratio: {$w / $r:.2f}x')"
