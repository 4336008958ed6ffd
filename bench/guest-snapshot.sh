#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest (make bench): what qemu/check-state's copy-on-write costs a
# state, against copying the state: ROUNDS (argument, default 20) times a
# read-only loop device over an 8 GiB image with 256 MiB of data, a loop
# device over a sparse copy-on-write file, a non-persistent dm snapshot of
# them, and all of it torn down again; then a sparse copy of the image.
# Prints "snapshot MS-PER-STATE" and "copy MS-PER-STATE".
set -euo pipefail
rounds=${1:-20}
img=$TMPDIR/snap-origin.img
truncate -s 8G "$img"
for ((i = 0; i < 256; i++)); do
	head -c 1M /dev/urandom | dd of="$img" bs=1M seek=$((i * 32)) conv=notrunc status=none
done

t0=$(date +%s%N)
for ((i = 0; i < rounds; i++)); do
	origin=$(losetup -r -f --show "$img")
	truncate -s 8G "$TMPDIR/cow"
	cow=$(losetup -f --show "$TMPDIR/cow")
	dmsetup create bench-snap --table "0 $(blockdev --getsz "$origin") snapshot $origin $cow N 8"
	dmsetup remove bench-snap
	losetup -d "$cow" "$origin"
	rm -f "$TMPDIR/cow"
done
t1=$(date +%s%N)
echo "snapshot $(((t1 - t0) / 1000000 / rounds))"

t0=$(date +%s%N)
for ((i = 0; i < 3; i++)); do
	cp --sparse=always "$img" "$TMPDIR/copy.img"
	rm -f "$TMPDIR/copy.img"
done
t1=$(date +%s%N)
echo "copy $(((t1 - t0) / 1000000 / 3))"
rm -f "$img"
