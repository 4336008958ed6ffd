#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A kernel tree built by scripts/build-kernel (linux-source-6.12, unpacked,
# standing in for a user's own tree: the debug kernel is built that way)
# runs make crashtest on ext4 with --kernel DIR, every state passing, on
# the very build build-info.txt names; and build-kernel run again over
# the unchanged tree rebuilds nothing: its own log compiles and links
# nothing, and the kernel image keeps its time stamp.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: debug
# asan: no
_require_guest

dir=$("$FLUSHLOG_TOP/scripts/build-debug-kernel")
image=$dir/build/arch/x86/boot/bzImage
before=$(stat -c %Y "$image")
dir2=$("$FLUSHLOG_TOP/scripts/build-debug-kernel" --rebuild)
[ "$dir2" = "$dir" ] || _fail "a second build went to $dir2, not $dir"
# build.log is this last run's alone (build-kernel starts it anew)
grep -E '^  (CC|LD|AR) ' "$dir/build.log" | head -n 5 | grep . &&
	_fail "a second build of an unchanged tree compiled or linked something (above)"
[ "$(stat -c %Y "$image")" = "$before" ] || _fail "a second build of an unchanged tree rebuilt the kernel"
echo "build-kernel again over the same tree: nothing compiled or linked"

# 30 operations, not 100: this is about which kernel runs, and each of a
# KASAN kernel's states takes seconds
_crashtest_passes ext4 --kernel "$dir" --oracle fsync --ops 30
built=$(sed -n 's/^version: //p' "$dir/build-info.txt")
[[ $built =~ ^[0-9.]+\ \#[0-9]+\  ]] || _fail "build-info.txt names no build ('$built')"
ran=$(sed -n 2p "$TEST_TMP/ext4/kernel.txt")
# /proc/version holds the release and the build's "#N ... date"
[[ $ran == *"${built%% *}"* && $ran == *"${built#* }"* ]] ||
	_fail "the guest ran '$ran', not the build in $dir ('$built')"
echo "ext4: checked on $ran"
