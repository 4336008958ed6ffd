#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: every malformed flushlog table is refused with its own
# ti->error, bad messages are refused, and the target still works after.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

data=/dev/flushlog/data
log=/dev/flushlog/log
sz=$(blockdev --getsz "$data")
t="0 $sz flushlog"

_expect_table_error "$t" "Invalid argument count"
_expect_table_error "$t $data" "Invalid argument count"
_expect_table_error "$t $data $log 1" "Invalid number of feature arguments"
_expect_table_error "$t $data $log 3 no_data" "Invalid number of feature arguments"
_expect_table_error "$t $data $log 1 no_data extra" "Invalid argument count"
_expect_table_error "$t $data $log 1 bogus" "Unrecognised flushlog feature requested"
_expect_table_error "$t $data $log 2 no_data no_data" "Duplicate no_data argument"
_expect_table_error "$t $data $log 2 on_full=stop on_full=fail" "Duplicate on_full argument"
_expect_table_error "$t $data $log 1 on_full=maybe" "Invalid on_full value"
# one data checksum, CRC32C: the table no longer chooses
_expect_table_error "$t $data $log 1 data_checksum=crc32c" "Unrecognised flushlog feature requested"
_expect_table_error "$t $data $log 2 new_log new_log" "Duplicate new_log argument"
_expect_table_error "$t $data $log 6 no_data on_full=stop new_log max_pending=8 device=1 no_data" \
	"Invalid number of feature arguments"
_expect_table_error "$t $data $log 2 device=1 device=2" "Duplicate device argument"
_expect_table_error "$t $data $log 1 device=16" "Invalid device number (0 to 15)"
_expect_table_error "$t $data $log 1 device=x" "Invalid device number (0 to 15)"
_expect_table_error "$t /dev/nonexistent $log" "Data device lookup failed"
_expect_table_error "$t $data /dev/nonexistent" "Log device lookup failed"
_expect_table_error "$t $data $data" "Data and log devices must differ"
dmsetup create tiny --table "0 1 linear $log 0"
_expect_table_error "$t $data /dev/mapper/tiny" "Log device too small"
dmsetup remove tiny
_expect_table_error "$t $data $log 1 max_pending=65536" "max_pending larger than half of memory"

echo "== refused: a zoned log device"
# null_blk (qemu/run-guest --modules null_blk; a kernel without it, the
# debug kernel, skips this): a host-managed zoned disk made through
# configfs, which names it after its folder
if [ -d /sys/module/null_blk ]; then
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
	zoned=flzoned
	nb=/sys/kernel/config/nullb/$zoned
	mkdir "$nb"
	echo 64 >"$nb/size"
	echo 1 >"$nb/memory_backed"
	echo 1 >"$nb/zoned"
	echo 4 >"$nb/zone_size"
	echo 1 >"$nb/power"
	[ "$(cat "/sys/block/$zoned/queue/zoned")" = host-managed ] ||
		_fail "$zoned is not zoned: $(cat "/sys/block/$zoned/queue/zoned")"
	_expect_table_error "$t $data /dev/$zoned" "Log device is zoned"
	echo 0 >"$nb/power"
	rmdir "$nb"
else
	echo "this kernel has no null_blk: no zoned log device tried"
fi

echo "== refused: a device both one flushlog target's data and another's log"
data2=/dev/flushlog/data2
log2=/dev/flushlog/log2
_flushlog_init other "$data2" "$log2"
_expect_table_error "$t $data $data2" "Log device is the data device of a flushlog target"
_expect_table_error "0 $(blockdev --getsz "$log2") flushlog $log2 $log" \
	"Data device is the log device of a flushlog target"
_flushlog_remove other

echo "== refused: new_log on a log another device shares"
# refused when the table is loaded (the device's old table goes on), or
# if it came to that, at its resume, which checks again
dmsetup create s0 --table "$t $data $log 1 device=0"
s0_log=$(_flushlog_field s0 log)
t2="0 $(blockdev --getsz "$data2") flushlog $data2 $log"
dmsetup create s1 --table "$t2 1 device=1"
_expect_reload_refused s1 "$t2 2 device=1 new_log" \
	"A new log (new_log) would drop another device's entries"
dmsetup remove s1 2>/dev/null || dmsetup remove --force s1
[ "$(_flushlog_field s0 log)" = "$s0_log" ] ||
	_fail "device 0's log was $s0_log, after the refused new_log $(_flushlog_field s0 log)"
_flushlog_remove s0

