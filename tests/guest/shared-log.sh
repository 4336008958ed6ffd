#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: two flushlog devices share one log as devices 0 and 1.
# The host test (128) says what each section proves.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

d0=/dev/flushlog/data0
d1=/dev/flushlog/data1
sz0=$(blockdev --getsz "$d0")
sz1=$(blockdev --getsz "$d1")
# W and C as the host test makes them
{ yes data-block-W || true; } | head -c 4096 >"$TMPDIR/w"
{ yes commit-record-C || true; } | head -c 4096 >"$TMPDIR/c"
head -c 8M /dev/urandom >"$TMPDIR/pattern"

# _pair LOG [FEATURES...]: fl0 over data0 as device 0, fl1 over data1 as 1
_pair() {
	local log=$1
	shift
	dmsetup create fl0 --table "0 $sz0 flushlog $d0 $log $(($# + 1)) device=0 $*"
	dmsetup create fl1 --table "0 $sz1 flushlog $d1 $log $(($# + 1)) device=1 $*"
}

echo "== refused: a device number in use, other log options, a bad number"
dmsetup create fa --table "0 $sz0 flushlog $d0 /dev/flushlog/log 1 device=0"
_expect_table_error "0 $sz1 flushlog $d1 /dev/flushlog/log 1 device=0" \
	"Device number in use on this log by another device"
_expect_table_error "0 $sz1 flushlog $d1 /dev/flushlog/log" \
	"Device number in use on this log by another device"
_expect_table_error "0 $sz1 flushlog $d1 /dev/flushlog/log 2 device=1 no_data" \
	"Log options differ from another device's on this log"
_expect_table_error "0 $sz1 flushlog $d1 /dev/flushlog/log2 1 device=16" \
	"Invalid device number (0 to 15)"
dmsetup remove fa

echo "== the toy journal: W on device 0, a flush, commit record C on device 1"
# _toy broken|correct LOG: the broken writer flushes device 1, not 0,
# before its commit record
_toy() {
	_pair "$2"
	dd if="$TMPDIR/w" of=/dev/mapper/fl0 bs=4k oflag=direct status=none
	if [ "$1" = correct ]; then
		sync /dev/mapper/fl0
	else
		sync /dev/mapper/fl1
	fi
	dd if="$TMPDIR/c" of=/dev/mapper/fl1 bs=4k oflag=direct,dsync status=none
	sync /dev/mapper/fl0 /dev/mapper/fl1
	_flushlog_remove fl0
	_flushlog_remove fl1
	echo "$1 writer traced in $2"
}
_toy broken /dev/flushlog/log
_toy correct /dev/flushlog/log2

echo "== one device suspended or reloaded: the other goes on, one log"
blkdiscard "$d0"
blkdiscard "$d1"
_pair /dev/flushlog/log3
table0=$(dmsetup table fl0)
dmsetup table fl1 | grep -q " 1 device=1$" ||
	_fail "fl1's table does not say its device: $(dmsetup table fl1)"
dd if="$TMPDIR/pattern" of=/dev/mapper/fl0 bs=64k count=32 oflag=direct status=none
dmsetup suspend fl0
[ "$(_flushlog_field fl0 state)" = suspended ] ||
	_fail "fl0 suspended, its status: $(_flushlog_status fl0)"
[ "$(_flushlog_field fl1 state)" = logging ] ||
	_fail "fl1 while fl0 is suspended: $(_flushlog_status fl1)"
dd if="$TMPDIR/pattern" of=/dev/mapper/fl1 bs=64k count=32 oflag=direct conv=fsync status=none
"$FLUSHLOG" info --json /dev/flushlog/log3 >"$TMPDIR/open.json" ||
	_fail "the shared log is not readable while in use"
grep -q '"clean":false' "$TMPDIR/open.json" ||
	_fail "the log was closed while device 1 was still in use"
