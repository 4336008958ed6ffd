#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: flushlog over a data device whose sectors from 8000 on
# fail every write (a dm-error range after a linear one over the data
# disk; not at a multiple of 2048 sectors, where the target splits bios).
# A 64 KiB direct write over sectors 7936..8063 fails but changes its
# linear half; a 4 KiB write at sector 9216 fails and changes nothing;
# writes at sectors 0 and 16 succeed.  Twice: on data/log with the
# default on_full=stop, and on data2/log2 with on_full=fail, where a
# write over 7936..7999 then succeeds (a newer write over a failed one).
# The host test (137) reads both logs.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

pattern=$1
good=8000
# _write OFFSET BYTES EXPECT [FROM]: dd at that byte offset of the
# pattern's bytes at FROM (default OFFSET), which must succeed (ok) or
# fail with EIO (fail)
_write() {
	local rc=0
	dd if="$pattern" of=/dev/mapper/fl bs="$2" count=1 skip="${4:-$1}" \
		seek="$1" iflag=skip_bytes oflag=direct,seek_bytes status=none 2>"$TMPDIR/err" || rc=$?
	echo "write of $2 bytes at sector $(($1 / 512)): exit $rc $(cat "$TMPDIR/err")"
	if [ "$3" = ok ]; then
		((rc == 0)) || _fail "the write at sector $(($1 / 512)) failed"
	else
		{ ((rc != 0)) && grep -q "Input/output error" "$TMPDIR/err"; } ||
			_fail "the write at sector $(($1 / 512)) did not fail with EIO"
	fi
}
# _writes DATA LOG [FEATURE]: the writes on flushlog over DATA's first
# 8000 sectors and an error range, logging to LOG
_writes() {
	local sz
	sz=$(blockdev --getsz "$1")
	printf '0 %s linear %s 0\n%s %s error\n' "$good" "$1" "$good" "$((sz - good))" |
		dmsetup create derr
	_flushlog_init fl /dev/mapper/derr "$2" ${3:+"$3"}
	_write 0 4096 ok
	_write $((7936 * 512)) 65536 fail
	_write $((9216 * 512)) 4096 fail
	_write $((16 * 512)) 4096 ok
	# a newer write over the failed one's written half, other data
	[ -z "${3:-}" ] || _write $((7936 * 512)) 32768 ok $((4 << 20))
	sync /dev/mapper/fl
	_flushlog_remove fl
	dmsetup remove derr
}
_writes /dev/flushlog/data /dev/flushlog/log
_writes /dev/flushlog/data2 /dev/flushlog/log2 on_full=fail
