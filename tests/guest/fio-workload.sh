#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: fio with several jobs (4k-1M random writes with fsync,
# O_SYNC writes, trims) and, beside it, write-zeroes and marks, through
# flushlog on a data disk whose write cache is off.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

data=/dev/flushlog/data
log=/dev/flushlog/log
vd=$(basename "$(readlink -f "$data")")

_flushlog_init fl "$data" "$log"
dm=$(dmsetup info -c --noheadings -o blkdevname fl)
echo "data disk write cache: $(cat "/sys/block/$vd/queue/write_cache")"
echo "flushlog write cache: $(cat "/sys/block/$dm/queue/write_cache"), fua $(cat "/sys/block/$dm/queue/fua")"
[ "$(cat "/sys/block/$vd/queue/write_cache")" = "write through" ] ||
	_fail "the data disk was meant to have no write cache"
[ "$(cat "/sys/block/$dm/queue/write_cache")" = "write back" ] ||
	_fail "flushlog does not advertise a write cache"
[ "$(cat "/sys/block/$dm/queue/fua")" = 1 ] || _fail "flushlog does not advertise FUA"

# fio's random map (the default) keeps a job from writing a block twice:
# two overlapping writes in flight at once have no defined result, on the
# disk or in any log.
cat >"$TMPDIR/job.fio" <<'FIO'
[global]
filename=/dev/mapper/fl
direct=1
ioengine=libaio
iodepth=4
randrepeat=1

[mixed]
rw=randwrite
bsrange=4k-1m
fsync=8
numjobs=2
offset=0
size=32m
offset_increment=32m
io_size=12m

[dsync]
rw=randwrite
bs=4k
sync=1
offset=64m
size=4m
io_size=1m

[fill]
rw=write
bs=256k
offset=80m
size=8m

[trim]
stonewall
rw=randtrim
bs=64k
offset=80m
size=8m
io_size=2m
FIO
(
	for i in 1 2 3 4 5 6 7 8; do
		blkdiscard -z -o $(((96 + i) * 1048576)) -l 262144 /dev/mapper/fl
		_flushlog_mark fl "zeroes-$i"
		sleep 0.2
	done
) &
fio --output="$TMPDIR/fio.out" "$TMPDIR/job.fio"
wait
_flushlog_mark fl finished
echo "status: $(_flushlog_status fl)"
_flushlog_remove fl
