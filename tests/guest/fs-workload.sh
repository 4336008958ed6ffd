#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest, for each filesystem given: mkfs on flushlog, a small file
# workload with fsyncs and a mark after each, umount, remove the target;
# then replay the log to every mark (mount it: journal recovery must work)
# and to the end (the filesystem's own checker must pass).
. "$FLUSHLOG_TOP/tests/guest/common.sh"

scratch=/dev/flushlog/scratch
mnt="$TMPDIR/mnt"
mkdir -p "$mnt"

workload() {	# workload DIR DEVICE-NAME
	local dir=$1 i
	for i in 1 2 3 4 5 6; do
		mkdir -p "$dir/d$i"
		dd if=/dev/urandom of="$dir/d$i/f" bs=4k count=$((i * 5)) conv=fsync status=none
		echo "line $i" >>"$dir/journal.txt"
		sync "$dir/journal.txt"
		_flushlog_mark "$2" "fsync-$i"
		mv "$dir/d$i/f" "$dir/d$i/g"
		((i % 2)) || rm -rf "$dir/d$((i - 1))"
	done
}

check_fs() {	# check_fs FS DEVICE: the filesystem's own read-only checker
	case $1 in
	ext4) e2fsck -fn "$2" ;;
	xfs) xfs_repair -n "$2" ;;
	btrfs) btrfs check --readonly "$2" ;;
	esac
}

run_fs() {
	local fs=$1 data=/dev/flushlog/data-$1 log=/dev/flushlog/log-$1 i
	_flushlog_init "fl-$fs" "$data" "$log"
	case $fs in
	ext4) mkfs.ext4 -q "/dev/mapper/fl-$fs" ;;
	xfs) mkfs.xfs -q "/dev/mapper/fl-$fs" ;;
	btrfs) mkfs.btrfs -q "/dev/mapper/fl-$fs" >/dev/null ;;
	esac
	mount "/dev/mapper/fl-$fs" "$mnt"
	workload "$mnt" "fl-$fs"
	umount "$mnt"
	echo "$fs: $(_flushlog_status "fl-$fs")"
	_flushlog_remove "fl-$fs"
	[ "$fs" = btrfs ] && btrfs device scan --forget

	for i in 1 2 3 4 5 6; do
		"$FLUSHLOG" replay -q -o "$scratch" --to "mark:fsync-$i" "$log"
		mount -t "$fs" "$scratch" "$mnt" ||
			_fail "$fs: the state at mark fsync-$i does not mount"
		grep -q "line $i" "$mnt/journal.txt" ||
			_fail "$fs: fsync'd line $i missing at mark fsync-$i"
		umount "$mnt"
		[ "$fs" = btrfs ] && btrfs device scan --forget
	done
	"$FLUSHLOG" replay -q -o "$scratch" --to end "$log"
	check_fs "$fs" "$scratch" >"$TMPDIR/fsck.out" 2>&1 ||
		{ cat "$TMPDIR/fsck.out"; _fail "$fs: the final state fails its checker"; }
	echo "$fs: 6 marks mount, the end passes the checker"
}

for fs in "$@"; do
	run_fs "$fs"
done
