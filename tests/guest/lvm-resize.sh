#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: FS (ext4 or xfs) on flushlog over an lvm2 logical volume,
# grown online while logging: lvextend, a reload of flushlog's table with
# the new length, the filesystem grown mounted.  The log goes on (one
# uuid), holds a RESIZE entry with the new size, replays to the volume
# byte for byte, and the states of the resize and at every mark pass the
# filesystem's checker (qemu/check-state).  The host test (133) says why.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

fs=${1:-ext4}
pv=/dev/flushlog/pv
log=/dev/flushlog/log
mnt=$TMPDIR/mnt
mkdir -p "$mnt"
case $fs in
# big: MiB of the file written once grown (ext4: as large as the volume
# was, so that some of it lands in the new space).  xfs runs, but test
# 133 does not ask for it: the prefix states from xfs_growfs's commit to
# the next flush fail xfs_repair -n after their mount ("would write
# modified primary superblock"): growfs writes the old AGs' secondary
# super blocks without a flush, and repair trusts them over the primary
ext4) size=64M grow=64M big=64 mkfs=(mkfs.ext4 -q) growfs=(resize2fs /dev/mapper/fl) ;;
xfs) size=320M grow=128M big=96 mkfs=(mkfs.xfs -q -f) growfs=(xfs_growfs "$mnt") ;;
*) _fail "no such filesystem '$fs'" ;;
esac

# lvm2 without udev, lvmetad, dmeventd or a writable /etc: a configuration
# of its own, which sees the PV's disk alone; device-mapper makes the
# nodes itself (DM_DISABLE_UDEV, as qemu/init sets it)
export LVM_SYSTEM_DIR=$TMPDIR/lvm LVM_SUPPRESS_FD_WARNINGS=1
mkdir -p "$LVM_SYSTEM_DIR"
cat >"$LVM_SYSTEM_DIR/lvm.conf" <<EOC
devices {
	use_devicesfile = 0
	obtain_device_list_from_udev = 0
	filter = [ "a|^$(readlink -f "$pv")\$|", "r|.*|" ]
}
global {
	use_lvmpolld = 0
}
activation {
	udev_sync = 0
	udev_rules = 0
	verify_udev_operations = 1
	monitoring = 0
}
backup {
	backup = 0
	archive = 0
}
EOC
# _lvm ARGS...: an lvm2 command, its output shown only if it fails (it
# warns on every change that its metadata is not backed up)
_lvm() {
	lvm "$@" >"$TMPDIR/lvm.out" 2>&1 || { cat "$TMPDIR/lvm.out"; _fail "lvm $*"; }
}
_lvm pvcreate -y "$pv"
_lvm vgcreate flvg "$pv"
_lvm lvcreate -y -n lv -L "$size" flvg
lv=/dev/mapper/flvg-lv
[ -b "$lv" ] || _fail "lvcreate made no $lv"
sz=$(blockdev --getsz "$lv")

# workload ROUND: files written and fsync'd, a mark after each
workload() {
	local i
	for i in 1 2 3 4; do
		mkdir -p "$mnt/r$1/d$i"
		dd if=/dev/urandom of="$mnt/r$1/d$i/f" bs=64k count=$((i * 8)) conv=fsync status=none
		echo "round $1 line $i" >>"$mnt/journal.txt"
		sync "$mnt/journal.txt"
		_flushlog_mark fl "r$1-$i" >/dev/null
		mv "$mnt/r$1/d$i/f" "$mnt/r$1/d$i/g"
	done
}

_flushlog_init fl "$lv" "$log"
"${mkfs[@]}" /dev/mapper/fl >/dev/null
sync /dev/mapper/fl
_flushlog_mark fl mkfs-done >/dev/null
mount -t "$fs" /dev/mapper/fl "$mnt"
workload 1
uuid=$(_flushlog_field fl log)

