# shellcheck shell=bash disable=SC2034,SC2016 # read by who sources it; backquotes are markdown
# SPDX-License-Identifier: GPL-2.0
#
# What flushlog knows of each filesystem it can crash-test, in one place:
# the host's scripts (crashtest, matrix, the initramfs) and the guest's
# (crashtest-guest, check-state) all read it.  Source it, then call
# fl_fs NAME; it fails for a name it does not know.  It sets:
#
#   FS_TYPE       what mount -t and mkfs.TYPE take
#   FS_MKFS       mkfs command and options, the device appended
#   FS_SIZE       size of the traced data disk
#   FS_MODULES    Debian kernel modules the guest must load for it, beyond
#                 the ones every guest has (qemu/mkinitramfs)
#   FS_PACKAGES   Debian packages of its tools, installed only when asked for
#   FS_CONFIG     the kernel options it needs, built in (scripts/build-kernel)
#   FS_MOUNT      mount options every mount of it takes
#   FS_ORDERED    options that turn its flush/FUA ordering on, when its
#                 default leaves it off
#   FS_UNORDERED  options that turn the ordering off; empty when it has none,
#                 and FS_UNORDERED_WHY says why
#   FS_FSCK       read-only checker, the device appended; empty when the
#                 filesystem has none (the walk and the oracle must do)
#   FS_CHECK      the check in words, for docs/matrix.md
#   FS_NO_PROMISE why its fsck is owed nothing after a crash, or empty:
#                 then only the mount, the walk and the oracle can find
#                 a fault of its ordering
#   FS_SERIAL     why two of its states cannot be mounted at once (every
#                 state has the same uuid), or empty
#   FS_DEVICES    1, or 2 for a filesystem over two traced devices (an
#                 external journal or log): device 1, FS_SIZE1 in size, is
#                 made first with FS_MKFS1 (the device appended), and {1}
#                 in FS_MKFS, FS_MOUNT and FS_FSCK stands for its path
#                 (fl_fs_dev1); both are traced into one log
#
# The mount options come from the 6.1 sources (fs/*/super.c): every one of
# these filesystems was converted from barriers to PREFLUSH/FUA in 2010.

FL_FILESYSTEMS="ext4 ext3 xfs btrfs gfs2 reiserfs nilfs2 vfat ocfs2 f2fs"
# on two devices, which a log of one device could not order
FL_FILESYSTEMS_2DEV="xfs-logdev ext4-journal btrfs-raid1"

