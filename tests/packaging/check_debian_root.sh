#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages on a clean Debian (docs/building.md, "Packages"): lintian on the three
# packages, then a fresh bookworm root (mmdebstrap --variant=minbase) where they are installed with
# apt-get from the files, their dependencies from Debian, and checked as an operator and a library
# user would meet them:
#   - `forewarn-watch --version` and `forewarn-emulator --version` print the package version;
#   - /etc/default/forewarn-watch is a conffile that sets nothing; the unit is where systemd reads
#     units, names /usr/bin/forewarn-watch, passes `systemd-analyze verify`, and is not enabled;
#   - the agent against the packaged emulator playing a scenario: the prepare of this VM's event,
#     its approval (the event then Started), its state file written;
#   - an upgrade (the package installed again) keeps the unit enabled and the state, and asks for
#     the agent's restart (try-restart: only if it runs);
#   - a consumer built with find_package(forewarn) (the emulator program's target too) and one built
#     with nothing but `pkg-config --cflags --libs forewarn`, both run;
#   - a purge leaves nothing of the packages: no file they installed, no conffile, no state.
# Root only (mmdebstrap, chroot, mounts). Needs the network to Debian's mirror (the packages'
# dependencies, the compiler for the consumer); the host's apt cache is shared with the root.
#
# usage: tests/packaging/check_debian_root.sh PACKAGES_DIR     (build/packages: ./quickstart package)
# Prints one line per check and "N passed, N failed"; exits 1 when a check failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/lib.sh"

