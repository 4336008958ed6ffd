#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest, for each FS given: qemu/check-state of a state of FS, a two-device
# filesystem (qemu/filesystems.sh), left with a log to recover, while
# another mount namespace is made, as a concurrent checker makes one for
# its fsck.  The state is paused while mounted (a stand-in fl-workload,
# the oracle's hook), the namespace made then, and the state unmounted
# and checked while the namespace lives.  The namespace must not hold the
# state's mount, and the check must pass.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

. "$FLUSHLOG_TOP/qemu/filesystems.sh"

check_beside_a_namespace() {
	local fs=$1 work size0 size1 d0 d1 i rc=0 checker holder
	fl_fs "$fs"
	work=$(mktemp -d)
	size0=$(numfmt --from=iec "$FS_SIZE") size1=$(numfmt --from=iec "$FS_SIZE1")
	truncate -s $((size0 + size1)) "$work/state.img"
	d0=$(losetup -f --show --sizelimit "$size0" "$work/state.img")
	d1=$(losetup -f --show -o "$size0" --sizelimit "$size1" "$work/state.img")
	[ -z "$FS_MKFS1" ] || ${FS_MKFS1//\{1\}/$d1} "$d1" >/dev/null
	${FS_MKFS//\{1\}/$d1} "$d0" >/dev/null
	# a state with a log to recover: files made, the log forced, then a
	# shutdown, so that nothing is checkpointed and no unmount record written
	mkdir "$work/mnt"
	mount -t "$FS_TYPE" -o "$(fl_fs_dev1 "$FS_MOUNT" "$d1")" "$d0" "$work/mnt"
	for i in $(seq 20); do echo "file $i" >"$work/mnt/f$i"; done
	# (FS_IOC_SHUTDOWN, the ioctl fstests' _scratch_shutdown uses: xfs, ext4)
	xfs_io -x -c 'shutdown -f' "$work/mnt"
	umount "$work/mnt"
	losetup -d "$d0" "$d1"

	# the oracle's hook: says the state is mounted, waits to be let go
	mkdir "$work/bin"
	cat >"$work/bin/fl-workload" <<EOS
#!/bin/sh
touch "$work/mounted"
while [ ! -e "$work/go" ]; do sleep 0.1; done
EOS
	chmod +x "$work/bin/fl-workload"

	rc=0
	PATH=$work/bin:$PATH FLUSHLOG_ORACLE=x FLUSHLOG_DEVICES="0+$((size0 / 512)) $((size0 / 512))+$((size1 / 512))" \
		"$FLUSHLOG_TOP/qemu/check-state" "$fs" "$work/state.img" >"$work/check.out" 2>&1 &
	checker=$!
	while [ ! -e "$work/mounted" ]; do
		kill -0 $checker 2>/dev/null || { cat "$work/check.out"; _fail "check-state ended before its state was mounted"; }
		sleep 0.1
	done
	# a concurrent checker's namespace, made while the state is mounted;
	# the guest's root is 9p, so a mount of FS_TYPE there is the state's
	unshare -m --propagation private sh -c \
		"grep -c ' $FS_TYPE ' /proc/self/mountinfo >'$work/copied' || true; touch '$work/ns'; exec sleep 100000" &
	holder=$!
	while [ ! -e "$work/ns" ]; do
		kill -0 $holder 2>/dev/null || _fail "no mount namespace could be made (unshare -m)"
		sleep 0.1
	done
	touch "$work/go"
	wait $checker || rc=$?
	kill $holder
	wait $holder 2>/dev/null || true
	cat "$work/check.out"
	echo "$fs: mounts of $FS_TYPE in the other namespace: $(cat "$work/copied")"
	[ "$(cat "$work/copied")" = 0 ] || _fail "$fs: the other namespace holds the state's mount"
	[ "$rc" = 0 ] || _fail "$fs: check-state failed (exit $rc) while another namespace lived"
	echo "$fs: check-state passed beside another namespace"
}

for fs in "$@"; do
	check_beside_a_namespace "$fs"
done
