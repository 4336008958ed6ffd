#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# fio through dm-flushlog in the guest (several jobs, 4k-1M writes, fsync,
# O_SYNC/FUA, trims, write-zeroes, marks, a data disk without a write
# cache): the log checks out (checksums and durability order), holds every
# kind of entry, and its replay to the end equals the data disk byte for
# byte.  QEMU's discard=unmap punches holes in the raw image, so discarded
# ranges read back as zeroes there as they do in the replay.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 debug
_require_guest

truncate -s 128M "$TEST_TMP/data.img"
truncate -s 256M "$TEST_TMP/log.img"
# two CPUs, whatever FLUSHLOG_GUEST_SMP says: the target's bios are
# submitted and completed on both at once
_run_guest "$FLUSHLOG_TOP/tests/guest/fio-workload.sh" --smp 2 \
	--disk "data=$TEST_TMP/data.img,write-cache=off" --disk "log=$TEST_TMP/log.img"

"$FLUSHLOG" info "$TEST_TMP/log.img"
info=$("$FLUSHLOG" info --json "$TEST_TMP/log.img")
for what in writes flushes fua discards write_zeroes marks; do
	n=$(echo "$info" | jq ".$what")
	((n > 0)) || _fail "no $what in the log: $info"
done
echo "$info" | jq -e '.clean and .order_verified and .data_verified' >/dev/null ||
	_fail "log not clean or not verified: $info"
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log.img"
_same_image "$TEST_TMP/data.img" "$TEST_TMP/replay.img" "replay --to end vs the data disk"