[[ $# -eq 1 && -d "$1" ]] || { echo "usage: $0 PACKAGES_DIR" >&2; exit 2; }
pkgs="$(cd "$1" && pwd)"
version="$(project_version)"
watch_deb="$pkgs/forewarn-watch_${version}_$(dpkg --print-architecture).deb"
emulator_deb="$pkgs/forewarn-emulator_${version}_$(dpkg --print-architecture).deb"
dev_deb="$pkgs/libforewarn-dev_${version}_all.deb"
for deb in "$watch_deb" "$emulator_deb" "$dev_deb"; do
    [[ -f "$deb" ]] || { echo "no $deb: run ./quickstart package first" >&2; exit 2; }
done
[[ "$(id -u)" -eq 0 ]] || { echo "$0: needs root (mmdebstrap, chroot, mounts)" >&2; exit 2; }

# --- lintian: no error, no warning (the info tags are explained in docs/building.md) -----------
lintian_out="$(lintian --fail-on error,warning --info "$watch_deb" "$emulator_deb" "$dev_deb" 2>&1)" && lintian_rc=0 || lintian_rc=$?
printf '%s\n' "$lintian_out" | grep -E '^[EWI]:' | sed 's/^/  lintian: /' || true
check "lintian reports no error and no warning" test "$lintian_rc" -eq 0
for tag in $(printf '%s\n' "$lintian_out" | sed -n 's/^I: [^ ]*: \([a-z0-9.-]*\).*/\1/p' | sort -u); do
    check "lintian's info tag $tag is explained in docs/building.md" grep -q -- "$tag" "$source_dir/docs/building.md"
done

# --- a clean bookworm root ---------------------------------------------------------------------
work="$(mktemp -d /tmp/forewarn-debian-root.XXXXXX)"
root="$work/root"
mounts=()
pids=()
cleanup() {
    local pid m
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    for ((m = ${#mounts[@]} - 1; m >= 0; m--)); do umount -l "${mounts[m]}" 2>/dev/null || true; done
    # Never into a mount left behind (the host's /dev, its apt cache): --one-file-system.
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT

started=$SECONDS
bookworm_root "$root" --quiet >"$work/mmdebstrap.log" 2>&1 || { cat "$work/mmdebstrap.log" >&2; exit 1; }
echo "  a clean bookworm root (minbase) in $((SECONDS - started)) s"
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
mount --bind /dev "$root/dev" && mounts+=("$root/dev")
# The host's apt cache: what it downloaded once is not downloaded again.
mkdir -p /var/cache/apt/archives/partial
mount --bind /var/cache/apt/archives "$root/var/cache/apt/archives" && mounts+=("$root/var/cache/apt/archives")
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

mkdir -p "$root/tmp/debs"
cp "$watch_deb" "$emulator_deb" "$dev_deb" "$root/tmp/debs/"
in_root apt-get -q update >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
check "apt-get install ./forewarn-watch ./forewarn-emulator ./libforewarn-dev (dependencies from Debian)" \
    in_root apt-get -q install -y --no-install-recommends "/tmp/debs/${watch_deb##*/}" "/tmp/debs/${emulator_deb##*/}" \
    "/tmp/debs/${dev_deb##*/}"
declare -A listed
for p in forewarn-watch forewarn-emulator libforewarn-dev; do listed[$p]="$(in_root dpkg -L "$p")"; done

# --- what the packages installed ---------------------------------------------------------------
check_eq "forewarn-watch --version" "forewarn-watch $version" "$(in_root forewarn-watch --version)"
check_eq "forewarn-emulator --version" "forewarn-emulator $version" "$(in_root forewarn-emulator --version)"
check_eq "the package version is the project's" "$version" "$(in_root dpkg-query -W -f='${Version}' forewarn-watch)"
check "/etc/default/forewarn-watch is a conffile" \
    bash -c "[[ \"\$(chroot '$root' dpkg-query -W -f='\${Conffiles}' forewarn-watch)\" == *' /etc/default/forewarn-watch '* ]]"
check_eq "/etc/default/forewarn-watch sets nothing until edited" "" \
    "$(grep -v '^[[:space:]]*#' "$root/etc/default/forewarn-watch" | grep -v '^[[:space:]]*$' || true)"
unit="$root/usr/lib/systemd/system/forewarn-watch.service"
check "the unit is in /usr/lib/systemd/system" test -f "$unit"
check_eq "the unit runs the installed program" "ExecStart=/usr/bin/forewarn-watch --json" "$(grep '^ExecStart=' "$unit" || true)"
# minbase has no systemd: installed here for its systemd-analyze (the documentation's man page is
# checked below, not by man).
in_root apt-get -q install -y --no-install-recommends systemd >"$work/apt-systemd.log" 2>&1 ||
    { cat "$work/apt-systemd.log" >&2; exit 1; }
check "systemd-analyze verify accepts the installed unit" \
    in_root systemd-analyze verify --man=no /usr/lib/systemd/system/forewarn-watch.service
check "the unit is not enabled by the install" \
    bash -c "! ls '$root'/etc/systemd/system/*.wants/forewarn-watch.service >/dev/null 2>&1"
check "the manual pages are installed" test -f "$root/usr/share/man/man1/forewarn-watch.1.gz" -a -f "$root/usr/share/man/man1/forewarn-emulator.1.gz"

# Enabled as an operator does (its link must be gone after the purge: the postrm's
# `deb-systemd-helper purge`, from the state the postinst recorded).
in_root systemctl enable forewarn-watch.service >/dev/null 2>&1 || true
check "systemctl enable works on the installed unit" test -L "$root/etc/systemd/system/multi-user.target.wants/forewarn-watch.service"

# --- the agent against the packaged emulator ---------------------------------------------------
cat >"$root/tmp/scenario.json" <<'EOF'
{
  "name": "package-check",
  "vms": [{"name": "vm-a"}, {"name": "vm-b"}],
  "steps": [
    {"at": "1s", "azure_event": {"EventId": "PKG-REBOOT-A", "EventType": "Reboot", "Resources": ["vm-a"],
                                 "notice": "15m", "impact": "1h"}},
    {"at": "1s", "azure_event": {"EventId": "PKG-FREEZE-B", "EventType": "Freeze", "Resources": ["vm-b"],
                                 "notice": "15m", "impact": "1h"}}
  ]
}
EOF
chroot "$root" forewarn-emulator --listen 127.0.0.1:0 --scenario /tmp/scenario.json --exit-with-parent \
    >"$work/emulator.out" 2>"$work/emulator.err" &
pids+=($!)
endpoint="$(wait_for_listening "$work/emulator.out" 20 || true)"
check "the packaged emulator listens" test -n "$endpoint"
if [[ -z "$endpoint" ]]; then
    sed 's/^/  emulator: /' "$work/emulator.out" "$work/emulator.err"
    summary
    exit 1
fi
mkdir -p "$root/var/lib/forewarn"
rc=0
timeout 60 chroot "$root" forewarn-watch --cloud=azure --endpoint="$endpoint" --approve=own --json --exit-after=3 \
    --state-file=/var/lib/forewarn/state.json >"$work/agent.out" 2>"$work/agent.err" || rc=$?
sed 's/^/  agent: /' "$work/agent.out" "$work/agent.err"
check_eq "the agent exits 0 after its three lines (two prepares, a start)" 0 "$rc"
check "the agent prepares this VM's event" grep -q '"change":"prepare".*"id":"PKG-REBOOT-A"' "$work/agent.out"
check "the agent approves this VM's event" grep -q 'approved PKG-REBOOT-A' "$work/agent.err"
check "the event then starts" grep -q '"change":"started".*"id":"PKG-REBOOT-A"' "$work/agent.out"
check "another VM's event is not approved" bash -c "! grep -q 'approved.*PKG-FREEZE-B' '$work/agent.err'"
check "the state file is written" test -s "$root/var/lib/forewarn/state.json"

# --- an upgrade: the unit stays enabled, a running agent is restarted, the state is kept ---------
# Installing the package again is an upgrade (prerm upgrade, then postinst configure with the
# version installed), what `apt-get upgrade` runs. No systemd runs in this root: as on a machine
# where it does (/run/systemd/system), the postinst asks deb-systemd-invoke for the restart, here a
# stand-in (dpkg-divert) that records what it is asked.
run_made=""  # what is made here, removed after
if [[ ! -d "$root/run/systemd/system" ]]; then
    if [[ -d "$root/run/systemd" ]]; then run_made="$root/run/systemd/system"; else run_made="$root/run/systemd"; fi
    mkdir -p "$root/run/systemd/system"
fi
# (dpkg-divert warns that renaming an Essential package's file is dangerous: not in a throwaway root.)
in_root dpkg-divert --quiet --local --rename --add /usr/bin/deb-systemd-invoke 2>/dev/null
printf '#!/bin/sh\necho "$*" >>/tmp/deb-systemd-invoke.log\n' >"$root/usr/bin/deb-systemd-invoke"
chmod 755 "$root/usr/bin/deb-systemd-invoke"
check "dpkg --install of the installed package again (an upgrade) succeeds" \
    in_root dpkg --install "/tmp/debs/${watch_deb##*/}"
check "the upgrade keeps the unit enabled" test -L "$root/etc/systemd/system/multi-user.target.wants/forewarn-watch.service"
check "the upgrade keeps deb-systemd-helper's record that it is enabled" \
    in_root env DPKG_MAINTSCRIPT_PACKAGE=forewarn-watch deb-systemd-helper --quiet was-enabled forewarn-watch.service
check_eq "the upgrade restarts the agent if it runs (try-restart), and asks nothing else" \
    "try-restart forewarn-watch.service" "$(cat "$root/tmp/deb-systemd-invoke.log" 2>/dev/null || true)"
check "the upgrade keeps the state file" test -s "$root/var/lib/forewarn/state.json"
rm -f "$root/usr/bin/deb-systemd-invoke" "$root/tmp/deb-systemd-invoke.log"
in_root dpkg-divert --quiet --local --rename --remove /usr/bin/deb-systemd-invoke 2>/dev/null
[[ -z "$run_made" ]] || rm -rf --one-file-system "$run_made"

# --- a library user: find_package and pkg-config -----------------------------------------------
in_root apt-get -q install -y --no-install-recommends g++ cmake make pkg-config >"$work/apt-tools.log" 2>&1 ||
    { cat "$work/apt-tools.log" >&2; exit 1; }
cp -r "$source_dir/tests/consumer" "$root/tmp/consumer"
check "find_package(forewarn) from the package: a consumer builds and its tests pass" \
    in_root ctest --build-and-test /tmp/consumer /tmp/consumer-build --build-generator "Unix Makefiles" \
    --build-project forewarn_consumer --build-options -DFOREWARN_CONSUMER_MODE=find_package \
    -DFOREWARN_EXPECTED_PREFIX=/usr -DFOREWARN_CONSUMER_EMULATOR=ON -DCMAKE_CXX_STANDARD=17 \
    --test-command ctest --output-on-failure
check "pkg-config --cflags --libs forewarn: a consumer builds and runs" \
    in_root cmake -DPKG_CONFIG=pkg-config -DPREFIX=/usr -DPCDIR=/usr/share/pkgconfig -DCXX=g++ -DSTD=17 \
    -DSOURCE=/tmp/consumer/main.cpp -DOUT=/tmp/consumer-pc/forewarn-consumer -P /tmp/consumer/pkgconfig.cmake

# --- purge: nothing of the packages is left ----------------------------------------------------
check "apt-get purge removes the three packages" \
    in_root apt-get -q purge -y forewarn-watch forewarn-emulator libforewarn-dev
left=()
for p in "${!listed[@]}"; do
    while IFS= read -r path; do
        [[ -n "$path" && "$path" != "/." ]] || continue
        # Shared directories (/usr, /etc/default, ...) stay; a file, or a directory of forewarn's, must not.
        if [[ -e "$root$path" && ! -d "$root$path" ]] || [[ -d "$root$path" && "$path" == *forewarn* ]]; then left+=("$path"); fi
    done <<<"${listed[$p]}"
done
check_eq "no file or folder of the packages is left after the purge" "" "${left[*]}"
check "the state directory is gone after the purge" test ! -e "$root/var/lib/forewarn"
check_eq "nothing named forewarn is left anywhere in the root (outside /tmp)" "" \
    "$(find "$root" -path "$root/proc" -prune -o -path "$root/dev" -prune -o -path "$root/tmp" -prune \
        -o -path "$root/var/cache/apt/archives" -prune -o -name '*forewarn*' -print | sed "s|^$root||" | tr '\n' ' ')"
check "the conffile is gone after the purge" test ! -e "$root/etc/default/forewarn-watch"

summary
