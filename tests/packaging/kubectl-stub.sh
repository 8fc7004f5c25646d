#!/bin/sh
# SPDX-License-Identifier: MIT
# A recording kubectl for the image test (tests/packaging/check_image.py): one node's cordon and
# forewarn's annotation kept in files under /stub (a folder the test mounts), every call appended
# to /stub/calls.log, the answers kubectl gives to what examples/kubernetes/forewarn-drain.sh asks.
dir=/stub
printf '%s\n' "$*" >>"$dir/calls.log"
case "$1" in
get)
    case "$5" in
    "jsonpath={.spec.unschedulable}") cat "$dir/unschedulable" 2>/dev/null || true ;;
    "jsonpath={.metadata.annotations.forewarn/cordoned-for}") cat "$dir/owner" 2>/dev/null || true ;;
    *) echo "stub: unknown query $*" >&2; exit 1 ;;
    esac
    ;;
cordon) printf true >"$dir/unschedulable" ;;
uncordon) : >"$dir/unschedulable" ;;
annotate)
    shift 3
    for a in "$@"; do
        case "$a" in
        --overwrite) ;;
        forewarn/cordoned-for-) : >"$dir/owner" ;;
        forewarn/cordoned-for=*) printf '%s' "${a#*=}" >"$dir/owner" ;;
        *) echo "stub: unknown annotation $a" >&2; exit 1 ;;
        esac
    done
    ;;
drain) exit 0 ;;
*) echo "stub: unexpected call $*" >&2; exit 1 ;;
esac
