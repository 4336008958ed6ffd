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
