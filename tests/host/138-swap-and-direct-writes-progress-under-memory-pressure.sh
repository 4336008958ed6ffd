#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A machine short of memory, swapping onto a traced device, goes on
# making progress on every traced device.  The debug kernel with 512 MiB
# (less KASAN's shadow): swap on a flushlog device and a 480 MiB memory
# hog that writes and reads back every page once, while fio writes a
# second flushlog device with 4 KiB random writes, 16 at once, and 1 MiB
# O_DIRECT writes, 2 at once (its page reserve's small takers and one
# large one).  Every job finishes its fixed amount (no deadline: a job
# that stops for good shows as the hung-task detector's report, which
# fails the run, or as the guest's timeout), nothing is killed for
# memory, the hog reads back what it wrote, each log's peak memory stays
# within max_pending, and both logs replay to their disks byte for byte.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: debug
_require_guest

truncate -s 1G "$TEST_TMP/swap.img"
truncate -s 2G "$TEST_TMP/swaplog.img"
truncate -s 128M "$TEST_TMP/io.img"
truncate -s 256M "$TEST_TMP/iolog.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/memory-pressure.sh" --mem 512 --timeout 1400 \
	--disk "swap=$TEST_TMP/swap.img" --disk "swaplog=$TEST_TMP/swaplog.img" \
	--disk "io=$TEST_TMP/io.img" --disk "iolog=$TEST_TMP/iolog.img" -- 480
for d in swap io; do
	"$FLUSHLOG" info "$TEST_TMP/${d}log.img" | grep -E "^(entries|writes)" | sed "s/^/$d log: /"
	"$FLUSHLOG" replay -q -o "$TEST_TMP/$d.replay" "$TEST_TMP/${d}log.img"
	_same_image "$TEST_TMP/$d.img" "$TEST_TMP/$d.replay" "the $d log's replay vs its disk"
	rm -f "$TEST_TMP/$d.replay"
done
