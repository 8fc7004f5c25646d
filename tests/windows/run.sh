#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Windows tests (preset "windows") under Wine, against forewarn-emulator running natively on
# loopback, and forewarn-watch.exe through the agent's end-to-end cases.
# usage: tests/windows/run.sh LINUX_BUILD [CTEST ARGS...]
#   LINUX_BUILD  a Linux build tree (e.g. build/debug) with forewarn-emulator and the integration
#                tests built: cmake --build --preset debug --target forewarn-emulator integration
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
linux="${1:?usage: tests/windows/run.sh LINUX_BUILD [CTEST ARGS...]}"
shift
linux="$(cd "$linux" && pwd)"
emulator="$linux/tools/emulator/forewarn-emulator"
for f in "$emulator" "$linux/tests/integration"; do
    [[ -x "$f" ]] || { echo "run.sh: $f is not built (cmake --build --preset debug --target forewarn-emulator integration)" >&2; exit 1; }
done

export WINEDEBUG=-all
# One Wine session for the whole run, started here with its output on /dev/null: a wineserver and
# Wine's own services (services.exe, winedevice.exe, ...) started by a test's program would
# inherit that program's output pipes and hold them open after it ends (ctest would wait on them).
# On a new machine the first start makes the prefix (~/.wine, about 20 s); `wineserver -p` fails
# before it exists, and fails (exit 2) while a server runs, so the first start's server is waited out.
if [[ ! -d "${WINEPREFIX:-$HOME/.wine}" ]]; then
    wine cmd /c exit </dev/null >/dev/null 2>&1 || true
    wineserver -w
fi
wineserver -p
wine cmd /c exit </dev/null >/dev/null 2>&1
out="$(mktemp)"
"$emulator" --listen 127.0.0.1:0 --quiet --exit-with-parent >"$out" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$out"; wineserver -k 2>/dev/null || true' EXIT
url=""
for _ in $(seq 100); do  # up to 10 s for the first line
    url="$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$out" | head -1)"
    [[ -n "$url" ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$out" >&2; echo "run.sh: the emulator exited" >&2; exit 1; }
    sleep 0.1
done
[[ -n "$url" ]] || { echo "run.sh: the emulator did not say where it listens" >&2; exit 1; }
echo "run.sh: forewarn-emulator at $url"
export FOREWARN_EMULATOR_URL="$url" FOREWARN_LINUX_BUILD="$linux"
# until-pass:2: a test that fails is run once more. Under Wine, unit's fake-fleet harness cases
# have failed their harness's 10 s real-time bound (1 run in about 10, with other tests running
# beside; never on Linux, not reproduced alone; windows.unit now runs alone): a second failure
# still fails the stage.
ctest --preset windows --repeat until-pass:2 "$@"
