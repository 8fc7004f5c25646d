#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds a real Kubernetes control plane for the tests (kube-apiserver and kube-controller-manager)
# from Debian bookworm's own `kubernetes` source package (Kubernetes 1.20.2, vendor/ included),
# the way its debian/rules builds kubectl: a GOPATH whose src/k8s.io/kubernetes is the tree,
# CGO_ENABLED=0, `make WHAT=...`. About 6 minutes on 2 cores, once: the two binaries are cached in
# $FOREWARN_KUBE_CACHE (default /var/cache/forewarn/kubernetes-<version>) and a second run only
# prints that directory. Needs root for apt-get (a deb-src entry made from the machine's own
# Debian source list, and golang-go, dpkg-dev, rsync, jq). Prints the directory on its last line.
#
#   tests/kubernetes/build_control_plane.sh
set -euo pipefail
version="1.20.5+really1.20.2-1.1+deb12u1"
cache="${FOREWARN_KUBE_CACHE:-/var/cache/forewarn/kubernetes-$version}"
binaries=(kube-apiserver kube-controller-manager)

have_all() {
    local b
    for b in "${binaries[@]}"; do [[ -x "$cache/$b" ]] || return 1; done
}
if have_all; then
    echo "$cache"
    exit 0
fi

sudo_() { if ((EUID == 0)); then "$@"; else sudo "$@"; fi; }

# The source package: deb-src entries beside the machine's deb ones (deb822 or one-line lists).
src_list=/etc/apt/sources.list.d/forewarn-deb-src.sources
if ! apt-cache showsrc kubernetes 2>/dev/null | grep -q "^Version: $version"; then
    if [[ ! -f "$src_list" ]]; then
        tmp="$(mktemp)"
        if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
            sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$tmp"
        else
            grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | sed 's/^deb /deb-src /' >"$tmp"
            src_list=/etc/apt/sources.list.d/forewarn-deb-src.list
        fi
        sudo_ install -m 0644 "$tmp" "$src_list"
        rm -f "$tmp"
    fi
    sudo_ apt-get update -qq
fi
missing=()
for p in golang-go dpkg-dev rsync jq; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) || sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"

work="$(mktemp -d "${TMPDIR:-/tmp}/forewarn-kube.XXXXXX")"
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"  # apt-get source downloads as _apt
cd "$work"
apt-get source -qq --download-only "kubernetes=$version" >/dev/null
dpkg-source --no-check -x ./*.dsc src >/dev/null
export GOPATH="$work/gopath" GOCACHE="$work/gocache" CGO_ENABLED=0
mkdir -p "$GOPATH/src/k8s.io"
ln -s "$work/src" "$GOPATH/src/k8s.io/kubernetes"
cd "$GOPATH/src/k8s.io/kubernetes"
targets=()
for b in "${binaries[@]}"; do targets+=("cmd/$b"); done
make WHAT="${targets[*]}" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; exit 1; }
sudo_ mkdir -p "$cache"
for b in "${binaries[@]}"; do
    found="$(find _output -type f -name "$b" -perm -u+x | head -1)"
    [[ -n "$found" ]] || { echo "build_control_plane: $b was not built" >&2; exit 1; }
    sudo_ install -m 0755 "$found" "$cache/$b"
done
"$cache/kube-apiserver" --version >&2
echo "$cache"
