#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 4 GiB of buffered writes and not one flush, in a guest of 512 MiB: a
# target that held unflushed writes until a flush would run the guest out
# of memory.  flushlog streams them: its peak memory (status) stays within
# the 64 MiB budget, and the log replays to the data disk byte for byte.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1
_require_guest

truncate -s 4G "$TEST_TMP/data.img"
# block device writeback sends 4 KiB bios: an entry is 4.5 KiB of log
truncate -s 4800M "$TEST_TMP/log.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/bounded-memory.sh" --mem 512 --timeout 2400 \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img" -- 4g
"$FLUSHLOG" info "$TEST_TMP/log.img" | grep -E "^(state|entries|writes|flushes)"
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log.img"
_same_image "$TEST_TMP/data.img" "$TEST_TMP/replay.img" "replay vs the data disk"
