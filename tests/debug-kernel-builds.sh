#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The debug guest kernel (the patched linux-source-6.1, tinyconfig plus
# qemu/debug.config: KASAN, lockdep, kmemleak, DM_FLUSHLOG=y) builds, or is
# in the cache already.  tests/run --debug-kernel runs this first, with a
# longer timeout than a test's: a cold build takes about 9 minutes.
. "$FLUSHLOG_TOP/tests/common.sh"

dpkg-query -W -f='${Status}' linux-source-6.1 2>/dev/null | grep -q 'ok installed' ||
	_fail "linux-source-6.1 is not installed (scripts/install-deps kernel)"
start=$SECONDS
dir=$("$FLUSHLOG_TOP/scripts/build-debug-kernel")
[ -f "$dir/bzImage" ] || _fail "no bzImage in $dir"
echo "debug kernel: $dir/bzImage ($((SECONDS - start)) s)"
