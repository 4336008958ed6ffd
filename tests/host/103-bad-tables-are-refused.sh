#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Each malformed dm-flushlog table (argument counts, unknown, duplicate and
# conflicting features, missing devices, a log too small, data and log the
# same device) is refused with its own ti->error; over-long mark labels and
# unknown messages are refused; the guest kernel stays healthy (run-guest
# fails the test on any oops or warning).
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest

truncate -s 64M "$TEST_TMP/data.img" "$TEST_TMP/log.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/bad-tables.sh" \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img"
"$FLUSHLOG" info "$TEST_TMP/log.img" | grep -q "marks: *1$" ||
	_fail "the 64-byte mark is not in the log"
