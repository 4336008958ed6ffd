#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: writes whose pages are rewritten while in flight, through
# the device's own mapping (mmap) and with O_DIRECT from a mapping another
# process keeps rewriting (direct).  The host compares each log's replay
# with its data disk.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

tool=${FLUSHLOG_BUILD:-$FLUSHLOG_TOP/build}/tests/fl-rewrite-in-flight
for mode in mmap direct; do
	_flushlog_init "fl-$mode" "/dev/flushlog/data-$mode" "/dev/flushlog/log-$mode"
	"$tool" "$mode" "/dev/mapper/fl-$mode" "$1"
	echo "$mode status: $(_flushlog_status "fl-$mode")"
	_flushlog_remove "fl-$mode"
done
