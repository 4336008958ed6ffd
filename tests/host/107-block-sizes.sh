#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# dm-flushlog over 4 KiB-sector disks: data and log both 4 KiB, 512-byte
# data with a 4 KiB log, 4 KiB data with a 512-byte log.  Each log records
# the right block sizes, checks out and replays to the data disk exactly.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1 6.12
# asan: no
_require_guest

k4=logical_block_size=4096,physical_block_size=4096
disks=()
for pair in 4k4k 512d4kl 4kd512l; do
	truncate -s 32M "$TEST_TMP/data-$pair.img" "$TEST_TMP/log-$pair.img"
done
disks+=(--disk "data-4k4k=$TEST_TMP/data-4k4k.img,$k4" --disk "log-4k4k=$TEST_TMP/log-4k4k.img,$k4")
disks+=(--disk "data-512d4kl=$TEST_TMP/data-512d4kl.img" --disk "log-512d4kl=$TEST_TMP/log-512d4kl.img,$k4")
disks+=(--disk "data-4kd512l=$TEST_TMP/data-4kd512l.img,$k4" --disk "log-4kd512l=$TEST_TMP/log-4kd512l.img")
_run_guest "$FLUSHLOG_TOP/tests/guest/block-sizes.sh" "${disks[@]}"

check() {	# check PAIR LOG-BLOCK DATA-BLOCK
	"$FLUSHLOG" info --json "$TEST_TMP/log-$1.img" >"$TEST_TMP/info" ||
		_fail "$1: $(cat "$TEST_TMP/info")"
	jq -e ".log_block_size == $2 and .data_block_size == $3 and .order_verified" "$TEST_TMP/info" >/dev/null ||
		_fail "$1: expected log block $2, data block $3: $(cat "$TEST_TMP/info")"
	"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log-$1.img"
	_same_image "$TEST_TMP/data-$1.img" "$TEST_TMP/replay.img" "$1: replay vs data"
}
check 4k4k 4096 4096
check 512d4kl 4096 512
check 4kd512l 512 4096
