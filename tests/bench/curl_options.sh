#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What each of curl_transport's libcurl choices costs one request, counted by callgrind: the raw
# libcurl loop (forewarn-bench-raw-libcurl) against forewarn-emulator's Azure document, once per
# set of options (its options= letters: m the multi interface, u CURLOPT_USERAGENT, U a User-Agent
# line in the header list, h a header callback, p a progress callback, t both timeouts; "-" none).
# Each set runs SHORT and LONG requests back to back; the difference of the two runs' instruction
# counts over LONG - SHORT is the cost of one request with the start-up taken out.
#
#   tests/bench/curl_options.sh BUILD_DIR [SET ...]
#   tests/bench/curl_options.sh build/debug - m u U h p t mhpUt
set -euo pipefail
build="${1:?usage: curl_options.sh BUILD_DIR [SET ...]}"
shift
sets=("$@")
(( ${#sets[@]} > 0 )) || sets=(- m u U h p t mhpUt mhput)
short=50
long=300
emulator="$build/tools/emulator/forewarn-emulator"
raw="$build/tests/bench/forewarn-bench-raw-libcurl"
command -v valgrind >/dev/null || { echo "curl_options.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
for p in "$emulator" "$raw"; do [[ -x "$p" ]] || { echo "curl_options.sh: $p is missing" >&2; exit 2; }; done
for s in "${sets[@]}"; do
    [[ "$s" == - || "$s" =~ ^[mhptuU]+$ ]] || { echo "curl_options.sh: '$s' is not a set of m h p t u U (or -)" >&2; exit 2; }
done

coproc EMU { exec "$emulator" --quiet --exit-with-parent --rate-limit 0; }
trap 'kill "$EMU_PID" 2>/dev/null || true; wait "$EMU_PID" 2>/dev/null || true' EXIT
read -r line <&"${EMU[0]}"
url="${line#listening on }/metadata/scheduledevents?api-version=2020-07-01"

count() {  # count N OPTIONS: the instructions of N requests
    local out
    out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$raw" "$url" "$1" ${2:+"options=$2"} 2>&1 >/dev/null) ||
        { echo "curl_options.sh: the raw loop failed (options '$2'):" >&2; echo "$out" | tail -5 >&2; exit 1; }
    echo "$out" | grep -o 'Collected : [0-9]*' | awk '{print $3}'
}

printf '%-8s %s\n' options "instructions per request"
for s in "${sets[@]}"; do
    o="$s"
    [[ "$o" == - ]] && o=""
    a=$(count "$short" "$o")
    b=$(count "$long" "$o")
    printf '%-8s %d\n' "$s" $(( (b - a) / (long - short) ))
done
