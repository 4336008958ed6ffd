#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make crashtest on btrfs raid1 over two traced devices that write one log:
# data and metadata mirrored, every block written to both.  Each state is
# mounted from its own two devices and checked by btrfs check, which finds
# a filesystem's devices by its fsid: the traced disks and the states
# before and after carry the same one, and only a /dev of the state's own
# devices (qemu/check-state) and a forgotten kernel device list keep the
# check on the state (without them a state was checked against the newer
# generation of the traced disk).  With the ordering on every state must
# pass; with nobarrier crashtest must catch it.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.12
# asan: no
_require_guest
_require_cmd jq

_crashtest_passes btrfs-raid1 --ops 30 --states prefix,epoch --max-reorder 1 \
	--max-states 30 --oracle fsync
grep -q "^format: *flushlog version 3" "$TEST_TMP/btrfs-raid1/info.txt" ||
	_fail "not a log of two devices: $(head -n 3 "$TEST_TMP/btrfs-raid1/info.txt")"
# both devices written: a raid1 that wrote one disk is no raid1
for d in 0 1; do
	awk -v d="$d:" '$3 == "write" && index($5, d) == 1 { found = 1 } END { exit !found }' \
		"$TEST_TMP/btrfs-raid1/dump.txt" || _fail "no write on device $d in the log"
done
checked=$(jq '.states | length' "$TEST_TMP/btrfs-raid1/report.json")
((checked >= 10)) || _fail "only $checked states checked"

# Every state of 10 operations: with nobarrier a superblock the mount
# writes can reach the disk before the trees it points to (2 of 18 states
# failed that way; 60 operations and a sample of 60 states: 13 failed,
# in 12 minutes; 30 operations' 4 prefix states all passed)
_crashtest_caught btrfs-raid1 "does not mount|fsync oracle: .* broken|btrfs check|ERROR" \
	--ops 10 --states prefix,epoch --max-reorder 1 --max-states 100
