#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# qemu/check-state mounts each state where no other checker's namespace
# can copy it.  A two-device filesystem's fsck runs in a mount namespace
# of its own, and a new namespace copies every mount there is: a
# concurrent checker's state, copied in, stayed mounted there after its
# own umount, so its log was never marked clean and its super block never
# written, and its fsck failed states that were consistent (xfs-logdev:
# "valuable metadata changes in a log which is being ignored", counters
# off; a different state on each --recheck of one log).  Here a state of
# xfs-logdev and of ext4-journal, each with a log to recover, is checked
# while another namespace made during its mount lives: that namespace
# must not hold the mount, and the check must pass.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest

_run_guest "$FLUSHLOG_TOP/tests/guest/check-state-private-mounts.sh" --modules xfs -- xfs-logdev ext4-journal
