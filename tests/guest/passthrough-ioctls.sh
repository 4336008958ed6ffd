#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: a passthrough SCSI write (SG_IO WRITE(10)) sent to a
# flushlog device over a scsi_debug disk must not reach the disk unlogged:
# the ioctl fails with ENOTTY, the disk keeps its old data there, and the
# log replays to the disk byte for byte.  BLKDISCARD and BLKZEROOUT, block
# ioctls the target sees as bios, still work, and are logged.  The host
# test (136) says why.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

sgio=$FLUSHLOG_BUILD/tests/fl-sgio
sd=
for b in /sys/block/sd*; do
	grep -q scsi_debug "$b/device/model" 2>/dev/null && sd=/dev/${b##*/}
done
[ -n "$sd" ] || _fail "no scsi_debug disk"
[ "$(blockdev --getss "$sd")" = 512 ] || _fail "$sd: sectors of $(blockdev --getss "$sd") bytes"
head -c 64K /dev/urandom >"$TMPDIR/pattern"
{ yes sg-io-write-at-lba-256 || true; } | head -c 4096 >"$TMPDIR/sg"

echo "== SG_IO WRITE(10) through flushlog on $sd ($(blockdev --getsz "$sd") sectors)"
_flushlog_init fl "$sd" /dev/flushlog/log
dd if="$TMPDIR/pattern" of=/dev/mapper/fl bs=64k oflag=direct status=none
dd if="$sd" bs=512 skip=256 count=8 iflag=direct status=none >"$TMPDIR/before"
rc=0
err=$("$sgio" /dev/mapper/fl 256 "$TMPDIR/sg") || rc=$?
echo "fl-sgio: exit $rc ${err:-(no errno)}"
sync
_flushlog_remove fl
"$FLUSHLOG" replay -q -o "$TMPDIR/replay.img" /dev/flushlog/log
problems=()
if ((rc == 0)); then
	problems+=("SG_IO WRITE(10) through the flushlog device was carried out")
elif [ "$rc" != 2 ] || [ "$err" != ENOTTY ]; then
	problems+=("SG_IO failed with exit $rc '$err', not ENOTTY")
fi
# (no <(...): the guest's /dev has no /dev/fd)
dd if="$sd" bs=512 skip=256 count=8 iflag=direct status=none >"$TMPDIR/after"
cmp -s "$TMPDIR/before" "$TMPDIR/after" ||
	problems+=("the disk changed at LBA 256 without a log entry")
cmp "$TMPDIR/replay.img" "$sd" >"$TMPDIR/cmp" 2>&1 ||
	problems+=("the log's replay differs from the disk: $(cat "$TMPDIR/cmp")")

echo "== BLKDISCARD and BLKZEROOUT through flushlog on a virtio disk"
_flushlog_init fl2 /dev/flushlog/data2 /dev/flushlog/log2
dd if="$TMPDIR/pattern" of=/dev/mapper/fl2 bs=64k oflag=direct status=none
dd if="$TMPDIR/pattern" of=/dev/mapper/fl2 bs=64k seek=1 oflag=direct status=none
blkdiscard -o 0 -l 65536 /dev/mapper/fl2 || problems+=("BLKDISCARD failed")
blkdiscard -z -o 65536 -l 65536 /dev/mapper/fl2 || problems+=("BLKZEROOUT failed")
sync
_flushlog_remove fl2
"$FLUSHLOG" dump /dev/flushlog/log2
"$FLUSHLOG" dump --json /dev/flushlog/log2 >"$TMPDIR/dump2"
jq -se 'any(.[]; .op == "discard" and .sector == 0 and .nr_sectors == 128)' "$TMPDIR/dump2" >/dev/null ||
	problems+=("no discard entry for BLKDISCARD")
jq -se 'any(.[]; .op == "write-zeroes" and .sector == 128 and .nr_sectors == 128)' "$TMPDIR/dump2" >/dev/null ||
	problems+=("no write-zeroes entry for BLKZEROOUT")
"$FLUSHLOG" replay -q -o "$TMPDIR/replay2.img" /dev/flushlog/log2
cmp "$TMPDIR/replay2.img" /dev/flushlog/data2 ||
	problems+=("log2's replay differs from its disk")

((${#problems[@]} == 0)) || _fail "$(printf '\n  %s' "${problems[@]}")"
echo "SG_IO refused with ENOTTY, the disk unchanged; BLKDISCARD and BLKZEROOUT logged"
