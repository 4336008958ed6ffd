#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make crashtest's default run for ext4, xfs and btrfs (fl-workload, 100
# operations): every state from the end of mkfs on mounts (journal
# recovery) and passes the filesystem's own checker.  A failure here is a
# finding about the filesystem or about flushlog: its run folder is kept.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
_require_guest

for fs in ext4 xfs btrfs; do
	rc=0
	"$FLUSHLOG_TOP/scripts/crashtest" --fs "$fs" --ops 100 --seed 7 --out "$TEST_TMP/$fs" || rc=$?
	if ((rc)); then
		keep=$FLUSHLOG_BUILD/test-results/crashtest-$fs
		rm -rf "$keep" && cp -r "$TEST_TMP/$fs" "$keep"
		_fail "$fs: failing states (exit $rc); run folder kept in $keep"
	fi
	echo "$fs: $(tail -n 1 "$TEST_TMP/$fs/summary.txt")"
done
