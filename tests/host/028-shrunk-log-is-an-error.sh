#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A log file cut after it was opened (the library reads it with pread, not
# a mapping) gives an error naming the entry and the offset, and no
# SIGBUS: replay and state apply, on both log formats, with a large log
# and a small one, by every path replay reads the log.
. "$FLUSHLOG_TOP/tests/common.sh"

# every way replay reads (replay.c): the kernel's copy or our buffers,
# a reader thread or none
for s in basic:flushlog big:flushlog logwrites:log-writes; do
	dir=$TEST_TMP/${s%%:*}-${s##*:}
	_mklog "$DATA/${s%%:*}.fls" "${s##*:}" "$dir"
	for path in "" "FLUSHLOG_READER=1" "FLUSHLOG_READER=1 FLUSHLOG_NO_KERNEL_COPY=1" \
		"FLUSHLOG_READER=0 FLUSHLOG_NO_KERNEL_COPY=1"; do
		cp "$dir/log" "$dir/cut.log"
		rc=0
		# shellcheck disable=SC2086 # the path is words
		env $path "$FLUSHLOG_BUILD/tests/t-shrunk-log" "$dir/cut.log" "$dir" \
			>"$dir/out" 2>&1 || rc=$?
		echo "$s ($path):"
		cat "$dir/out"
		# 128 + SIGBUS (7) was the mapped log's failure
		[ "$rc" = 0 ] || _fail "$s ($path): t-shrunk-log exited $rc: $(cat "$dir/out")"
		grep -q "replay: the log shrank to [0-9]* bytes: cannot read [0-9]* bytes at offset [0-9]*" "$dir/out" ||
			_fail "$s ($path): unclear message: $(cat "$dir/out")"
	done
done
