#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lvm2 grows a volume under a traced filesystem: ext4 on dm-flushlog over
# an lvm2 logical volume, marks after fsyncs, then lvextend, a reload of
# flushlog's table with the new length (the rest of it the same), resume
# and resize2fs online, and more files, some in the new space.  The log
# goes on across the reload (one uuid, the one status named before it),
# holds one RESIZE entry (the new size, between the marks around it),
# replays to the volume byte for byte, and every state of the resize
# (between the marks around it) and at every mark from mkfs on passes
# qemu/check-state (mount, walk, e2fsck -fn).
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1
_require_guest
_require_cmd lvm

truncate -s 256M "$TEST_TMP/pv.img" "$TEST_TMP/log.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/lvm-resize.sh" \
	--disk "pv=$TEST_TMP/pv.img" --disk "log=$TEST_TMP/log.img" -- ext4
"$FLUSHLOG" info "$TEST_TMP/log.img" >/dev/null
