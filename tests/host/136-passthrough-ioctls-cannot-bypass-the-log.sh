#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A passthrough ioctl cannot write the data device behind the log's back.
# dm hands a target's prepare_ioctl device the ioctls it does not know,
# SG_IO among them: over a SCSI disk (scsi_debug), an SG_IO WRITE(10)
# sent to the flushlog device wrote the disk and no entry, so the log no
# longer replayed to the disk (and on_full=fail's promise was void).  The
# target refuses them: SG_IO fails with ENOTTY and the disk keeps its
# data.  BLKDISCARD and BLKZEROOUT are block ioctls that reach the target
# as bios: they still work, and the log has a discard and a write-zeroes
# entry for them (over a virtio disk, whose discard and write-zeroes
# scsi_debug lacks without module options).
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1
_require_guest

truncate -s 16M "$TEST_TMP/log.img" "$TEST_TMP/data2.img" "$TEST_TMP/log2.img"
_run_guest "$FLUSHLOG_TOP/tests/guest/passthrough-ioctls.sh" --modules "scsi_debug sd_mod" \
	--disk "log=$TEST_TMP/log.img" --disk "data2=$TEST_TMP/data2.img" \
	--disk "log2=$TEST_TMP/log2.img"
