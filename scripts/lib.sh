# SPDX-License-Identifier: GPL-2.0
# Shared by flushlog's scripts: where the cache is, which kernel, messages.
# shellcheck shell=bash

FLUSHLOG_TOP=${FLUSHLOG_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
FLUSHLOG_CACHE=${FLUSHLOG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flushlog}

fl_say() {
	echo "${0##*/}: $*" >&2
}

# fl_die WHY: the work could not be done: exit 4, as flushlog's table has
# it (flushlog(1) EXIT STATUS), never 1, which says a state failed
fl_die() {
	echo "${0##*/}: $*" >&2
	exit 4
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

# fl_cache_lock NAME: wait for, then hold, the cache's lock NAME (one per
# entry a script fills), so that two runs filling one entry at once (make
# test's parallel jobs, two crashtests started together) take turns and
# the second finds it filled.  One lock at a time, held until
# fl_cache_unlock or the script's end.
fl_cache_lock() {
	mkdir -p "$FLUSHLOG_CACHE/locks"
	exec {FL_LOCK_FD}>"$FLUSHLOG_CACHE/locks/$1.lock"
	flock "$FL_LOCK_FD"
}

fl_cache_unlock() {
	exec {FL_LOCK_FD}>&-
}

# Debian's kernel lines: 6.1 is bookworm's own (the linux-image-amd64 meta
# package), 6.12 comes from bookworm-security and has no meta package.
FL_KERNEL_LINES="6.1 6.12"
# The default everywhere (--kernel, FLUSHLOG_KERNEL): the distribution's.
FL_DEFAULT_LINE=6.1

# fl_is_line WORD: WORD names one of Debian's kernel lines
fl_is_line() {
	[[ " $FL_KERNEL_LINES " == *" $1 "* ]]
}

# fl_kernel_version [LINE]: the ABI version (uname -r) of Debian's newest
# kernel of LINE (default 6.1), read from the package index at run time,
# never hard-coded: 6.1 through linux-image-amd64's dependency, 6.12 as the
# highest linux-image-6.12.N+deb12-amd64 the index has.
fl_kernel_version() {
	local line=${1:-$FL_DEFAULT_LINE} v
	case $line in
	6.1)
		v=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: linux-image-\(6\.1\.[0-9].*\)$/\1/p' | head -n 1) ;;
	*)
		fl_is_line "$line" || fl_die "no Debian kernel line '$line' (one of: $FL_KERNEL_LINES)"
		v=$(apt-cache pkgnames "linux-image-$line." 2>/dev/null |
			sed -n "s/^linux-image-\(${line//./\\.}\.[0-9]*+deb12-amd64\)$/\1/p" |
			sort -V | tail -n 1) ;;
	esac
	[ -n "$v" ] || fl_die "cannot resolve Debian's $line kernel from the package index (apt-get update?)"
	echo "$v"
}

# A short hash of files' contents, for cache keys.
fl_hash_files() {
	cat "$@" | sha256sum | cut -c1-16
}

# fl_linux_source_version [LINE]: the Debian version of the installed
# linux-source-LINE package (default 6.1)
fl_linux_source_version() {
	local line=${1:-$FL_DEFAULT_LINE}
	dpkg-query -W -f='${Version}' "linux-source-$line" 2>/dev/null ||
		fl_die "linux-source-$line is not installed (scripts/install-deps kernel)"
}

# fl_linux_source [LINE]: unpack /usr/src/linux-source-LINE.tar.xz into the
# cache once per package version and print the tree's path.  The tree is
# never modified: patched trees are copies of it.
fl_linux_source() {
	local line=${1:-$FL_DEFAULT_LINE} ver dir tarball
	tarball=/usr/src/linux-source-$line.tar.xz
	ver=$(fl_linux_source_version "$line")
	dir=$FLUSHLOG_CACHE/linux-source/$ver
	fl_cache_lock "linux-source-$ver"
	if [ ! -f "$dir/ok" ]; then
		[ -f "$tarball" ] || fl_die "$tarball is missing (scripts/install-deps kernel)"
		fl_say "unpacking $tarball ($ver)"
		rm -rf "$dir"
		mkdir -p "$dir"
		tar -C "$dir" -xJf "$tarball"
		[ -d "$dir/linux-source-$line" ] || fl_die "$tarball has no linux-source-$line/"
		touch "$dir/ok"
	fi
	fl_cache_unlock
	echo "$dir/linux-source-$line"
}

# fl_tree_version DIR: the kernel version (6.12.118) of the source tree DIR,
# from its top Makefile
fl_tree_version() {
	awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2; print v "." p "." s; exit }' "$1/Makefile"
}

# fl_tree_line DIR: the line (6.1, 6.12, ...) of the source tree DIR
fl_tree_line() {
	local v
	v=$(fl_tree_version "$1")
	echo "${v%.*}"
}

