#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The debug guest kernel (the patched linux-source-6.1, tinyconfig plus
# qemu/debug.config: KASAN, lockdep, kmemleak, DM_FLUSHLOG=y) builds, or is
# in the cache already.  tests/run --debug-kernel runs this first, with no
# time limit: a cold build takes 9 minutes on a quiet machine, far more on
# a busy one, and a slow machine alone must not fail the suite.
. "$FLUSHLOG_TOP/tests/common.sh"

dpkg-query -W -f='${Status}' linux-source-6.1 2>/dev/null | grep -q 'ok installed' ||
	_fail "linux-source-6.1 is not installed (scripts/install-deps kernel)"
start=$SECONDS
dir=$("$FLUSHLOG_TOP/scripts/build-debug-kernel")
[ -f "$dir/bzImage" ] || _fail "no bzImage in $dir"
echo "debug kernel: $dir/bzImage ($((SECONDS - start)) s)"