echo "== lvextend -L +$grow, fl's table reloaded with the new length, $fs grown online"
_lvm lvextend -L "+$grow" flvg/lv
new=$(blockdev --getsz "$lv")
((new > sz)) || _fail "lvextend left $lv at $new sectors"
dmsetup reload fl --table "0 $new $(dmsetup table fl | cut -d' ' -f3-)"
dmsetup resume fl
[ "$(blockdev --getsz /dev/mapper/fl)" = "$new" ] || _fail "fl did not grow to $new sectors"
[ "$(_flushlog_field fl log)" = "$uuid" ] ||
	_fail "the reload that grew fl started log $(_flushlog_field fl log) over $uuid"
"${growfs[@]}" >"$TMPDIR/growfs.out" 2>&1 || { cat "$TMPDIR/growfs.out"; _fail "$fs did not grow online"; }
_flushlog_mark fl grown >/dev/null
workload 2
dd if=/dev/urandom of="$mnt/big" bs=1M count="$big" conv=fsync status=none
_flushlog_mark fl big >/dev/null
df -k "$mnt" | tail -n 1
umount "$mnt"
echo "status: $(_flushlog_status fl)"
_flushlog_remove fl

echo "== one log, a RESIZE entry, replay equals the volume"
"$FLUSHLOG" info --json "$log" >"$TMPDIR/info.json" || _fail "the log does not read: $(cat "$TMPDIR/info.json")"
[ "$(jq -r .uuid "$TMPDIR/info.json")" = "$uuid" ] ||
	_fail "the log is $(jq -r .uuid "$TMPDIR/info.json"), status said $uuid before the resize"
jq -e '.clean and .order_verified and (.full | not)' "$TMPDIR/info.json" >/dev/null ||
	_fail "the log: $(cat "$TMPDIR/info.json")"
"$FLUSHLOG" dump --json "$log" >"$TMPDIR/dump.json" || _fail "the log does not dump: $(tail -n 2 "$TMPDIR/dump.json")"
resizes=$(jq -c 'select(.op == "resize") | {seq, device, sector}' "$TMPDIR/dump.json")
jq -s -e --argjson s "$new" '[.[] | select(.op == "resize")] |
	length == 1 and .[0].sector == $s and .[0].device == 0' "$TMPDIR/dump.json" >/dev/null ||
	_fail "expected one resize entry to $new sectors on device 0, the log has: ${resizes:-none}"
# between the last mark before the resize and the first after
jq -s -e '(map(select(.op == "mark" and .label == "r1-4"))[0].seq) as $before |
	(map(select(.op == "mark" and .label == "grown"))[0].seq) as $after |
	(map(select(.op == "resize"))[0].seq) as $r | $before < $r and $r < $after' "$TMPDIR/dump.json" >/dev/null ||
	_fail "the resize entry is not between marks r1-4 and grown: ${resizes}"
"$FLUSHLOG" replay -q -o "$TMPDIR/replay.img" "$log"
cmp "$lv" "$TMPDIR/replay.img" || _fail "the replay differs from the volume"
rm -f "$TMPDIR/replay.img"
echo "log $uuid: $(jq -r '"\(.entries) entries, \(.crash_points) crash points"' "$TMPDIR/info.json"); resize to $new sectors: $resizes"

# Every state of the resize (from the last mark before it to the first
# after: lvextend, the reload, the filesystem grown), and every mark's
# and the end's from mkfs on (each state takes seconds under TCG: all 80
# would take minutes)
_check() {
	"$FLUSHLOG" check -k -w "$TMPDIR" "$@" "$log" -- \
		"$FLUSHLOG_TOP/qemu/check-state" "$fs" {} >"$TMPDIR/check.out" 2>&1 ||
		{ tail -n 30 "$TMPDIR/check.out"; _fail "$fs: states fail ($*)"; }
	echo "$*: $(tail -n 1 "$TMPDIR/check.out")"
}
echo "== every state of the resize, and at every mark, passes $fs's checker"
_check --from mark:r1-4 --to mark:grown
_check --from mark:mkfs-done --points mark,end
_lvm vgchange -an flvg
