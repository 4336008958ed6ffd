# SPDX-License-Identifier: GPL-2.0
# Shared by flushlog's scripts: where the cache is, which kernel, messages.
# shellcheck shell=bash

FLUSHLOG_TOP=${FLUSHLOG_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
FLUSHLOG_CACHE=${FLUSHLOG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flushlog}

fl_say() {
	echo "${0##*/}: $*" >&2
}

fl_die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# --help: the script's comment block at the top (from its line 4 on,
# whatever its length), then exit 2
fl_usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "$0" >&2
	exit 2
}

# for a command line that makes no sense: exit 2, as usage errors do
fl_bad_args() {
	echo "${0##*/}: $*" >&2
	exit 2
}

# The ABI version of Debian's current kernel, from the meta package
# (linux-image-amd64 depends on linux-image-<version>); never hard-coded.
fl_kernel_version() {
	local v
	v=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9].*\)$/\1/p' | head -n 1)
	[ -n "$v" ] || fl_die "cannot resolve linux-image-amd64's kernel version (apt-get update?)"
	echo "$v"
}

# A short hash of files' contents, for cache keys.
fl_hash_files() {
	cat "$@" | sha256sum | cut -c1-16
}

# The Debian version of the installed linux-source-6.1 package.
fl_linux_source_version() {
	dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null ||
		fl_die "linux-source-6.1 is not installed (scripts/install-deps kernel)"
}

# Unpack /usr/src/linux-source-6.1.tar.xz into the cache once per package
# version and print the tree's path.  The tree is never modified: patched
# trees are copies of it.
fl_linux_source() {
	local ver dir tarball=/usr/src/linux-source-6.1.tar.xz
	ver=$(fl_linux_source_version)
	dir=$FLUSHLOG_CACHE/linux-source/$ver
	if [ ! -f "$dir/ok" ]; then
		[ -f "$tarball" ] || fl_die "$tarball is missing (scripts/install-deps kernel)"
		fl_say "unpacking $tarball ($ver)"
		rm -rf "$dir"
		mkdir -p "$dir"
		tar -C "$dir" -xJf "$tarball"
		[ -d "$dir/linux-source-6.1" ] || fl_die "$tarball has no linux-source-6.1/"
		touch "$dir/ok"
	fi
	echo "$dir/linux-source-6.1"
}