dmsetup resume fl0
dmsetup reload fl0 --table "$table0"
dmsetup resume fl0
dd if="$TMPDIR/pattern" of=/dev/mapper/fl0 bs=64k skip=32 seek=32 count=32 oflag=direct conv=fsync status=none
_flushlog_mark fl1 after-reload
dd if="$TMPDIR/pattern" of=/dev/mapper/fl1 bs=64k skip=64 seek=32 count=32 oflag=direct conv=fsync status=none
_flushlog_remove fl0
dd if="$TMPDIR/pattern" of=/dev/mapper/fl1 bs=64k skip=96 seek=64 count=16 oflag=direct conv=fsync status=none
_flushlog_remove fl1
"$FLUSHLOG" info --json /dev/flushlog/log3 >"$TMPDIR/closed.json"
grep -q '"clean":true' "$TMPDIR/closed.json" || _fail "not clean once both are gone"
uuid() { sed 's/.*"uuid":"\([^"]*\)".*/\1/' "$1"; }
[ "$(uuid "$TMPDIR/open.json")" = "$(uuid "$TMPDIR/closed.json")" ] ||
	_fail "the reload of device 0 started a new log under device 1"
"$FLUSHLOG" replay -q -o "0=$TMPDIR/r0.img" -o "1=$TMPDIR/r1.img" /dev/flushlog/log3
cmp "$d0" "$TMPDIR/r0.img" || _fail "device 0's replay differs from data0"
cmp "$d1" "$TMPDIR/r1.img" || _fail "device 1's replay differs from data1"
echo "one log $(uuid "$TMPDIR/closed.json") through a suspend and a reload of device 0; replays equal both disks"

echo "== a number and options stay their device's while the log is shared; a size may change"
_pair /dev/flushlog/log3
dmsetup remove fl1
# _expect_refused NAME TABLE MESSAGE: the device is not made (its table
# is refused when loaded)
_expect_refused() {
	dmesg -C
	if dmsetup create "$1" --table "$2" 2>/dev/null; then
		_fail "table '$2' was resumed"
	fi
	dmsetup remove "$1" 2>/dev/null || true
	dmesg | grep -qF "$3" || _fail "'$2': expected '$3' in dmesg, got: $(dmesg | tail -n 3)"
	echo "refused as expected: $2 -> $3"
}
_expect_refused fl2 "0 $sz1 flushlog $d1 /dev/flushlog/log3 1 device=1" \
	"Device number spent: its device left the log"
dmesg -C
dmsetup create fl1 --table "0 $sz1 flushlog $d1 /dev/flushlog/log3 1 device=2" ||
	_fail "a new device 2 on the shared log: $(dmesg | tail -n 3)"
# a size may change: the log says so with a RESIZE entry
dmsetup reload fl1 --table "0 $((sz1 / 2)) flushlog $d1 /dev/flushlog/log3 1 device=2"
dmsetup resume fl1 || _fail "device 2 could not shrink in the shared log: $(dmesg | tail -n 3)"
dd if="$TMPDIR/pattern" of=/dev/mapper/fl1 bs=64k count=4 oflag=direct conv=fsync status=none
_flushlog_remove fl1
_flushlog_mark fl0 still-logging
_flushlog_remove fl0
"$FLUSHLOG" info /dev/flushlog/log3 >"$TMPDIR/info3" || _fail "the shared log is unreadable after the refusal and the resize"
grep -q "marks: *1$" "$TMPDIR/info3" || _fail "the mark is lost: $(cat "$TMPDIR/info3")"
"$FLUSHLOG" dump --json /dev/flushlog/log3 | grep -q '"op":"resize"' ||
	_fail "no resize entry in the shared log"
echo "a spent number is refused; a resize is logged; the log reads"

echo "== a reload of a device alone on its log goes on with it; new_log starts a new one"
dmsetup create fl0 --table "0 $sz0 flushlog $d0 /dev/flushlog/log3 1 device=0"
dmesg -C
if dmsetup reload fl0 --table "0 $sz0 flushlog $d0 /dev/flushlog/log3 2 device=0 no_data" 2>/dev/null; then
	_fail "a reload with other options was loaded to go on with the log"
fi
dmesg | grep -qF "Log options differ from the live log's (new_log starts a new log)" ||
	_fail "options: $(dmesg | tail -n 3)"
dmsetup reload fl0 --table "0 $sz0 flushlog $d0 /dev/flushlog/log3 3 device=0 no_data new_log"
dmsetup resume fl0
dd if="$TMPDIR/pattern" of=/dev/mapper/fl0 bs=64k count=4 oflag=direct conv=fsync status=none
_flushlog_remove fl0
"$FLUSHLOG" info --json /dev/flushlog/log3 >"$TMPDIR/nodata.json"
grep -q '"data_checksum":null' "$TMPDIR/nodata.json" ||
	_fail "the reload's no_data did not take: $(cat "$TMPDIR/nodata.json")"
echo "other options are refused without new_log; with it the reload's log is a no_data log"
