#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every forewarn benchmark and prints one markdown report (docs/benchmarks.md keeps one).
#
#   tests/bench/run-all.sh [--quick] [--skip micro,polls,latency,idle,compile] [--json FILE]
#
# Builds a Release tree of its own (build/bench-release, or $FOREWARN_BENCH_BUILD), then runs
# tests/bench/side_by_side/harness.py: Google Benchmark micro-benchmarks, the side-by-side poll
# cost against forewarn-emulator, latency and stop(), a 60 s idle run, compile cost. About 6 min
# after the build; --quick is a smoke test (~1.5 min). Numbers are printed, never asserted.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${FOREWARN_BENCH_BUILD:-$src/build/bench-release}
jobs=${FOREWARN_BENCH_JOBS:-2}

mkdir -p "$(dirname "$build")"
echo "[bench] building $build (Release) ..." >&2
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFOREWARN_BUILD_BENCHMARKS=ON -DFOREWARN_BUILD_EMULATOR=ON \
  -DFOREWARN_BUILD_TESTS=OFF -DFOREWARN_BUILD_EXAMPLES=OFF -DFOREWARN_INSTALL=OFF > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
targets=(forewarn-emulator forewarn-bench-run forewarn-bench-forewarn-polls forewarn-bench-raw-libcurl forewarn-bench-latency forewarn-bench-idle)
# forewarn-bench-micro exists only when Google Benchmark was found (libbenchmark-dev).
if cmake --build "$build" --target help 2>/dev/null | grep 'forewarn-bench-micro' > /dev/null; then
  targets+=(forewarn-bench-micro)
else
  echo "[bench] Google Benchmark not found: the micro-benchmarks are skipped" >&2
fi
cmake --build "$build" --target "${targets[@]}" -j "$jobs" > "$build.build.log" 2>&1 ||
  { tail -50 "$build.build.log" >&2; exit 1; }

exec /usr/bin/python3 "$src/tests/bench/side_by_side/harness.py" --build "$build" --source "$src" \
  --command "tests/bench/run-all.sh $*" "$@"
