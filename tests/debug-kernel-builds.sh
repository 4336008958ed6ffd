#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The debug guest kernel (scripts/build-debug-kernel: linux-source-6.12 with
# the series, tinyconfig plus qemu/guest.config and qemu/debug.config:
# KASAN, lockdep, kmemleak, DM_FLUSHLOG=y) builds, or is in the cache
# already.  tests/run runs this first when a pass is on the debug kernel,
# with no time limit: a cold build takes about 10 minutes on a quiet
# machine, far more on a busy one, and a slow machine alone must not fail
# the suite.
. "$FLUSHLOG_TOP/tests/common.sh"

dpkg-query -W -f='${Status}' linux-source-6.12 2>/dev/null | grep -q 'ok installed' ||
	_fail "linux-source-6.12 is not installed (scripts/install-deps kernel)"
start=$SECONDS
dir=$("$FLUSHLOG_TOP/scripts/build-debug-kernel")
[ -f "$dir/build/arch/x86/boot/bzImage" ] || _fail "no bzImage in $dir/build"
echo "debug kernel: $dir/build/arch/x86/boot/bzImage ($((SECONDS - start)) s)"
