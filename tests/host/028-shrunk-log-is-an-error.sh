#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A log file cut after it was opened (the library reads it with pread, not
# a mapping) gives an error naming the entry and the offset, and no
# SIGBUS: replay and state apply, on both log formats, with a large log
# and a small one.
. "$FLUSHLOG_TOP/tests/common.sh"

for s in basic:flushlog big:flushlog logwrites:log-writes; do
	dir=$TEST_TMP/${s%%:*}-${s##*:}
	_mklog "$DATA/${s%%:*}.fls" "${s##*:}" "$dir"
	rc=0
	"$FLUSHLOG_BUILD/tests/t-shrunk-log" "$dir/log" "$dir" >"$dir/out" 2>&1 || rc=$?
	cat "$dir/out"
	# 128 + SIGBUS (7) was the mapped log's failure
	[ "$rc" = 0 ] || _fail "$s: t-shrunk-log exited $rc: $(cat "$dir/out")"
	grep -q "replay: the log shrank to [0-9]* bytes: cannot read [0-9]* bytes at offset [0-9]*" "$dir/out" ||
		_fail "$s: unclear message: $(cat "$dir/out")"
done
