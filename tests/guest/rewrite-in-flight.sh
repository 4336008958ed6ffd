#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: O_DIRECT writes from a mapping another process keeps
# rewriting, through flushlog; the host compares the log's replay with the
# data disk.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

_flushlog_init fl /dev/flushlog/data /dev/flushlog/log
"${FLUSHLOG_BUILD:-$FLUSHLOG_TOP/build}/tests/fl-rewrite-in-flight" /dev/mapper/fl "$1"
echo "status: $(_flushlog_status fl)"
_flushlog_remove fl
