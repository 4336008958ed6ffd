#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make crashtest on filesystems over two traced devices that write one log
# (device=0 and device=1): xfs with its log on the second device and ext4
# with an external journal.  30 operations of fl-workload, every prefix
# state and a sample of the epoch states of the joint order, each mounted
# through both devices (qemu/check-state splits the state image by
# FLUSHLOG_DEVICES), read, checked by the filesystem's own fsck and held
# to the fsync oracle.  With the ordering on every state must pass (a
# failure is a finding about the filesystem or about flushlog: its run
# folder is kept); with ext4's switched off (barrier=0) the journal's
# commits race the data on the other device, and crashtest must catch it.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest
_require_cmd jq

opts=(--ops 30 --states "prefix,epoch" --max-reorder 1 --max-states 30 --oracle fsync)
for fs in xfs-logdev ext4-journal; do
	_crashtest_passes "$fs" "${opts[@]}"
	grep -q "^format: *flushlog version 3" "$TEST_TMP/$fs/info.txt" ||
		_fail "$fs: not a log of two devices: $(head -n 3 "$TEST_TMP/$fs/info.txt")"
	checked=$(jq '.states | length' "$TEST_TMP/$fs/report.json")
	((checked >= 10)) || _fail "$fs: only $checked states checked"
	echo "$fs: $(grep 'states checked' "$TEST_TMP/$fs/summary.txt")"
done

_crashtest_caught ext4-journal "fsync oracle: .* broken|does not mount|e2fsck" \
	--ops 60 --states prefix,epoch --max-reorder 1 --max-states 60
