#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: the toy journal in each of its modes, on a raw device
# through flushlog: one data and one log disk per mode.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

toy=${FLUSHLOG_BUILD:-$FLUSHLOG_TOP/build}/tests/fl-toyjournal
for mode in "$@"; do
	_flushlog_init "tj-$mode" "/dev/flushlog/data-$mode" "/dev/flushlog/log-$mode"
	"$toy" write "/dev/mapper/tj-$mode" "$mode" 6
	_flushlog_remove "tj-$mode"
	echo "$mode: traced"
done
