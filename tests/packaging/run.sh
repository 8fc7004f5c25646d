#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The packaging checks, as CI's "package" stage runs them (docs/building.md, "Packages"):
#   1. ./quickstart package: the Debian packages into build/packages;
#   2. check_debian_root.sh: lintian, then install, use and purge them in a clean Debian root;
#   3. ./quickstart image: forewarn-watch:<version> and :latest;
#   4. check_image.py: that image as examples/kubernetes' DaemonSet runs it, against the emulator
#      and a real control plane (tests/kubernetes/control_plane.py --controller-manager; built by
#      ./quickstart kubernetes, which CI's kubernetes stage runs first: without it this part fails);
#   5. ./quickstart package-windows and check_windows_zip.sh: the zip under Wine.
# A check is skipped (and the run fails) when what it checks could not be built.
# Root only. Prints each part's closing line; exits 1 when a part failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
root="$PWD"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$root/packaging/container/containers.conf}"
source packaging/common.sh
version="$(forewarn_version "$root")"

# Debian's python3 (python3-yaml reads the manifest), not one a version manager put first on PATH.
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3
failed=0
part() {  # part NAME COMMAND...: runs one part, its time said after it; its exit status returned
    local name="$1" start=$SECONDS rc=0
    shift
    printf '\n--- %s\n' "$name"
    "$@" || rc=$?
    printf -- '--- %s: %s in %d s\n' "$name" "$( ((rc == 0)) && echo passed || echo "FAILED (exit $rc)")" $((SECONDS - start))
    ((rc == 0)) || failed=1
    return "$rc"
}
skipped() {  # skipped NAME WHY
    printf '\n--- %s: SKIPPED (%s): the run fails\n' "$1" "$2"
    failed=1
}

if part "the Debian packages (./quickstart package)" ./quickstart package; then
    part "the packages on a clean Debian" tests/packaging/check_debian_root.sh build/packages
    if part "the images (./quickstart image)" ./quickstart image; then
        part "the image as the DaemonSet runs it" "$python" tests/kubernetes/control_plane.py --controller-manager -- \
            "$python" tests/packaging/check_image.py "$root" build/package/tools/emulator/forewarn-emulator "forewarn-watch:$version"
    else
        skipped "the image as the DaemonSet runs it" "no image"
    fi
    if part "the Windows zip (./quickstart package-windows)" ./quickstart package-windows; then
        part "the Windows zip under Wine" tests/packaging/check_windows_zip.sh "build/packages/forewarn-watch-$version-win64.zip" \
            build/package/tools/emulator/forewarn-emulator
    else
        skipped "the Windows zip under Wine" "no zip"
    fi
else
    skipped "everything else" "no packages"
fi
if podman image exists "forewarn-watch:$version"; then
    echo "the image forewarn-watch:$version: $(podman image inspect "forewarn-watch:$version" --format '{{.Size}}') bytes"
fi
exit "$failed"
