#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Suspend and resume in the middle of a workload keep one log, clean and
# readable while suspended, whose replay equals the data disk.  A reload
# of the same table (what lvm2 does on lvchange --refresh) goes on with the
# same log: one uuid, status's log= is flushlog info's, and the replay of
# the whole log equals the data disk.  A reload with new_log starts a new
# log that holds the writes after the reload alone.  A reload onto a data
# device of 4096-byte blocks is refused, naming the block size and
# new_log, and the log stays whole: its replay equals the data disk.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest

k4=logical_block_size=4096,physical_block_size=4096
disks=()
for d in data log data2 log2 data3 log3 data4 log4 data4k; do
	truncate -s 64M "$TEST_TMP/$d.img"
	extra=
	[ $d != data4k ] || extra=,$k4
	disks+=(--disk "$d=$TEST_TMP/$d.img$extra")
done
_run_guest "$FLUSHLOG_TOP/tests/guest/suspend-reload.sh" "${disks[@]}"
"$FLUSHLOG" info "$TEST_TMP/log.img" >/dev/null
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log.img"
_same_image "$TEST_TMP/data.img" "$TEST_TMP/replay.img" "suspended and resumed: replay vs data"
# the same table reloaded: one log with the writes before and after
"$FLUSHLOG" info "$TEST_TMP/log2.img" >/dev/null
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay2.img" "$TEST_TMP/log2.img"
_same_image "$TEST_TMP/data2.img" "$TEST_TMP/replay2.img" "reloaded: replay of the whole log vs data2"
# new_log: the new log's writes are the second 4 MiB only
"$FLUSHLOG" info "$TEST_TMP/log3.img" >/dev/null
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay3.img" "$TEST_TMP/log3.img"
cmp -n 4M "$TEST_TMP/replay3.img" /dev/zero >/dev/null || _fail "the new log holds writes from before the reload"
cmp -i 4M:4M -n 4M "$TEST_TMP/data3.img" "$TEST_TMP/replay3.img" ||
	_fail "the new log does not hold the writes after the reload"
# the refused reload left the log whole: it replays to the data disk
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay4.img" "$TEST_TMP/log4.img"
_same_image "$TEST_TMP/data4.img" "$TEST_TMP/replay4.img" "after the refused reload: replay vs data4"
