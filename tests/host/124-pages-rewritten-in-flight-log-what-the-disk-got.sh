#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Writes whose pages change while they are in flight (a mapping rewritten
# under msync; O_DIRECT from a buffer another process rewrites): the bytes
# the disk reads are not those the target saw at map time.  The log must
# hold what the disk got, so each replay equals its data disk byte for
# byte.  The O_DIRECT case leaves the difference on the disk for good; a
# target that logs a copy while the disk reads the pages fails it.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12
_require_guest

# direct: 300 writes of 64 KiB, each to its own place, each compared
truncate -s 1M "$TEST_TMP/data-mmap.img"
truncate -s 20M "$TEST_TMP/data-direct.img"
for mode in mmap direct; do
	truncate -s 1G "$TEST_TMP/log-$mode.img"
	disks+=(--disk "data-$mode=$TEST_TMP/data-$mode.img" --disk "log-$mode=$TEST_TMP/log-$mode.img")
done
_run_guest "$FLUSHLOG_TOP/tests/guest/rewrite-in-flight.sh" "${disks[@]}" -- 300
for mode in mmap direct; do
	"$FLUSHLOG" info "$TEST_TMP/log-$mode.img" | grep -E "^(state|entries)"
	"$FLUSHLOG" replay -q -o "$TEST_TMP/replay-$mode.img" "$TEST_TMP/log-$mode.img"
	_same_image "$TEST_TMP/data-$mode.img" "$TEST_TMP/replay-$mode.img" "$mode: replay vs the data disk"
done
