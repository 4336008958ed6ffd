#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The CRC32C used for every checksum matches a bitwise reference, on the
# SSE4.2 path and on the portable table path.
. "$FLUSHLOG_TOP/tests/common.sh"

"$FLUSHLOG_BUILD/tests/t-crc32c"
FLUSHLOG_NO_HW_CRC=1 "$FLUSHLOG_BUILD/tests/t-crc32c"
