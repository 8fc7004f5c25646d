#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Windows tests (preset "windows") under Wine, against forewarn-emulator running natively on
# loopback. usage: tests/windows/run.sh EMULATOR [CTEST ARGS...]
#   EMULATOR  a Linux forewarn-emulator (e.g. build/debug/tools/emulator/forewarn-emulator)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
emulator="${1:?usage: tests/windows/run.sh EMULATOR [CTEST ARGS...]}"
shift

out="$(mktemp)"
"$emulator" --listen 127.0.0.1:0 --quiet --exit-with-parent >"$out" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$out"' EXIT
url=""
for _ in $(seq 100); do  # up to 10 s for the first line
    url="$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$out" | head -1)"
    [[ -n "$url" ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$out" >&2; echo "run.sh: the emulator exited" >&2; exit 1; }
    sleep 0.1
done
[[ -n "$url" ]] || { echo "run.sh: the emulator did not say where it listens" >&2; exit 1; }
echo "run.sh: forewarn-emulator at $url"
export FOREWARN_EMULATOR_URL="$url" WINEDEBUG=-all
# until-pass:2: a test that fails is run once more. Under Wine, unit's "fake fleet: an event the
# platform starts without approval" once failed its harness's 10 s real-time bound (1 run in
# about 12; never on Linux, not reproduced alone): a second failure still fails the stage.
ctest --preset windows --repeat until-pass:2 "$@"
