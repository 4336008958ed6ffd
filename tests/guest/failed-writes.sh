#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: flushlog over a data device whose sectors from 8000 on
# fail every write (a dm-error range after a linear one over the data
# disk; not at a multiple of 2048 sectors, where the target splits bios).  A 64 KiB direct write over sectors 7936..8063 fails but changes
# its linear half; a 4 KiB write at sector 9216 fails and changes nothing;
# writes at sectors 0 and 16 succeed.  The host test (137) reads the log.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

d=/dev/flushlog/data
sz=$(blockdev --getsz "$d")
good=8000
printf '0 %s linear %s 0\n%s %s error\n' "$good" "$d" "$good" "$((sz - good))" |
	dmsetup create derr
_flushlog_init fl /dev/mapper/derr /dev/flushlog/log
pattern=$1
# _write OFFSET BYTES EXPECT: dd at that byte offset, which must succeed
# (ok) or fail with EIO (fail)
_write() {
	local rc=0
	dd if="$pattern" of=/dev/mapper/fl bs="$2" count=1 skip="$1" \
		seek="$1" iflag=skip_bytes oflag=direct,seek_bytes status=none 2>"$TMPDIR/err" || rc=$?
	echo "write of $2 bytes at sector $(($1 / 512)): exit $rc $(cat "$TMPDIR/err")"
	if [ "$3" = ok ]; then
		((rc == 0)) || _fail "the write at sector $(($1 / 512)) failed"
	else
		{ ((rc != 0)) && grep -q "Input/output error" "$TMPDIR/err"; } ||
			_fail "the write at sector $(($1 / 512)) did not fail with EIO"
	fi
}
_write 0 4096 ok
_write $((7936 * 512)) 65536 fail
_write $((9216 * 512)) 4096 fail
_write $((16 * 512)) 4096 ok
sync /dev/mapper/fl
_flushlog_remove fl
dmsetup remove derr
