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
_expect_table_error "$t $data $log 2 data_checksum=xxh64 data_checksum=crc32c" "Duplicate data_checksum argument"
_expect_table_error "$t $data $log 1 data_checksum=md5" "Invalid data_checksum (expected xxh64 or crc32c)"
_expect_table_error "$t $data $log 2 no_data data_checksum=crc32c" \
	"data_checksum and no_data exclude each other"
_expect_table_error "$t $data $log 6 no_data on_full=stop data_checksum=xxh64 max_pending=8 device=1 no_data" \
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

# data checksums: XXH64 unless the table says crc32c, and the super block
# says which (FLUSHLOG_SF_DATA_XXH64, 0x8, in the flags at offset 60)
for sum in default crc32c xxh64; do
	args=()
	[ $sum = default ] || args=("data_checksum=$sum")
	_flushlog_init fl "$data" "$log" "${args[@]}"
	want="flushlog [0-9:]* [0-9:]*$"
	[ $sum = crc32c ] && want="flushlog [0-9:]* [0-9:]* 1 data_checksum=crc32c$"
	dmsetup table fl | grep -q "$want" || _fail "$sum: table not echoed: $(dmsetup table fl)"
	dd if=/dev/urandom of=/dev/mapper/fl bs=64k count=4 oflag=direct status=none
	_flushlog_remove fl
	flags=$(od -An -tu4 -j60 -N4 "$log" | tr -d ' ')
	if [ $sum = crc32c ]; then
		((!(flags & 8))) || _fail "crc32c: the super block has the XXH64 flag ($flags)"
	else
		((flags & 8)) || _fail "$sum: the super block lacks the XXH64 flag ($flags)"
	fi
	"$FLUSHLOG" replay -q -o "$TMPDIR/sum.img" "$log" ||
		_fail "$sum: the log does not replay"
	cmp -s -n "$((256 * 1024))" "$TMPDIR/sum.img" "$data" ||
		_fail "$sum: the replay differs from the data device"
	rm -f "$TMPDIR/sum.img"
done
echo "data checksums: xxh64 by default, crc32c on request, both replay"

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
_flushlog_mark fl "$(printf '%064d' 0)"
if _flushlog_mark fl "$(printf '%065d' 0)" 2>/dev/null; then
	_fail "a 65-byte mark label was accepted"
fi
dmesg | grep -q "mark label must be 1 to 64 bytes" || _fail "no message for the long label"
if dmsetup message fl 0 frobnicate 2>/dev/null; then
	_fail "an unknown message was accepted"
fi
dmesg | grep -q "unrecognised message 'frobnicate'" || _fail "no message for 'frobnicate'"
dd if=/dev/zero of=/dev/mapper/fl bs=4k count=4 oflag=direct status=none
status=$(_flushlog_status fl)
read -r state entries _ marks _ <<<"$status"
if [ "$state" != logging ] || ((entries < 1 || marks != 1)); then
	_fail "unexpected status after one mark and a write: $status"
fi
_flushlog_remove fl
echo "status was: $status"
