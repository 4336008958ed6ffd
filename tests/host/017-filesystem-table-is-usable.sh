#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# qemu/filesystems.sh, the one table crashtest, the matrix and the guest
# read, says things that hold without a kernel: each filesystem's mkfs
# makes an image its own checker calls clean, its Debian modules exist in
# Debian's kernel, and the ordering switches are the ones the 6.1 sources
# take.  crashtest refuses what a filesystem cannot do with exit 77 and a
# reason, and a bad command line with exit 2.
. "$FLUSHLOG_TOP/tests/common.sh"
. "$FLUSHLOG_TOP/qemu/filesystems.sh"
. "$FLUSHLOG_TOP/scripts/lib.sh"
# asan: no

# shellcheck disable=SC2086 # the list is words
"$FLUSHLOG_TOP/scripts/install-deps" fs $FL_FILESYSTEMS ||
	_skip "the filesystems' tools cannot be installed here"
kroot=$("$FLUSHLOG_TOP/qemu/fetch-kernel" 2>/dev/null) || _skip "no Debian kernel to look into"
kver=$(fl_kernel_version)

for fs in $FL_FILESYSTEMS; do
	fl_fs "$fs" || _fail "fl_fs $fs failed"
	truncate -s "$FS_SIZE" "$TEST_TMP/$fs.img"
	# shellcheck disable=SC2086 # commands are words
	$FS_MKFS "$TEST_TMP/$fs.img" >"$TEST_TMP/$fs.mkfs" 2>&1 ||
		_fail "$fs: '$FS_MKFS' failed: $(tail -n 2 "$TEST_TMP/$fs.mkfs")"
	if [ -n "$FS_FSCK" ]; then
		# shellcheck disable=SC2086
		$FS_FSCK "$TEST_TMP/$fs.img" </dev/null >"$TEST_TMP/$fs.fsck" 2>&1 ||
			_fail "$fs: '$FS_FSCK' calls a fresh image unclean: $(tail -n 3 "$TEST_TMP/$fs.fsck")"
	fi
	if m=$(fl_fs_missing_module "$kroot" "$kver"); then
		_fail "$fs: Debian's kernel $kver has no module $m"
	fi
	echo "$fs: $FS_MKFS, $FS_SIZE; on: '$(fl_fs_options on)', off: '$(fl_fs_options off || echo "none: $FS_UNORDERED_WHY")'"
	rm -f "$TEST_TMP/$fs.img"
done

# the entries over two devices: device 1 made first, {1} its path
for fs in $FL_FILESYSTEMS_2DEV; do
	fl_fs "$fs" || _fail "fl_fs $fs failed"
	if [ "$FS_DEVICES" != 2 ] || [ -z "$FS_SIZE1" ]; then
		_fail "$fs: FS_DEVICES '$FS_DEVICES', FS_SIZE1 '$FS_SIZE1'"
	fi
	img1=$TEST_TMP/$fs.1.img
	truncate -s "$FS_SIZE" "$TEST_TMP/$fs.img"
	truncate -s "$FS_SIZE1" "$img1"
	if [ -n "$FS_MKFS1" ]; then
		# shellcheck disable=SC2086 # commands are words
		$FS_MKFS1 "$img1" >"$TEST_TMP/$fs.mkfs" 2>&1 ||
			_fail "$fs: '$FS_MKFS1' failed: $(tail -n 2 "$TEST_TMP/$fs.mkfs")"
	fi
	# files stand in for block devices where the tools take them
	case $fs in
	ext4-journal) echo "$fs: mke2fs -J device= takes a block device only: made in the guest (129)" ;;
	*)	# shellcheck disable=SC2046 # commands are words
		$(fl_fs_dev1 "$FS_MKFS" "$img1") "$TEST_TMP/$fs.img" >>"$TEST_TMP/$fs.mkfs" 2>&1 ||
			_fail "$fs: '$FS_MKFS' failed: $(tail -n 2 "$TEST_TMP/$fs.mkfs")" ;;
	esac
	case $fs in
	ext4-journal) ;;
	btrfs-raid1) echo "$fs: btrfs check finds device 1 among block devices only: checked in the guest (130)" ;;
	*)	# shellcheck disable=SC2046
		$(fl_fs_dev1 "$FS_FSCK" "$img1") "$TEST_TMP/$fs.img" </dev/null >"$TEST_TMP/$fs.fsck" 2>&1 ||
			_fail "$fs: '$FS_FSCK' calls a fresh image unclean: $(tail -n 3 "$TEST_TMP/$fs.fsck")" ;;
	esac
	[[ $FS_MOUNT == *"{1}"* ]] || _fail "$fs: its mount options do not name device 1"
	echo "$fs: $FS_MKFS1${FS_MKFS1:+, then }$FS_MKFS; mount: '$FS_MOUNT'"
	rm -f "$TEST_TMP/$fs.img" "$img1"
done

# the switches, as fs/*/super.c spell them
expect_options() {	# FS ORDERING EXPECTED
	local got
	fl_fs "$1"
	got=$(fl_fs_options "$2") || got='(none)'
	[ "$got" = "$3" ] || _fail "$1 ordering $2: options '$got', expected '$3'"
}
expect_options ext4 off barrier=0
expect_options ext3 on ''
expect_options xfs off '(none)'
expect_options xfs default nouuid
expect_options btrfs off nobarrier
expect_options gfs2 off nobarrier
expect_options reiserfs off barrier=none
expect_options nilfs2 off nogc,nobarrier
expect_options vfat off '(none)'
expect_options vfat on discard
expect_options ocfs2 default ''
expect_options ocfs2 on barrier=1
expect_options ocfs2 off barrier=0
expect_options f2fs off nobarrier

rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --fs xfs --ordering off --out "$TEST_TMP/xfs-off" \
	>"$TEST_TMP/out" 2>&1 || rc=$?
((rc == 77)) || _fail "crashtest --fs xfs --ordering off exited $rc, expected 77 (not run here): $(cat "$TEST_TMP/out")"
grep -q '^not run: xfs cannot switch its ordering off: .*nobarrier' "$TEST_TMP/xfs-off/not-run.txt" ||
	_fail "no reason in not-run.txt: $(cat "$TEST_TMP/xfs-off/not-run.txt")"
cat "$TEST_TMP/xfs-off/not-run.txt"
_expect_exit 2 "$FLUSHLOG_TOP/scripts/crashtest" --fs zfs
_expect_exit 2 "$FLUSHLOG_TOP/scripts/crashtest" --ordering sideways
_expect_exit 2 "$FLUSHLOG_TOP/scripts/crashtest" --recheck "$TEST_TMP"
mkdir -p "$TEST_TMP/run" && touch "$TEST_TMP/run/run.env" "$TEST_TMP/run/log.img"
_expect_exit 2 "$FLUSHLOG_TOP/scripts/crashtest" --recheck "$TEST_TMP/run" --out "$TEST_TMP/run"
[ -f "$TEST_TMP/run/log.img" ] || _fail "--recheck into its own folder removed the log it checks"
_expect_exit 2 "$FLUSHLOG_TOP/scripts/matrix" --fs "ext4 zfs"
