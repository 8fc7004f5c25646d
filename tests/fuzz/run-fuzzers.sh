#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds forewarn's libFuzzer targets with clang (ASan+UBSan) in their own build directory and
# runs each for a bounded time from its seed corpus, as many at once as there are cores (each
# target is one process on one core, so every target still gets its whole time). Exits non-zero
# when a target crashes, leaks, hits UB, breaks an invariant or times out; the input that did it
# is left in $BUILD/artifacts.
#
#   tests/fuzz/run-fuzzers.sh [SECONDS_PER_TARGET] [TARGET...]     (default 30 s, every target)
#   tests/fuzz/run-fuzzers.sh --build-only                          (the targets, none run)
#
# Environment: FOREWARN_FUZZ_BUILD (default build/fuzz), CXX (default clang++-14, else clang++),
# FOREWARN_JOBS (build parallelism, default 2), FOREWARN_FUZZ_PARALLEL (targets run at once,
# default the number of cores). The seed corpora in tests/fuzz/corpus/ are only read; what a run
# discovers goes to $BUILD/corpus/<target>, kept between runs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build_only=0
if [[ "${1:-}" == --build-only ]]; then
    build_only=1
    shift
    (($# == 0)) || { echo "run-fuzzers: --build-only takes nothing after it" >&2; exit 2; }
fi
seconds="${1:-30}"
shift || true
parallel="${FOREWARN_FUZZ_PARALLEL:-$(nproc 2>/dev/null || echo 1)}"
build="${FOREWARN_FUZZ_BUILD:-$root/build/fuzz}"
cxx="${CXX:-$(command -v clang++-14 || command -v clang++ || true)}"
[[ -n "$cxx" ]] || { echo "run-fuzzers: clang++ not found" >&2; exit 2; }
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "run-fuzzers: SECONDS must be a whole number above 0, got '$seconds'" >&2; exit 2; }
[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || { echo "run-fuzzers: FOREWARN_FUZZ_PARALLEL must be a whole number above 0, got '$parallel'" >&2; exit 2; }

cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFOREWARN_BUILD_FUZZERS=ON -DFOREWARN_BUILD_TESTS=OFF -DFOREWARN_BUILD_EXAMPLES=OFF \
    -DFOREWARN_BUILD_EMULATOR=OFF -DFOREWARN_BUILD_BENCHMARKS=OFF -DFOREWARN_INSTALL=OFF \
    -DFOREWARN_WERROR=ON >/dev/null
cmake --build "$build" --target fuzzers -j "${FOREWARN_JOBS:-2}"
((build_only == 0)) || exit 0

targets=("$@")
if ((${#targets[@]} == 0)); then
    for src in "$here"/fuzz_*.cpp; do targets+=("$(basename "$src" .cpp)"); done
fi

mkdir -p "$build/artifacts"
for t in "${targets[@]}"; do
    [[ -x "$build/tests/fuzz/$t" ]] || { echo "run-fuzzers: no such target $t" >&2; exit 2; }
done

# run_target T: one target for $seconds, its log in $build/T.log, its exit status in $build/T.rc.
run_target() {
    local t="$1" rc=0
    local seeds="$here/corpus/${t#fuzz_}" work="$build/corpus/$t" log="$build/$t.log"
    mkdir -p "$work"
    # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a body that blows memory is a finding.
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        "$build/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "$work" "$seeds" >"$log" 2>&1 || rc=$?
    echo "$rc" >"$build/$t.rc"
}

# In batches of $parallel; each batch is waited for whole (every target in it runs $seconds).
failed=()
summary=()
for ((i = 0; i < ${#targets[@]}; i += parallel)); do
    batch=("${targets[@]:i:parallel}")
    for t in "${batch[@]}"; do
        rm -f "$build/$t.rc"
        echo "=== $t: ${seconds} s (seeds: tests/fuzz/corpus/${t#fuzz_}) ==="
        run_target "$t" &
    done
    wait
    for t in "${batch[@]}"; do
        log="$build/$t.log"
        rc="$(cat "$build/$t.rc" 2>/dev/null || echo 255)"
        done_line="$(grep -E '^#[0-9]+.*DONE' "$log" | tail -1 || true)"
        stats="$(grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | tr '\n' ' ' || true)"
        summary+=("$(printf '%-18s rc=%d  %s  %s' "$t" "$rc" "${done_line:-<no DONE line>}" "$stats")")
        if ((rc != 0)); then
            failed+=("$t")
            echo "run-fuzzers: $t FAILED (exit $rc); the end of $log:" >&2
            tail -40 "$log" >&2
            ls "$build/artifacts/$t-"* 2>/dev/null >&2 || true
        fi
    done
done

printf '\n=== fuzz summary (%s s per target, %s at once) ===\n' "$seconds" "$parallel"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
    echo "run-fuzzers: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "run-fuzzers: every target held"
