#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The review's bugs, each one a section of the guest script:
#  - a flushlog target that is not the first in its table logs the right
#    sectors, 8 MiB direct writes are split and logged whole, and the
#    target's memory stays within max_pending=2 (the replay equals the
#    data disk);
#  - a second flushlog device with the same device number (here both
#    without device=, so 0), or a second target of one table, on a log in
#    use is refused (-EBUSY);
#  - a mark while suspended is refused and status says "suspended";
#  - writes that fail on the data device are logged, and take no log
#    space but their entries': status's used sectors are the log's;
#  - no_data entries leak no memory: after a warm-up, one of three rounds of
#    40000 loses less than 8 MiB (the header page leak lost 19.6 MiB each);
#  - with on_full=fail, writes fail once the log device has failed, and
#    the device still suspends and resumes.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest

truncate -s 64M "$TEST_TMP/data.img" "$TEST_TMP/data2.img"
truncate -s 128M "$TEST_TMP/log.img"
# two CPUs, whatever FLUSHLOG_GUEST_SMP says: the target's bios are
# submitted and completed on both at once
_run_guest "$FLUSHLOG_TOP/tests/guest/target-review.sh" --smp 2 \
	--disk "data=$TEST_TMP/data.img" --disk "data2=$TEST_TMP/data2.img" \
	--disk "log=$TEST_TMP/log.img"
