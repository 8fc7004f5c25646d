#!/bin/sh
# SPDX-License-Identifier: MIT
# forewarn-watch's hook for a Kubernetes node (docs/kubernetes.md): give it as --on-prepare and
# --on-recover. At prepare it cordons this node, marks the cordon as its own (an annotation naming
# the event) and drains it with a timeout that ends before the event's NotBefore, exiting 0 only
# when the drain finished (then forewarn-watch approves the event). At recover (the event over, or
# cancelled) it uncordons the node, but only a cordon it made itself for that event: a node
# someone else cordoned stays cordoned.
#
# From forewarn-watch: FOREWARN_HOOK, FOREWARN_EVENT_ID, FOREWARN_NOT_BEFORE (ISO-8601 UTC or
# empty), FOREWARN_REASON. From the DaemonSet: NODE_NAME (the downward API's spec.nodeName).
# Optional: FOREWARN_DRAIN_MARGIN (seconds kept free before NotBefore, default 20),
# FOREWARN_DRAIN_TIMEOUT (when NotBefore is unknown, default 120), KUBECTL (default kubectl).
#
# Everything that comes from the metadata service is data: quoted, never evaluated.
set -u

kubectl=${KUBECTL:-kubectl}
node=${NODE_NAME:?NODE_NAME must name this node (the downward API: spec.nodeName)}
hook=${FOREWARN_HOOK:-}
annotation=forewarn/cordoned-for

# The event id as an annotation value: at most 63 of [A-Za-z0-9_.-], starting and ending alphanumeric.
mark=$(printf '%s' "${FOREWARN_EVENT_ID:-event}" | tr -c 'A-Za-z0-9_.-' '_' | cut -c1-61)
mark="e${mark}0"

log() { printf 'forewarn-drain: %s\n' "$*" >&2; }

case "$hook" in
prepare)
    owner=$("$kubectl" get node "$node" -o "jsonpath={.metadata.annotations.forewarn/cordoned-for}") || exit 1
    unschedulable=$("$kubectl" get node "$node" -o "jsonpath={.spec.unschedulable}") || exit 1
    if [ "$unschedulable" = "true" ] && [ -z "$owner" ]; then
        log "node $node was cordoned by someone else: draining, and it stays cordoned afterwards"
    else
        "$kubectl" cordon "$node" || exit 1
        "$kubectl" annotate node "$node" --overwrite "$annotation=$mark" || exit 1
    fi
    timeout=${FOREWARN_DRAIN_TIMEOUT:-120}
    if [ -n "${FOREWARN_NOT_BEFORE:-}" ]; then
        not_before=$(date -u -d "$FOREWARN_NOT_BEFORE" +%s 2>/dev/null) || not_before=
        if [ -n "$not_before" ]; then
            timeout=$((not_before - $(date -u +%s) - ${FOREWARN_DRAIN_MARGIN:-20}))
            [ "$timeout" -ge 10 ] || timeout=10
        fi
    fi
    log "draining $node for event $FOREWARN_EVENT_ID within ${timeout}s"
    exec "$kubectl" drain "$node" --ignore-daemonsets --delete-emptydir-data --timeout="${timeout}s"
    ;;
recover)
    owner=$("$kubectl" get node "$node" -o "jsonpath={.metadata.annotations.forewarn/cordoned-for}") || exit 1
    if [ "$owner" != "$mark" ]; then
        log "node $node: not cordoned by forewarn for this event (${FOREWARN_REASON:-}): left as it is"
        exit 0
    fi
    "$kubectl" uncordon "$node" || exit 1
    "$kubectl" annotate node "$node" "$annotation-" || exit 1
    log "node $node uncordoned: event $FOREWARN_EVENT_ID ${FOREWARN_REASON:-over}"
    ;;
*)
    exit 0  # started: nothing to do
    ;;
esac
