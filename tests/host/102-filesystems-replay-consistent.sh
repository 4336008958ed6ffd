#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# ext4, xfs and btrfs on dm-flushlog in the guest: a file workload with
# fsyncs and marks; the state at every mark mounts and holds what was
# fsync'd before it, and the final state passes the filesystem's checker.
# On the host the logs check out and replay to the data disks exactly.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 debug
_require_guest

disks=()
for fs in ext4 xfs btrfs; do
	truncate -s 320M "$TEST_TMP/data-$fs.img"
	truncate -s 256M "$TEST_TMP/log-$fs.img"
	disks+=(--disk "data-$fs=$TEST_TMP/data-$fs.img" --disk "log-$fs=$TEST_TMP/log-$fs.img")
done
truncate -s 320M "$TEST_TMP/scratch.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/fs-workload.sh" "${disks[@]}" \
	--disk "scratch=$TEST_TMP/scratch.img" -- ext4 xfs btrfs

for fs in ext4 xfs btrfs; do
	"$FLUSHLOG" info "$TEST_TMP/log-$fs.img" >"$TEST_TMP/info" ||
		{ cat "$TEST_TMP/info"; _fail "$fs: the log does not check out"; }
	"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log-$fs.img"
	_same_image "$TEST_TMP/data-$fs.img" "$TEST_TMP/replay.img" "$fs: replay --to end vs the data disk"
	echo "$fs: $(grep -E '^(entries|crash points)' "$TEST_TMP/info" | tr -s ' ' | paste -sd ' ')"
done