# data checksums: CRC32C, and the super block says so (no
# FLUSHLOG_SF_DATA_XXH64, 0x8, in the flags at offset 60)
_flushlog_init fl "$data" "$log"
dmsetup table fl | grep -q "flushlog [0-9:]* [0-9:]*$" || _fail "table not echoed: $(dmsetup table fl)"
dd if=/dev/urandom of=/dev/mapper/fl bs=64k count=4 oflag=direct status=none
_flushlog_remove fl
flags=$(od -An -tu4 -j60 -N4 "$log" | tr -d ' ')
((!(flags & 8))) || _fail "the super block has the XXH64 flag ($flags)"
"$FLUSHLOG" replay -q -o "$TMPDIR/sum.img" "$log" || _fail "the log does not replay"
cmp -s -n "$((256 * 1024))" "$TMPDIR/sum.img" "$data" || _fail "the replay differs from the data device"
rm -f "$TMPDIR/sum.img"
echo "data checksums: crc32c, the log replays"

# a good table, its messages, and its table line echoed back
_flushlog_init fl "$data" "$log" on_full=fail no_data
dmsetup table fl | grep -q "flushlog [0-9:]* [0-9:]* 2 on_full=fail no_data$" ||
	_fail "table not echoed: $(dmsetup table fl)"
# its log worker is named for the log device, which devices may share:
# the workqueue's rescuer thread shows the name (6.1: cut to 15
# characters; 6.12: after "kworker/R-")
dev=$(dmsetup table fl | awk '{ print $5 }')
name=flushlog/$dev
grep -qE "^(kworker/R-)?${name:0:15}" /proc/[0-9]*/comm 2>/dev/null ||
	_fail "no thread named ${name:0:15}: $(cat /proc/[0-9]*/comm 2>/dev/null | grep flushlog)"
long_seq=$(_flushlog_mark fl "$(printf '%064d' 0)")
if _flushlog_mark fl "$(printf '%065d' 0)" 2>/dev/null; then
	_fail "a 65-byte mark label was accepted"
fi
dmesg | grep -q "mark label must be 1 to 64 bytes" || _fail "no message for the long label"
if dmsetup message fl 0 frobnicate 2>/dev/null; then
	_fail "an unknown message was accepted"
fi
dmesg | grep -q "unrecognised message 'frobnicate'" || _fail "no message for 'frobnicate'"
dd if=/dev/zero of=/dev/mapper/fl bs=4k count=4 oflag=direct status=none
# status: the state, then each field named, in this order
status=$(_flushlog_status fl)
uuid='[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
n='[0-9]+'
grep -Eq "^logging device=0 log=$uuid entries=$n flush_points=$n marks=1 used_sectors=$n free_sectors=$n full=0 pending_bytes=$n peak_pending_bytes=$n\$" <<<"$status" ||
	_fail "unexpected status after one mark and a write: $status"
(($(_flushlog_field fl entries) >= 2)) || _fail "a mark and a write, but $status"
used=$(_flushlog_field fl used_sectors)
free=$(_flushlog_field fl free_sectors)
((used + free == $(blockdev --getsz "$log"))) ||
	_fail "used_sectors $used + free_sectors $free is not the log's $(blockdev --getsz "$log") sectors"
"$FLUSHLOG" info --json "$log" >"$TMPDIR/live.json" || _fail "the live log does not read"
[ "$(jq -r .uuid "$TMPDIR/live.json")" = "$(_flushlog_field fl log)" ] ||
	_fail "status says log=$(_flushlog_field fl log), flushlog info $(jq -r .uuid "$TMPDIR/live.json")"
# a mark answers its seq: its header's, where it stands in the log as
# written (flushlog dump's logged_seq; dump's "seq" is its old name for
# the entry number, the place in durability order, which differs here:
# the writes no flush covered go last)
seq=$(_flushlog_mark fl numbered)
_flushlog_remove fl
echo "status was: $status"
for m in "$(printf '%064d' 0):$long_seq" "numbered:$seq"; do
	label=${m%:*} got=${m##*:}
	[[ $got =~ ^[0-9]+$ ]] || _fail "mark $label answered '$got', not a number"
	want=$("$FLUSHLOG" dump --json "$log" | jq -r --arg l "$label" 'select(.op == "mark" and .label == $l) | .logged_seq')
	[ "$got" = "$want" ] || _fail "mark $label answered $got, its logged_seq in the log is '$want'"
done
echo "the marks answered their seqs: $long_seq and $seq"
