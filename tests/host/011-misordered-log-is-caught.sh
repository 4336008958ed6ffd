#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'flushlog info' checks from the ticks that a log is in durability order,
# the promise every replayed state rests on: each way of breaking it is
# caught with exit 3 and names the entry; correct logs pass.
. "$FLUSHLOG_TOP/tests/common.sh"

misordered() {	# misordered PATTERN SCRIPT-LINES...
	local pattern=$1
	shift
	printf '%s\n' 'device 2048' "$@" >"$TEST_TMP/s.fls"
	"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/s.fls"
	_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/log"
	grep -Eq "$pattern" "$TEST_TMP/stderr" ||
		_fail "expected /$pattern/ for '$*', got: $(cat "$TEST_TMP/stderr")"
	# --quick skips the check: the log itself is well formed
	_expect_exit 0 "$FLUSHLOG" info --quick "$TEST_TMP/log"
}

# a write the flush covered, logged after the flush
misordered "entry 2 .*logged after flush entry 1" \
	'write 0 8 ticks 1 2' 'flush ticks 3 4' 'write 8 8 ticks 1 2'
# a write logged before a flush that was issued before it completed
misordered "entry 0 .*logged before flush entry 1" \
	'write 0 8 ticks 1 5' 'flush ticks 3 6'
# a FUA point after a write that only a later flush makes durable
misordered "entry 1 .*crash point logged after entry 0" \
	'write 0 8 ticks 1 2' 'write 8 8 fua ticks 3 4' 'flush ticks 5 6'
# a FUA point after a write that no flush ever covers
misordered "entry 1 .*crash point logged after entry 0" \
	'write 0 8 ticks 1 2' 'write 8 8 fua ticks 3 4'
# crash points out of completion order
misordered "entry 1 .*not after entry 0" \
	'write 0 8 fua ticks 5 6' 'write 8 8 fua ticks 1 2'

for s in basic concurrent big block4k; do
	"$MKLOG" -o "$TEST_TMP/ok.log" "$DATA/$s.fls"
	"$FLUSHLOG" info "$TEST_TMP/ok.log" | grep -q "durability order verified" ||
		_fail "$s: order not verified"
done