fl_fs() {
	FS_TYPE=$1 FS_MKFS="mkfs.$1" FS_SIZE=128M FS_MODULES='' FS_PACKAGES='' FS_CONFIG=''
	FS_MOUNT='' FS_ORDERED='' FS_UNORDERED='' FS_UNORDERED_WHY='' FS_FSCK=''
	FS_CHECK='' FS_SERIAL='' FS_NO_PROMISE='' FS_DEVICES=1 FS_SIZE1='' FS_MKFS1=''
	case $1 in
	ext4|ext3)
		FS_CONFIG='CONFIG_EXT4_FS=y'
		# ext3 is the ext3 on-disk format (no extents, 32-bit) mounted
		# as ext3; since 4.3 the ext4 driver and jbd2 run it
		FS_MKFS="mkfs.$1 -q"
		FS_PACKAGES=e2fsprogs
		FS_UNORDERED=barrier=0
		FS_FSCK='e2fsck -fn'
		FS_CHECK='mount (journal replay), walk, `e2fsck -fn`' ;;
	xfs)
		FS_CONFIG='CONFIG_XFS_FS=y'
		FS_MKFS='mkfs.xfs -q -f'
		FS_SIZE=320M	# mkfs.xfs refuses less than 300 MB
		FS_PACKAGES=xfsprogs
		FS_MOUNT=nouuid	# every state has the same uuid
		FS_UNORDERED_WHY='xfs dropped nobarrier in 4.19: it always orders its log'
		FS_FSCK='xfs_repair -n'
		FS_CHECK='mount (log recovery), walk, `xfs_repair -n`' ;;
	btrfs)
		FS_CONFIG='CONFIG_BTRFS_FS=y'
		FS_MKFS='mkfs.btrfs -q -f'
		FS_SIZE=256M
		FS_PACKAGES=btrfs-progs
		FS_UNORDERED=nobarrier
		FS_SERIAL='btrfs mounts one device of an fsid at a time'
		FS_FSCK='btrfs check --readonly'
		FS_CHECK='mount (log tree replay), walk, `btrfs check --readonly`' ;;
	gfs2)
		FS_CONFIG='CONFIG_GFS2_FS=y'
		# a single node without a cluster: lock_nolock, one 8 MB journal
		FS_MKFS='mkfs.gfs2 -O -q -p lock_nolock -j 1 -J 8'
		FS_SIZE=256M
		FS_MODULES=gfs2
		FS_PACKAGES=gfs2-utils
		FS_UNORDERED=nobarrier
		FS_FSCK='fsck.gfs2 -n'
		FS_CHECK='mount (journal replay), walk, `fsck.gfs2 -n`' ;;
	reiserfs)
		FS_CONFIG='CONFIG_REISERFS_FS=y'
		FS_MKFS='mkfs.reiserfs -q -f -f'
		FS_MODULES=reiserfs
		FS_PACKAGES=reiserfsprogs
		FS_UNORDERED=barrier=none
		FS_FSCK='reiserfsck --check --yes --quiet'
		FS_CHECK='mount (journal replay), walk, `reiserfsck --check`' ;;
	nilfs2)
		FS_CONFIG='CONFIG_NILFS2_FS=y'
		# log-structured: a crash state is the last checkpoint it finds
		FS_MKFS='mkfs.nilfs2 -q -f'
		FS_SIZE=256M
		FS_MODULES=nilfs2
		FS_PACKAGES=nilfs-tools
		FS_MOUNT=nogc	# no cleaner daemon: its writes are not the workload's
		FS_UNORDERED=nobarrier
		FS_CHECK='mount (roll-forward), walk every file; nilfs2 has no fsck, the fsync oracle is its real test' ;;
	vfat)
		FS_CONFIG='CONFIG_VFAT_FS=y CONFIG_NLS_CODEPAGE_437=y CONFIG_NLS_ASCII=y CONFIG_NLS_UTF8=y'
		FS_MKFS='mkfs.vfat'
		FS_MODULES='vfat nls_cp437 nls_ascii nls_utf8'
		FS_PACKAGES=dosfstools
		FS_MOUNT=discard	# fat was in the 2010 series for its discards
		FS_UNORDERED_WHY='fat has no barrier option: it never orders its writes'
		FS_FSCK='fsck.vfat -n'
		FS_NO_PROMISE='fat has no journal: after a crash while mounted its dirty bit is set and fsck may find lost clusters'
		FS_CHECK='mount, walk, `fsck.vfat -n`; its fsck failures are expected (no journal), the oracle and the mount are what count' ;;
	ocfs2)
		FS_CONFIG='CONFIG_OCFS2_FS=y CONFIG_OCFS2_FS_O2CB=y'
		# local mode: no cluster stack, one node slot
		FS_MKFS='mkfs.ocfs2 -q -M local -N 1 -J size=8M'
		FS_SIZE=256M
		FS_MODULES='ocfs2 ocfs2_stack_o2cb'
		FS_PACKAGES=ocfs2-tools
		# jbd2 flushes only with barrier=1: ocfs2's default is off
		FS_ORDERED=barrier=1
		FS_UNORDERED=barrier=0
		FS_SERIAL='ocfs2 names its debugfs folder by uuid'
		FS_FSCK='fsck.ocfs2 -fn'
		FS_CHECK='mount (journal replay), walk, `fsck.ocfs2 -fn`' ;;
	f2fs)
		FS_CONFIG='CONFIG_F2FS_FS=y'
		FS_MKFS='mkfs.f2fs -q -f'
		FS_SIZE=256M
		FS_MODULES=f2fs
		FS_PACKAGES=f2fs-tools
		FS_UNORDERED=nobarrier
		FS_FSCK='fsck.f2fs --dry-run'
		FS_CHECK='mount (roll-forward recovery), walk, `fsck.f2fs --dry-run`' ;;
	xfs-logdev)
		fl_fs xfs
		FS_DEVICES=2 FS_SIZE1=64M
		FS_MKFS='mkfs.xfs -q -f -l logdev={1}'
		FS_MOUNT='nouuid,logdev={1}'
		FS_FSCK='xfs_repair -n -l {1}'
		FS_CHECK='mount (log recovery from the log device), walk, `xfs_repair -n -l`' ;;
	ext4-journal)
		fl_fs ext4
		FS_DEVICES=2 FS_SIZE1=32M
		# the journal's block size is the filesystem's
		FS_MKFS1='mke2fs -q -F -O journal_dev -b 4096'
		FS_MKFS='mkfs.ext4 -q -F -b 4096 -J device={1}'
		FS_MOUNT='journal_path={1}'
		FS_FSCK='e2fsck -fn -j {1}'
		FS_CHECK='mount (replay of the external journal), walk, `e2fsck -fn -j`' ;;
	btrfs-raid1)
		fl_fs btrfs
		FS_DEVICES=2 FS_SIZE1=$FS_SIZE
		# data and metadata mirrored: each block on both devices
		FS_MKFS='mkfs.btrfs -q -f -d raid1 -m raid1 {1}'
		FS_MOUNT='device={1}'
		FS_CHECK='mount (log tree replay, both mirrors), walk, `btrfs check --readonly`' ;;
	*)
		return 1 ;;
	esac
}

# fl_fs_dev1 STRING DEV1: STRING with each {1} replaced by DEV1, the path
# of the fl_fs'd filesystem's second device
fl_fs_dev1() {
	echo "${1//\{1\}/$2}"
}

# fl_fs_options default|on|off: the mount options of the fl_fs'd filesystem
# with its ordering as its defaults leave it, switched on or switched off;
# fails when it cannot switch it off
fl_fs_options() {
	local opts=$FS_MOUNT
	case $1 in
	on) opts=$opts,$FS_ORDERED ;;
	off) [ -n "$FS_UNORDERED" ] || return 1
	     opts=$opts,$FS_UNORDERED ;;
	esac
	opts=${opts#,}
	echo "${opts%,}"
}

# fl_fs_missing_module KROOT KVER: the first of the fl_fs'd filesystem's
# modules that Debian's kernel unpacked at KROOT lacks; fails when none is
# missing.  It reads modules.dep there: nothing is loaded.
fl_fs_missing_module() {
	local m
	for m in $FS_MODULES; do
		if ! modprobe -d "$1" -S "$2" --show-depends "$m" >/dev/null 2>&1; then
			echo "$m"
			return 0
		fi
	done
	return 1
}
