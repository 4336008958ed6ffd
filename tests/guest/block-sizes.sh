#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: flushlog over data and log disks of 512-byte and 4 KiB
# logical blocks, in three pairings: writes, a flush, discards, FUA.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

for pair in 4k4k 512d4kl 4kd512l; do
	_flushlog_init "fl-$pair" "/dev/flushlog/data-$pair" "/dev/flushlog/log-$pair"
	dev=/dev/mapper/fl-$pair
	echo "$pair: logical block $(blockdev --getss "$dev")"
	dd if=/dev/urandom of="$dev" bs=4k count=200 oflag=direct status=none
	sync
	dd if=/dev/urandom of="$dev" bs=64k count=10 seek=50 oflag=direct,dsync status=none
	blkdiscard -o 65536 -l 131072 "$dev"
	blkdiscard -z -o 262144 -l 65536 "$dev"
	_flushlog_mark "fl-$pair" finished
	_flushlog_remove "fl-$pair"
done
