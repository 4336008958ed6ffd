#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: an on_full=fail device fl (data disk D) whose log device is
# itself traced: an outer flushlog device, lo, over the log disk L, logging
# to O.  N writes of 4 KiB with O_DIRECT|O_DSYNC (FUA) go to fl, block K
# from PATTERN at sector 64*K; once each has returned, a mark ack-K goes
# into O.  The host reads O's crash states of L (test 135).
. "$FLUSHLOG_TOP/tests/guest/common.sh"

pattern=$1 n=$2
_flushlog_init lo /dev/flushlog/log /dev/flushlog/outer
_flushlog_init fl /dev/flushlog/data /dev/mapper/lo on_full=fail
for ((k = 1; k <= n; k++)); do
	dd if="$pattern" of=/dev/mapper/fl bs=4k count=1 skip=$((k - 1)) \
		seek=$((8 * k)) oflag=direct,dsync status=none ||
		_fail "write $k was not acknowledged"
	_flushlog_mark lo "ack-$k" >/dev/null
done
echo "$n writes acknowledged, each followed by its mark in the outer log"
_flushlog_remove fl
_flushlog_remove lo
