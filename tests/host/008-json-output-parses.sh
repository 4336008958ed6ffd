#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --json output is valid JSON and carries the same facts as the text, for
# both formats, including odd mark labels.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

printf '%s\n' 'device 2048' 'write 0 8' 'flush' 'mark quo"te\back' >"$TEST_TMP/s.fls"
for f in "$DATA/basic.fls" "$DATA/concurrent.fls" "$TEST_TMP/s.fls"; do
	_mklog "$f" flushlog "$TEST_TMP/j"
	"$FLUSHLOG" info --json "$TEST_TMP/j/log" | jq -e . >/dev/null || _fail "info --json of $f"
	"$FLUSHLOG" dump --json "$TEST_TMP/j/log" | jq -e -s . >/dev/null || _fail "dump --json of $f"
	"$FLUSHLOG" points --json "$TEST_TMP/j/log" | jq -e -s . >/dev/null || _fail "points --json of $f"
	n=$("$FLUSHLOG" info --json "$TEST_TMP/j/log" | jq .entries)
	[ "$n" = "$("$FLUSHLOG" dump --json "$TEST_TMP/j/log" | wc -l)" ] || _fail "entry counts differ for $f"
done
label=$("$FLUSHLOG" dump --json "$TEST_TMP/j/log" | jq -r 'select(.op == "mark") | .label')
[ "$label" = 'quo"te\back' ] || _fail "label came back as '$label'"
_mklog "$DATA/logwrites.fls" log-writes "$TEST_TMP/lw"
"$FLUSHLOG" info --json "$TEST_TMP/lw/log" | jq -e '.format == "dm-log-writes" and .has_ticks == false' >/dev/null ||
	_fail "dm-log-writes log not recognised"
