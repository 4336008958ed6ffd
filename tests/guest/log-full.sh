#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: 16 MiB of writes through flushlog with a 2 MiB log, once
# with on_full=stop (the writes all succeed) and once with on_full=fail
# (writes that no longer fit fail with ENOSPC and never reach the disk).
# Both say full=1; logging stopped with on_full=stop, goes on with fail.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

# _used_and_free DEV LOG: status's used and free sectors add up to LOG's size
_used_and_free() {
	local used free size
	used=$(_flushlog_field "$1" used_sectors)
	free=$(_flushlog_field "$1" free_sectors)
	size=$(blockdev --getsz "$2")
	((used + free == size)) ||
		_fail "$1: used_sectors $used + free_sectors $free is not the log's $size sectors"
}

head -c 16M /dev/urandom >"$TMPDIR/pattern"

_flushlog_init stop /dev/flushlog/data-stop /dev/flushlog/log-stop on_full=stop
dd if="$TMPDIR/pattern" of=/dev/mapper/stop bs=256k oflag=direct conv=fsync status=none ||
	_fail "on_full=stop: the writes failed"
status=$(_flushlog_status stop)
[ "$(_flushlog_field stop state) $(_flushlog_field stop full)" = "stopped 1" ] ||
	_fail "on_full=stop: status is '$status', expected stopped and full=1"
_used_and_free stop /dev/flushlog/log-stop
cmp -n 16M "$TMPDIR/pattern" /dev/mapper/stop || _fail "on_full=stop: the data disk lost writes"
_flushlog_remove stop
echo "on_full=stop: all writes done, status '$status'"

_flushlog_init fail /dev/flushlog/data-fail /dev/flushlog/log-fail on_full=fail
if dd if="$TMPDIR/pattern" of=/dev/mapper/fail bs=256k oflag=direct status=none 2>"$TMPDIR/dd.err"; then
	_fail "on_full=fail: 16 MiB fit in a 2 MiB log"
fi
grep -q "No space left on device" "$TMPDIR/dd.err" || _fail "on_full=fail: dd said $(cat "$TMPDIR/dd.err")"
status=$(_flushlog_status fail)
[ "$(_flushlog_field fail state) $(_flushlog_field fail full)" = "logging 1" ] ||
	_fail "on_full=fail: status is '$status', expected logging and full=1"
_used_and_free fail /dev/flushlog/log-fail
sync
_flushlog_remove fail
echo "on_full=fail: $(head -n 1 "$TMPDIR/dd.err"); status '$status'"
