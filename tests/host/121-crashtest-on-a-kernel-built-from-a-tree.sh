#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A kernel tree built by scripts/build-kernel (linux-source-6.12, unpacked,
# standing in for a user's own tree: the debug kernel is built that way)
# runs make crashtest on ext4 with --kernel DIR, every state passing; and a
# second build-kernel run over the unchanged tree rebuilds nothing: the
# kernel image keeps its time stamp.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: debug
# asan: no
_require_guest

dir=$("$FLUSHLOG_TOP/scripts/build-debug-kernel")
image=$dir/build/arch/x86/boot/bzImage
before=$(stat -c %Y "$image")
dir2=$("$FLUSHLOG_TOP/scripts/build-debug-kernel")
[ "$dir2" = "$dir" ] || _fail "a second build went to $dir2, not $dir"
[ "$(stat -c %Y "$image")" = "$before" ] || _fail "a second build of an unchanged tree rebuilt the kernel"
! grep -E '^  (CC|LD|AR) ' "$dir/build.log" | head -n 5 | grep . ||
	_fail "a second build of an unchanged tree compiled something (build.log above)"
echo "build-kernel again over the same tree: nothing rebuilt"

_crashtest_passes ext4 --kernel "$dir" --oracle fsync
ran=$(cat "$TEST_TMP/ext4/kernel.txt")
[ "$ran" = "$(cat "$dir/build/include/config/kernel.release")" ] ||
	_fail "the guest ran $ran, not the kernel built in $dir"
echo "ext4: checked on $ran, built in $dir"
