#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# I/O errors on the log device (the 'error' target swapped in under it
# mid-workload) put dm-flushlog into the error state without an oops, a
# warning or a failed write on the data path; the data disk holds every
# write.  What reached the log before the errors is a readable log.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest

truncate -s 64M "$TEST_TMP/data.img" "$TEST_TMP/log.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/log-errors.sh" \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img"
# never closed: a dirty log whose entries before the failure replay
"$FLUSHLOG" info "$TEST_TMP/log.img" | tee "$TEST_TMP/info"
grep -q "^state: *dirty" "$TEST_TMP/info" || _fail "the log should be dirty"
grep -Eq "^entries: *[1-9]" "$TEST_TMP/info" || _fail "no entries before the failure"
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log.img"
cmp -n 4M "$TEST_TMP/data.img" "$TEST_TMP/replay.img" ||
	_fail "the first 4 MiB, logged before the failure, do not replay"
