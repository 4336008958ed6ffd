#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A log made by the kernel's own dm-log-writes target (ext4 with fsyncs and
# marks, then O_DSYNC raw writes) is recognised, and flushlog replays it to
# its data disk byte for byte; its marks are crash points by name.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1 6.12
# asan: no
_require_guest

truncate -s 64M "$TEST_TMP/data.img"
truncate -s 128M "$TEST_TMP/log.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/log-writes-capture.sh" \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img"
"$FLUSHLOG" info --json "$TEST_TMP/log.img" >"$TEST_TMP/info"
# four marks of ours, and the "dm-log-writes-end" its destructor adds
jq -e '.format == "dm-log-writes" and .marks == 5 and .flushes > 0' "$TEST_TMP/info" >/dev/null ||
	_fail "not read as a dm-log-writes log: $(cat "$TEST_TMP/info")"
# dm-log-writes' super block counts entries only up to its last FUA or
# mark, and does not record the device size: replay onto a copy of a
# zeroed disk of the right size
truncate -s 64M "$TEST_TMP/zero.img"
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" --base "$TEST_TMP/zero.img" "$TEST_TMP/log.img"
_same_image "$TEST_TMP/data.img" "$TEST_TMP/replay.img" "dm-log-writes log replayed vs its data disk"
"$FLUSHLOG" replay -q -o "$TEST_TMP/m.img" --base "$TEST_TMP/zero.img" --to mark:fsync-2 "$TEST_TMP/log.img"
"$FLUSHLOG" replay -q -o "$TEST_TMP/e.img" --base "$TEST_TMP/zero.img" --to mark:dm-log-writes-end "$TEST_TMP/log.img"
_same_image "$TEST_TMP/data.img" "$TEST_TMP/e.img" "dm-log-writes log replayed to its end mark"
