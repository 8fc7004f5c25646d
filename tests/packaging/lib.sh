# SPDX-License-Identifier: MIT
# What the packaging checks (tests/packaging/check_*.sh) share: one line per check, a count, the
# project's version (packaging/common.sh), and the emulator's address.

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
passed=0
failed=0

# check WHAT COMMAND...: runs COMMAND (its output kept for a failure), one line either way.
check() {
    local what="$1" out rc=0
    shift
    out="$("$@" 2>&1)" || rc=$?
    if ((rc == 0)); then
        passed=$((passed + 1))
        printf 'ok     %s\n' "$what"
    else
        failed=$((failed + 1))
        printf 'FAILED %s (exit %d)\n' "$what" "$rc"
        [[ -z "$out" ]] || printf '%s\n' "$out" | tail -n 40 | sed 's/^/       | /'
    fi
}

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
    if [[ "$2" == "$3" ]]; then
        passed=$((passed + 1))
        printf 'ok     %s\n' "$1"
    else
        failed=$((failed + 1))
        printf 'FAILED %s: expected "%s", got "%s"\n' "$1" "$2" "$3"
    fi
}

# The closing line, and the exit status: 1 when a check failed.
summary() {
    printf '%s: %d passed, %d failed\n' "$(basename "$0" .sh)" "$passed" "$failed"
    ((failed == 0))
}

# forewarn_version, apt_sources, bookworm_root
source "$source_dir/packaging/common.sh"
project_version() { forewarn_version "$source_dir"; }

# wait_for_listening FILE SECONDS: the emulator's address from its first line ("listening on URL"),
# or nothing after SECONDS.
wait_for_listening() {
    local file="$1" deadline=$((SECONDS + $2)) line
    while ((SECONDS < deadline)); do
        line="$(head -n 1 "$file" 2>/dev/null || true)"
        if [[ "$line" == "listening on "* ]]; then
            echo "${line#listening on }"
            return 0
        fi
        sleep 0.1
    done
    return 1
}
