#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: a workload through the kernel's own dm-log-writes target
# (ext4 with fsyncs and marks, then raw writes and discards), to check
# that flushlog reads the logs users already have.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

data=/dev/flushlog/data
log=/dev/flushlog/log
dmsetup create lw --table "0 $(blockdev --getsz "$data") log-writes $data $log"
mkfs.ext4 -q /dev/mapper/lw
mkdir -p "$TMPDIR/mnt"
mount /dev/mapper/lw "$TMPDIR/mnt"
for i in 1 2 3; do
	dd if=/dev/urandom of="$TMPDIR/mnt/f$i" bs=4k count=$((i * 7)) conv=fsync status=none
	dmsetup message lw 0 mark "fsync-$i"
done
umount "$TMPDIR/mnt"
dd if=/dev/urandom of=/dev/mapper/lw bs=64k count=16 seek=200 oflag=direct,dsync status=none
dmsetup message lw 0 mark raw
dmsetup remove lw
