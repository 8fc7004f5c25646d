#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds forewarn's libFuzzer targets with clang (ASan+UBSan) in their own build directory and
# runs each for a bounded time from its seed corpus. Exits non-zero when a target crashes, leaks,
# hits UB, breaks an invariant or times out; the input that did it is left in $BUILD/artifacts.
#
#   tests/fuzz/run-fuzzers.sh [SECONDS_PER_TARGET] [TARGET...]     (default 30 s, every target)
#
# Environment: FOREWARN_FUZZ_BUILD (default build/fuzz), CXX (default clang++-14, else clang++),
# FOREWARN_JOBS (build parallelism, default 2). The seed corpora in tests/fuzz/corpus/ are only
# read; what a run discovers goes to $BUILD/corpus/<target>, kept between runs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:-30}"
shift || true
build="${FOREWARN_FUZZ_BUILD:-$root/build/fuzz}"
cxx="${CXX:-$(command -v clang++-14 || command -v clang++ || true)}"
[[ -n "$cxx" ]] || { echo "run-fuzzers: clang++ not found" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "run-fuzzers: SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }

cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFOREWARN_BUILD_FUZZERS=ON -DFOREWARN_BUILD_TESTS=OFF -DFOREWARN_BUILD_EXAMPLES=OFF \
    -DFOREWARN_BUILD_EMULATOR=OFF -DFOREWARN_BUILD_BENCHMARKS=OFF -DFOREWARN_INSTALL=OFF \
    -DFOREWARN_WERROR=ON >/dev/null
cmake --build "$build" --target fuzzers -j "${FOREWARN_JOBS:-2}"

targets=("$@")
if ((${#targets[@]} == 0)); then
    for src in "$here"/fuzz_*.cpp; do targets+=("$(basename "$src" .cpp)"); done
fi

mkdir -p "$build/artifacts"
failed=()
summary=()
for t in "${targets[@]}"; do
    exe="$build/tests/fuzz/$t"
    [[ -x "$exe" ]] || { echo "run-fuzzers: no such target $t" >&2; exit 2; }
    seeds="$here/corpus/${t#fuzz_}"
    work="$build/corpus/$t"
    mkdir -p "$work"
    log="$build/$t.log"
    echo "=== $t: ${seconds} s (seeds: ${seeds#"$root"/}) ==="
    # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a body that blows memory is a finding.
    rc=0
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$t-" "$work" "$seeds" >"$log" 2>&1 || rc=$?
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

printf '\n=== fuzz summary (%s s per target) ===\n' "$seconds"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
    echo "run-fuzzers: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "run-fuzzers: every target held"
