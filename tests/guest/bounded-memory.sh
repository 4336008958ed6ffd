#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest (512 MiB of memory): SIZE of buffered writes through
# flushlog and not one flush; the target's memory must stay within its
# max_pending budget (64 MiB by default) all along.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

size=${1:-4g}
_flushlog_init fl /dev/flushlog/data /dev/flushlog/log
# buffered, no fsync: writeback alone decides when data goes down
fio --name=nofsync --filename=/dev/mapper/fl --rw=write --bs=1m \
	--size="$size" --ioengine=psync --direct=0 --end_fsync=0 \
	--output="$TMPDIR/fio.out" || _fail "fio failed: $(cat "$TMPDIR/fio.out")"
grep -E "WRITE:" "$TMPDIR/fio.out" || true
status=$(_flushlog_status fl)
echo "status: $status"
state=$(_flushlog_field fl state)
flushes=$(_flushlog_field fl flush_points)
peak=$(_flushlog_field fl peak_pending_bytes)
_flushlog_remove fl
[ "$state" = logging ] || _fail "state $state"
((peak > 0 && peak <= 64 * 1048576)) || _fail "peak memory $peak bytes, over the 64 MiB budget"
echo "flush points: $flushes; peak memory: $((peak >> 20)) MiB of 64"
