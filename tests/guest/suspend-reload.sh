#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: a flushlog device suspended and resumed mid-workload keeps
# one log (clean while suspended); a reload of the same table goes on with
# the same log, status naming it as flushlog info does; a reload with
# new_log starts a new one; a reload onto a data device of another
# logical block size is refused.  The host test (106) checks
# the logs' contents.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

uuid() { jq -r .uuid "$1"; }
head -c 8M /dev/urandom >"$TMPDIR/pattern"

echo "== suspend and resume: one log, clean while suspended"
_flushlog_init fl /dev/flushlog/data /dev/flushlog/log
dd if="$TMPDIR/pattern" of=/dev/mapper/fl bs=64k count=64 oflag=direct conv=fsync status=none
dmsetup suspend fl
"$FLUSHLOG" info --json /dev/flushlog/log >"$TMPDIR/suspended.json" ||
	_fail "the log is not readable while suspended"
grep -q '"clean":true' "$TMPDIR/suspended.json" || _fail "not clean while suspended: $(cat "$TMPDIR/suspended.json")"
dmsetup resume fl
dd if="$TMPDIR/pattern" of=/dev/mapper/fl bs=64k skip=64 seek=64 oflag=direct conv=fsync status=none
_flushlog_remove fl

echo "== the same table reloaded: the log goes on"
_flushlog_init fl2 /dev/flushlog/data2 /dev/flushlog/log2
dd if="$TMPDIR/pattern" of=/dev/mapper/fl2 bs=64k count=64 oflag=direct conv=fsync status=none
"$FLUSHLOG" info --json /dev/flushlog/log2 >"$TMPDIR/before.json" ||
	_fail "the live log does not read: $(cat "$TMPDIR/before.json")"
status_log=$(_flushlog_field fl2 log)
[ "$status_log" = "$(uuid "$TMPDIR/before.json")" ] ||
	_fail "status says log=$status_log, flushlog info says $(uuid "$TMPDIR/before.json")"
dmsetup reload fl2 --table "$(dmsetup table fl2)"
dmsetup resume fl2
[ "$(_flushlog_field fl2 log)" = "$status_log" ] ||
	_fail "after the reload status says log=$(_flushlog_field fl2 log), before it $status_log"
dd if="$TMPDIR/pattern" of=/dev/mapper/fl2 bs=64k skip=64 seek=64 oflag=direct conv=fsync status=none
_flushlog_remove fl2
"$FLUSHLOG" info --json /dev/flushlog/log2 >"$TMPDIR/after.json"
[ "$(uuid "$TMPDIR/before.json")" = "$(uuid "$TMPDIR/after.json")" ] ||
	_fail "the reload of the same table started a new log: $(uuid "$TMPDIR/before.json") replaced by $(uuid "$TMPDIR/after.json")"
cmp -n 8M "$TMPDIR/pattern" /dev/flushlog/data2 || _fail "data2 does not hold the writes"
echo "reload: log $(uuid "$TMPDIR/after.json") went on, as status said"

echo "== a reload with new_log: a new log"
_flushlog_init fl3 /dev/flushlog/data3 /dev/flushlog/log3
dd if="$TMPDIR/pattern" of=/dev/mapper/fl3 bs=64k count=64 oflag=direct conv=fsync status=none
old=$(_flushlog_field fl3 log)
dmsetup reload fl3 --table "$(dmsetup table fl3) 1 new_log" ||
	_fail "a table with new_log does not load: $(dmesg | tail -n 2)"
dmsetup resume fl3
new=$(_flushlog_field fl3 log)
[ "$new" != "$old" ] || _fail "new_log went on with log $old"
dd if="$TMPDIR/pattern" of=/dev/mapper/fl3 bs=64k skip=64 seek=64 oflag=direct conv=fsync status=none
_flushlog_remove fl3
"$FLUSHLOG" info --json /dev/flushlog/log3 >"$TMPDIR/new.json"
[ "$(uuid "$TMPDIR/new.json")" = "$new" ] ||
	_fail "status said log=$new after new_log, the log is $(uuid "$TMPDIR/new.json")"
echo "new_log: log $old replaced by $new"

echo "== a reload onto 4096-byte blocks is refused"
# when the table is loaded (the old table goes on), or if it came to
# that, at the resume, which checks again
_flushlog_init fl4 /dev/flushlog/data4 /dev/flushlog/log4
dd if="$TMPDIR/pattern" of=/dev/mapper/fl4 bs=64k count=16 oflag=direct conv=fsync status=none
[ "$(blockdev --getss /dev/flushlog/data4k)" = 4096 ] || _fail "data4k's blocks are not 4096 bytes"
_expect_reload_refused fl4 \
	"0 $(blockdev --getsz /dev/flushlog/data4) flushlog /dev/flushlog/data4k /dev/flushlog/log4" \
	"Logical block size changed (new_log starts a new log)"
if [ "$(dmsetup info -c --noheadings -o suspended fl4)" = Active ]; then
	# refused at load: the old table goes on with the log
	dd if="$TMPDIR/pattern" of=/dev/mapper/fl4 bs=64k skip=16 seek=16 count=16 oflag=direct conv=fsync status=none
	_flushlog_remove fl4
else
	dmsetup remove fl4 2>/dev/null || dmsetup remove --force fl4
fi
"$FLUSHLOG" info /dev/flushlog/log4 >/dev/null || _fail "the log does not read after the refusal"
