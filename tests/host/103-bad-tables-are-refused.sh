#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Each malformed dm-flushlog table (argument counts, unknown and duplicate
# features, missing devices, a log too small, data and log the
# same device, max_pending over half the memory, a zoned log device, a
# device both one target's data and another's log) is refused with its own
# ti->error, and so is new_log on a log another device shares; a table
# that asks for a data checksum is refused (there is one, CRC32C, and the
# log's super block says so); over-long mark labels
# and unknown messages are refused; status names its fields in the
# documented order, used and free add up to the log device, its log= is
# flushlog info's uuid, and a mark answers its seq in the log; the guest
# kernel stays healthy (run-guest fails the test on any oops or warning).
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest

truncate -s 64M "$TEST_TMP/data.img" "$TEST_TMP/log.img" "$TEST_TMP/data2.img" "$TEST_TMP/log2.img"
# a zoned log device is a null_blk one: Debian's kernels have it, the
# debug kernel (all built in) has not
modules=()
case ${FLUSHLOG_KERNEL:-6.1} in
6.1|6.12|debian) modules=(--modules null_blk) ;;
esac
_run_guest "$FLUSHLOG_TOP/tests/guest/bad-tables.sh" "${modules[@]}" \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img" \
	--disk "data2=$TEST_TMP/data2.img" --disk "log2=$TEST_TMP/log2.img"
"$FLUSHLOG" info "$TEST_TMP/log.img" | grep -q "marks: *2$" ||
	_fail "the 64-byte mark and the numbered one are not in the log"