# fl_kernel WORD: resolve a --kernel word (qemu/run-guest, crashtest,
# matrix, bench, FLUSHLOG_KERNEL) into
#   FL_K_NAME     what reports call it ("Debian 6.12.118+deb12-amd64")
#   FL_K_VMLINUZ  the kernel image
#   FL_K_RELEASE  its uname -r ('' when unknown: a bare bzImage)
#   FL_K_ROOT     a root folder with lib/modules/FL_K_RELEASE, or '' (no modules)
#   FL_K_KO       the dm-flushlog.ko to load, or '' (built in)
#   FL_K_BUILTIN  its modules.builtin, or '' (unknown)
#   FL_K_SLOW     true for a KASAN kernel: booted -machine acpi=off -smp 1,
#                 the way such a kernel does not stall under TCG
# WORD: 6.1 or 6.12 (Debian's kernel of that line, dm-flushlog built as a
# module against its headers; "debian" is the default line), debug (the
# debug kernel, built from linux-source-6.12), debug-6.1, DIR (a kernel
# build folder, O= or in-tree, such as scripts/build-kernel prints) or FILE
# (a bzImage with dm-flushlog and what the guest needs built in).
# shellcheck disable=SC2034 # FL_K_* are for the caller
fl_kernel() {
	local word=$1
	FL_K_ROOT='' FL_K_KO='' FL_K_BUILTIN='' FL_K_SLOW=false FL_K_RELEASE=''
	case $word in
	debian) word=$FL_DEFAULT_LINE ;;
	debug) word=debug-6.12 ;;
	esac
	if fl_is_line "$word"; then
		FL_K_RELEASE=$(fl_kernel_version "$word")
		FL_K_ROOT=$("$FLUSHLOG_TOP/qemu/fetch-kernel" "$word")
		FL_K_VMLINUZ=$FL_K_ROOT/boot/vmlinuz-$FL_K_RELEASE
		FL_K_KO=$("$FLUSHLOG_TOP/scripts/build-module" --line "$word")
		FL_K_NAME="Debian $FL_K_RELEASE"
	elif [[ $word == debug-* ]] && fl_is_line "${word#debug-}"; then
		local dir
		dir=$("$FLUSHLOG_TOP/scripts/build-debug-kernel" --line "${word#debug-}") ||
			fl_die "the debug kernel ($word) did not build"
		fl_kernel_dir "$dir/build"
		FL_K_NAME="the debug kernel $FL_K_RELEASE"
	elif [ -d "$word" ]; then
		fl_kernel_dir "$word"
	elif [ -f "$word" ]; then
		FL_K_VMLINUZ=$(realpath "$word")
		FL_K_NAME="the bzImage $FL_K_VMLINUZ"
	else
		fl_bad_args "--kernel: '$word' is neither 6.1, 6.12, debug, debug-6.1, a kernel build folder nor a bzImage"
	fi
}

# fl_kernel_dir DIR: fl_kernel for a kernel build folder (or one holding
# build/, as scripts/build-kernel's do)
# shellcheck disable=SC2034 # FL_K_* are for the caller
fl_kernel_dir() {
	local dir config
	dir=$(realpath "$1")
	[ -f "$dir/arch/x86/boot/bzImage" ] || [ ! -f "$dir/build/arch/x86/boot/bzImage" ] ||
		dir=$dir/build
	[ -f "$dir/arch/x86/boot/bzImage" ] ||
		fl_bad_args "--kernel: $1 is not a built kernel folder (no arch/x86/boot/bzImage)"
	config=$dir/.config
	FL_K_VMLINUZ=$dir/arch/x86/boot/bzImage
	FL_K_RELEASE=$(cat "$dir/include/config/kernel.release" 2>/dev/null || true)
	FL_K_NAME="$FL_K_RELEASE built in $dir"
	[ ! -f "$dir/modules.builtin" ] || FL_K_BUILTIN=$dir/modules.builtin
	grep -q '^CONFIG_KASAN=y' "$config" 2>/dev/null && FL_K_SLOW=true
	if grep -q '^CONFIG_MODULES=y' "$config" 2>/dev/null && [ -s "$dir/modules.order" ]; then
		FL_K_ROOT=$("$FLUSHLOG_TOP/scripts/build-kernel" --install-modules "$dir")
	fi
	if ! grep -q '^CONFIG_DM_FLUSHLOG=y' "$config" 2>/dev/null; then
		grep -q '^CONFIG_MODULES=y' "$config" 2>/dev/null ||
			fl_bad_args "--kernel: $dir has neither dm-flushlog built in nor modules"
		if grep -q '^CONFIG_DM_FLUSHLOG=m' "$config"; then
			[ -z "$FL_K_ROOT" ] ||
				FL_K_KO=$(find "$FL_K_ROOT/lib/modules" -name 'dm-flushlog.ko*' | head -n 1)
			[ -n "$FL_K_KO" ] ||
				fl_die "--kernel: $dir builds dm-flushlog as a module, but has not built it (make modules)"
		else
			FL_K_KO=$("$FLUSHLOG_TOP/scripts/build-module" --kdir "$dir")
		fi
	fi
	return 0
}

# fl_kernel_has_module M: the fl_kernel'd kernel has module M, loadable or
# built in (unknown for a bare bzImage: assumed built in).  Nothing is loaded:
# modprobe -d ROOT --show-depends only reads ROOT's modules.dep; modules
# are loaded by the guest's init alone, inside QEMU.
fl_kernel_has_module() {
	if [ -n "$FL_K_ROOT" ] &&
	   modprobe -d "$FL_K_ROOT" -S "$FL_K_RELEASE" --show-depends "$1" >/dev/null 2>&1; then
		return 0
	fi
	[ -n "$FL_K_BUILTIN" ] || [ -n "$FL_K_ROOT" ] || return 0
	[ -n "$FL_K_BUILTIN" ] && grep -Eq "/${1//[-_]/[-_]}\.ko$" "$FL_K_BUILTIN"
}
