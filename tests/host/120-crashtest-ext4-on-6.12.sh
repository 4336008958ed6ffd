#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make crashtest on ext4 on Debian's newest 6.12 kernel (dm-flushlog built
# against its headers from the same source as 6.1's), the workload two
# processes at once (--procs 2, 50 operations each): every prefix state
# and a sample of the epoch states mount, pass e2fsck and keep every
# fsync's promise, whichever process made it, and the guest really ran the
# 6.12 kernel the package index names.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.12
# asan: no
_require_guest

_crashtest_passes ext4 --states prefix,epoch --max-reorder 1 --max-states 60 --oracle fsync \
	--procs 2 --ops 50
grep -q '^p1 ' "$TEST_TMP/ext4/workload.txt" || _fail "the second process did not run"
grep -q ' p1-[a-z]*-[0-9]*$' "$TEST_TMP/ext4/oracle.txt" || _fail "the second process marked nothing"
ran=$(head -n 1 "$TEST_TMP/ext4/kernel.txt")	# its uname -r; then /proc/version
# (FLUSHLOG_KERNEL=K make test runs it on any K: a Debian line's is known)
if want=$(_kernel_version "${FLUSHLOG_KERNEL:-6.1}" 2>/dev/null); then
	[ "$ran" = "$want" ] || _fail "the guest ran $ran, not $want"
fi
echo "ext4: checked on $ran"
