# SPDX-License-Identifier: MIT
# What ./quickstart (package, image) and the packaging checks (tests/packaging) share: the
# project's version, and the clean Debian 12 roots mmdebstrap makes. Sourced, not run.

# forewarn_version SOURCE_DIR: config.hpp's FOREWARN_VERSION_STRING (CMake checks that the project's
# version and packaging/debian/changelog's agree with it).
forewarn_version() { sed -n 's/^#define FOREWARN_VERSION_STRING "\(.*\)"$/\1/p' "$1/include/forewarn/config.hpp"; }

# The apt sources a root made here gets: this machine's own (its mirror, deb822 or one-line).
apt_sources() {
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        echo /etc/apt/sources.list.d/debian.sources
    elif [[ -s /etc/apt/sources.list ]]; then
        echo /etc/apt/sources.list
    else
        echo http://deb.debian.org/debian
    fi
}

# bookworm_root TARGET [MMDEBSTRAP OPTION...]: a minbase Debian 12 root with merged /usr (mmdebstrap's
# hook, not the usrmerge package, which would bring Perl) into TARGET (a directory, or a .tar).
bookworm_root() {
    local target="$1"
    shift
    mmdebstrap --variant=minbase --mode=root --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr "$@" \
        bookworm "$target" "$(apt_sources)"
}
