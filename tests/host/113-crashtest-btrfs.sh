#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make crashtest on btrfs with its default options and the default workload
# (fl-workload, 100 operations): every prefix state from the end of mkfs
# on, and a deterministic sample of the epoch states (any one write in
# flight or not yet flushed also on the media), mounts (journal recovery),
# passes the filesystem's own checker and keeps every fsync's promise.  A
# failure here is a finding about btrfs or about flushlog: its run folder is
# kept.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.12
# asan: no
_require_guest

_crashtest_passes btrfs --states epoch --max-reorder 1 --max-states 60 --oracle fsync
