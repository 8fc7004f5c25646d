#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds a real Kubernetes control plane for the tests (kube-apiserver and kube-controller-manager)
# from Debian bookworm's own `kubernetes` source package (Kubernetes 1.20.2, vendor/ included),
# the way its debian/rules builds kubectl: a GOPATH whose src/k8s.io/kubernetes is the tree,
# CGO_ENABLED=0, `make WHAT=...`. One change to the tree: the vendored github.com/modern-go/reflect2
# v1.0.1 is replaced by Debian's v1.0.2 (golang-github-modern-go-reflect2-dev), since v1.0.1 reads
# Go's map internals as they were before Go 1.18, and built with bookworm's Go 1.19 kube-apiserver
# dies ("fatal error: fault") on every JSON answer it pretty-prints (curl's User-Agent, ?pretty).
# About 10 minutes on 2 cores, once: the two binaries are cached in $FOREWARN_KUBE_CACHE (default
# /var/cache/forewarn/kubernetes-<version>-reflect2) and a second run only prints that directory.
# Needs root for apt-get (a deb-src entry made from the machine's own Debian source list, and
# golang-go, golang-github-modern-go-reflect2-dev, dpkg-dev, rsync, jq). Prints the directory on
# its last line.
#
#   tests/kubernetes/build_control_plane.sh
set -euo pipefail
version="1.20.5+really1.20.2-1.1+deb12u1"
# -reflect2: a cache from before the reflect2 swap holds a kube-apiserver that crashes; this name
# makes such a machine build again (tests/kubernetes/control_plane.py takes the newest cache).
cache="${FOREWARN_KUBE_CACHE:-/var/cache/forewarn/kubernetes-$version-reflect2}"
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
for p in golang-go golang-github-modern-go-reflect2-dev dpkg-dev rsync jq; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) || sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"

work="$(mktemp -d "${TMPDIR:-/tmp}/forewarn-kube.XXXXXX")"
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"  # apt-get source downloads as _apt
cd "$work"
apt-get source -qq --download-only "kubernetes=$version" >/dev/null
dpkg-source --no-check -x ./*.dsc src >/dev/null

# reflect2 v1.0.2 in place of the vendored v1.0.1 (see the top): its Go and assembly files replace
# the old ones, whose names differ (go_below_19.go would clash with go_below_118.go). The build
# runs in GOPATH mode (hack/lib/init.sh sets GO111MODULE=off) and reads neither go.mod nor
# vendor/modules.txt; both still say v1.0.2 afterwards (go.mod's replace and modules.txt's two
# lines), so that the tree says what it holds. go.sum keeps v1.0.1's sums (a vendored build reads
# none).
reflect2_src=/usr/share/gocode/src/github.com/modern-go/reflect2
reflect2_dst=src/vendor/github.com/modern-go/reflect2
[[ -f "$reflect2_src/go_above_118.go" ]] \
    || { echo "build_control_plane: $reflect2_src is not reflect2 1.0.2 or later" >&2; exit 1; }
rm -f "$reflect2_dst"/*.go "$reflect2_dst"/*.s
cp "$reflect2_src"/*.go "$reflect2_src"/*.s "$reflect2_dst/"
sed -i '/^\tgithub.com\/modern-go\/reflect2 /s/v1\.0\.1/v1.0.2/g' src/go.mod
sed -i '/^# github.com\/modern-go\/reflect2 /s/v1\.0\.1/v1.0.2/g' src/vendor/modules.txt
if grep -q 'modern-go/reflect2.* v1\.0\.1' src/go.mod src/vendor/modules.txt; then
    echo "build_control_plane: reflect2 v1.0.1 still named in go.mod or vendor/modules.txt" >&2
    exit 1
fi
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
