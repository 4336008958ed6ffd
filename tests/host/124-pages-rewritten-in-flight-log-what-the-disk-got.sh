#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# O_DIRECT writes from a mapping another process rewrites while they are
# in flight: the bytes the disk reads are not those the target saw at map
# time, and nothing writes those blocks again.  The log must hold what the
# disk got, so its replay equals the data disk byte for byte; a target
# that logs a copy while the disk reads the pages differs in millions of
# bytes here.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12
_require_guest

# 300 writes of 64 KiB, each to its own place, each compared
truncate -s 20M "$TEST_TMP/data.img"
truncate -s 64M "$TEST_TMP/log.img"
# two CPUs, whatever FLUSHLOG_GUEST_SMP says: the target's bios are
# submitted and completed on both at once
_run_guest "$FLUSHLOG_TOP/tests/guest/rewrite-in-flight.sh" --smp 2 \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img" -- 300
"$FLUSHLOG" info "$TEST_TMP/log.img" | grep -E "^(state|entries)"
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log.img"
_same_image "$TEST_TMP/data.img" "$TEST_TMP/replay.img" "replay vs the data disk"
