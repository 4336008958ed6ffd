#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A log too small for the workload.  on_full=stop: the workload completes,
# the data disk holds all of it, status says stopped and full=1, and the
# log is a clean, valid log flagged full.  on_full=fail: writes fail with
# ENOSPC, status says logging and full=1, and nothing that reached the
# data disk is missing from the log: its replay equals the data disk.  In
# both, used_sectors + free_sectors is the log device's size.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest

for m in stop fail; do
	truncate -s 64M "$TEST_TMP/data-$m.img"
	truncate -s 2M "$TEST_TMP/log-$m.img"
done
_run_guest "$FLUSHLOG_TOP/tests/guest/log-full.sh" \
	--disk "data-stop=$TEST_TMP/data-stop.img" --disk "log-stop=$TEST_TMP/log-stop.img" \
	--disk "data-fail=$TEST_TMP/data-fail.img" --disk "log-fail=$TEST_TMP/log-fail.img"

for m in stop fail; do
	"$FLUSHLOG" info --json "$TEST_TMP/log-$m.img" >"$TEST_TMP/info" ||
		_fail "on_full=$m: the log does not check out: $(cat "$TEST_TMP/info")"
	jq -e '.clean and .full and .order_verified and .entries > 0' "$TEST_TMP/info" >/dev/null ||
		_fail "on_full=$m: $(cat "$TEST_TMP/info")"
	"$FLUSHLOG" replay -q -o "$TEST_TMP/replay-$m.img" "$TEST_TMP/log-$m.img"
done
_same_image "$TEST_TMP/data-fail.img" "$TEST_TMP/replay-fail.img" "on_full=fail: replay vs the data disk"
