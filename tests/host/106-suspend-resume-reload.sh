#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Suspend and resume in the middle of a workload keep one log, clean and
# readable while suspended, whose replay equals the data disk; a table
# reload starts a new log that holds the writes after the reload.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest

truncate -s 64M "$TEST_TMP/data.img" "$TEST_TMP/log.img" "$TEST_TMP/data2.img" "$TEST_TMP/log2.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/suspend-reload.sh" \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img" \
	--disk "data2=$TEST_TMP/data2.img" --disk "log2=$TEST_TMP/log2.img"
"$FLUSHLOG" info "$TEST_TMP/log.img" >/dev/null
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log.img"
_same_image "$TEST_TMP/data.img" "$TEST_TMP/replay.img" "suspended and resumed: replay vs data"
# the new log after the reload: its writes are the second 4 MiB only
"$FLUSHLOG" info "$TEST_TMP/log2.img" >/dev/null
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay2.img" "$TEST_TMP/log2.img"
cmp -n 4M "$TEST_TMP/replay2.img" /dev/zero >/dev/null || _fail "the new log holds writes from before the reload"
cmp -i 4M:4M -n 4M "$TEST_TMP/data2.img" "$TEST_TMP/replay2.img" ||
	_fail "the new log does not hold the writes after the reload"
