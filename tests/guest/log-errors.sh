#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: the log device starts failing every I/O (an 'error' table
# swapped in under it) in the middle of a workload.  flushlog goes to the
# error state; the writes still reach the data disk intact.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

log=/dev/flushlog/log
sz=$(blockdev --getsz "$log")
dmsetup create logdev --table "0 $sz linear $log 0"
_flushlog_init fl /dev/flushlog/data /dev/mapper/logdev
head -c 8M /dev/urandom >"$TMPDIR/pattern"

dd if="$TMPDIR/pattern" of=/dev/mapper/fl bs=64k count=64 oflag=direct conv=fsync status=none
# entries go to the log in batches (up to 100 ms late): a suspend writes
# them all, so the first 4 MiB are on the log device before it fails
dmsetup suspend fl
dmsetup resume fl
dmsetup suspend logdev
dmsetup load logdev --table "0 $sz error"
dmsetup resume logdev
dd if="$TMPDIR/pattern" of=/dev/mapper/fl bs=64k skip=64 seek=64 oflag=direct conv=fsync status=none ||
	_fail "writes failed once the log device failed"
_flushlog_mark fl after-error 2>/dev/null || true
status=$(_flushlog_status fl)
[ "$(_flushlog_field fl state)" = error ] || _fail "status is '$status', not error"
cmp -n 8M "$TMPDIR/pattern" /dev/mapper/fl || _fail "the data disk does not hold the writes"
_flushlog_remove fl
dmsetup remove logdev
dmesg | grep -q "log write failed" || _fail "no log write error in dmesg"
echo "status was '$status'"
